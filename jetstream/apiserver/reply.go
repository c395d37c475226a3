package apiserver

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Respond encodes v and sends it as the reply to r; failed marks an error
// reply, from which the store directory is removed (HidePaths).
func (s *Server) Respond(r *Request, v any, failed bool) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding API response", "subject", r.Subject, "error", err)
		return
	}
	if failed {
		b = s.HidePaths(b)
	}
	s.ops.SendReply(r, b, failed)
}

// RespondError sends a response of type typ carrying only aerr.
func (s *Server) RespondError(r *Request, typ string, aerr *api.ApiError) {
	s.Respond(r, api.Response{Type: typ, Error: aerr}, true)
}

// HidePaths removes the store directory from an encoded error reply: a
// reply never tells a client where the server keeps its files. Paths in the
// store read as relative to it.
func (s *Server) HidePaths(b []byte) []byte {
	dir, err := json.Marshal(filepath.Clean(s.storeDir) + string(filepath.Separator))
	if err != nil || len(dir) <= 3 {
		return b
	}
	dir = dir[1 : len(dir)-1] // as it appears inside a JSON string
	if !bytes.Contains(b, dir) {
		return b
	}
	return bytes.ReplaceAll(b, dir, nil)
}
