package apiserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Request is a copied API request. Args is what follows the operation in
// the subject: the stream name, and for some operations more tokens.
type Request struct {
	Subject, Reply string
	Hdr, Data      []byte
	Args           string
	Client         uint64 // the requesting client's id, 0 inside the server
}

// IsEmpty reports whether a request body carries nothing: no bytes, only
// whitespace, "{}" or "null".
func IsEmpty(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return true
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false // a lone "{" is not empty: it is invalid JSON
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// Decode decodes an optional JSON body into v. An empty body leaves v as it
// is.
func Decode(b []byte, v any) *api.ApiError {
	if IsEmpty(b) {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err)
	}
	return nil
}

// StreamArg returns the stream name of a request whose args must be exactly
// one token, or "".
func StreamArg(r *Request) string {
	if r.Args == "" || strings.IndexByte(r.Args, '.') >= 0 {
		return ""
	}
	return r.Args
}

// bodyRequired and bodyOptional say whether decodeBody refuses an empty
// request body as a bad request.
const (
	bodyRequired = true
	bodyOptional = false
)

// decodeBody decodes r's body into req and reports whether it could; if
// not, it has answered: an empty body is a bad request when required, bad
// JSON is invalid.
func (s *Server) decodeBody(r *Request, typ string, req any, required bool) bool {
	if required && IsEmpty(r.Data) {
		s.RespondError(r, typ, api.NewError(api.ErrBadRequest))
		return false
	}
	if aerr := Decode(r.Data, req); aerr != nil {
		s.RespondError(r, typ, aerr)
		return false
	}
	return true
}
