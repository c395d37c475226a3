package jetstream

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// apiRequest is a copied API request. args is what follows the operation in
// the subject: the stream name, and for some operations more tokens.
type apiRequest struct {
	subject, reply string
	hdr, data      []byte
	args           string
	client         uint64 // the requesting client's id, 0 inside the server
}

// apiHandler serves one API operation ("STREAM.INFO", "DIRECT.GET", …).
type apiHandler struct {
	op    string
	queue *workQueue
	fn    func(r *apiRequest)
}

// registerAPI routes $JS.API.<op>[.<args>] to fn, run on queue. The consumer
// manager registers its CONSUMER.* operations through it. Operations are
// matched on whole tokens, longest first. A nil fn marks an operation that
// a subscription of its own serves, so that handleAPI leaves it alone.
func (js *JetStream) registerAPI(op string, queue *workQueue, fn func(r *apiRequest)) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.handlers[op] = apiHandler{op: op, queue: queue, fn: fn}
}

func (js *JetStream) registerStreamAPI() {
	js.registerAPI("INFO", js.mgmt, js.apiAccountInfo)
	js.registerAPI("STREAM.CREATE", js.mgmt, js.apiStreamCreate)
	js.registerAPI("STREAM.UPDATE", js.mgmt, js.apiStreamUpdate)
	js.registerAPI("STREAM.INFO", js.mgmt, js.apiStreamInfo)
	js.registerAPI("STREAM.DELETE", js.mgmt, js.apiStreamDelete)
	js.registerAPI("STREAM.PURGE", js.mgmt, js.apiStreamPurge)
	js.registerAPI("STREAM.NAMES", js.mgmt, js.apiStreamNames)
	js.registerAPI("STREAM.LIST", js.mgmt, js.apiStreamList)
	js.registerAPI("STREAM.MSG.GET", js.gets, js.apiMsgGet)
	js.registerAPI("STREAM.MSG.DELETE", js.mgmt, js.apiMsgDelete)
	js.registerAPI("DIRECT.GET", js.gets, js.apiDirectGet)
	// Moving a replica needs a cluster (registerClusterAPI replaces it).
	for op, typ := range map[string]string{"STREAM.PEER.REMOVE": api.TypeStreamRemovePeer, "STREAM.PEER.EVACUATE": api.TypeStreamEvacuatePeer} {
		js.registerAPI(op, js.mgmt, func(r *apiRequest) {
			js.respondError(r, typ, api.NewError(api.ErrClusterRequired))
		})
	}
	js.registerSnapshotAPI()
}

// maxOpTokens is the most tokens an operation name has (STREAM.MSG.GET).
const maxOpTokens = 3

// route finds the handler for an API subject; ok is false for an unknown
// operation, which nats-server leaves unanswered.
func (js *JetStream) route(subj string) (h apiHandler, args string, ok bool) {
	rest := strings.TrimPrefix(subj, api.Prefix)
	if len(rest) == len(subj) {
		return h, "", false
	}
	// Offsets of the first maxOpTokens token ends.
	var ends [maxOpTokens]int
	n := 0
	for i := 0; i < len(rest) && n < maxOpTokens; i++ {
		if rest[i] == '.' {
			ends[n] = i
			n++
		}
	}
	if n < maxOpTokens {
		ends[n] = len(rest)
		n++
	}
	js.mu.RLock()
	defer js.mu.RUnlock()
	for k := n - 1; k >= 0; k-- {
		if h, ok = js.handlers[rest[:ends[k]]]; ok {
			if ends[k] < len(rest) {
				args = rest[ends[k]+1:]
			}
			return h, args, true
		}
	}
	return h, "", false
}

// handleAPI is the $JS.API.> subscription handler. It runs on the
// publisher's goroutine: it only copies the request and queues it.
// nats-server leaves an unknown operation unanswered, so the client waits
// for its timeout; jetwal answers it with an error at once.
func (js *JetStream) handleAPI(m *server.Msg) {
	h, args, ok := js.route(m.Subject)
	if !ok {
		if m.Reply != "" {
			js.respondError(&apiRequest{subject: m.Subject, reply: m.Reply}, api.TypeError,
				api.Errorf(api.ErrBadRequest, "unknown JetStream API request %q", m.Subject))
		}
		return
	}
	if h.fn == nil {
		return // an operation with a subscription of its own
	}
	if js.cl != nil && !js.answers(h.op, args) {
		return // another server of the cluster answers
	}
	r := &apiRequest{
		subject: strings.Clone(m.Subject),
		reply:   strings.Clone(m.Reply),
		hdr:     bytes.Clone(m.Header),
		data:    bytes.Clone(m.Data),
		args:    strings.Clone(args),
		client:  m.ClientID,
	}
	// Requests about one stream run in order; requests about different
	// streams (and the account-wide ones) do not wait for each other.
	key, _, _ := strings.Cut(r.args, ".")
	if !h.queue.submitKey(key, func() { js.serve(h, r) }) {
		js.log.Warn("JetStream API queue full, request dropped", "subject", r.subject)
	}
}

// serve runs one API handler. A panic in it is a bug, but it must cost only
// that request: it is logged with its stack and answered with a 500 error,
// and the queue goes on serving everyone else.
func (js *JetStream) serve(h apiHandler, r *apiRequest) {
	defer func() {
		if p := recover(); p != nil {
			js.log.Error("JetStream API handler panicked", "subject", r.subject, "panic", p, "stack", string(debug.Stack()))
			js.respondError(r, api.TypeError, &api.ApiError{Code: 500, ErrCode: api.ErrStreamGeneral,
				Description: "internal error serving the request"})
		}
	}()
	if js.refuseLevel(r) {
		return
	}
	h.fn(r)
}

// respond sends an API response and counts it; failed marks an error reply.
func (js *JetStream) respond(r *apiRequest, v any, failed bool) {
	b, err := json.Marshal(v)
	if err != nil {
		js.log.Error("encoding API response", "subject", r.subject, "error", err)
		return
	}
	if failed {
		b = js.hidePaths(b)
	}
	// Counted before the reply goes out, so a client that got its reply
	// finds the request in the stats (jsz).
	js.apiTotal.Add(1)
	if failed {
		js.apiErrors.Add(1)
	}
	if r.reply != "" {
		js.srv.Publish(r.reply, "", nil, b)
	}
	js.auditAPI(r, b)
}

// respondError sends a response of type typ carrying only aerr.
func (js *JetStream) respondError(r *apiRequest, typ string, aerr *api.ApiError) {
	js.respond(r, api.Response{Type: typ, Error: aerr}, true)
}

// isEmptyRequest reports whether a request body carries nothing: no bytes,
// only whitespace, "{}" or "null".
func isEmptyRequest(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return true
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false // a lone "{" is not empty: it is invalid JSON
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// decodeRequest decodes an optional JSON body into v. An empty body leaves
// v as it is.
func decodeRequest(b []byte, v any) *api.ApiError {
	if isEmptyRequest(b) {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err)
	}
	return nil
}

// bodyRequired and bodyOptional say whether streamRequest refuses an
// empty request body as a bad request.
const (
	bodyRequired = true
	bodyOptional = false
)

// streamRequest is the prologue of a handler about one stream: it decodes
// the body into req (an empty body is a bad request when required), looks
// up the stream the subject names, and answers any failure itself, in
// which case it returns nil.
func (js *JetStream) streamRequest(r *apiRequest, typ string, req any, required bool) *stream {
	if required && isEmptyRequest(r.data) {
		js.respondError(r, typ, api.NewError(api.ErrBadRequest))
		return nil
	}
	if aerr := decodeRequest(r.data, req); aerr != nil {
		js.respondError(r, typ, aerr)
		return nil
	}
	s := js.lookup(streamArg(r))
	if s == nil {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
	}
	return s
}

// streamArg returns the stream name of a request whose args must be exactly
// one token, or "".
func streamArg(r *apiRequest) string {
	if r.args == "" || strings.IndexByte(r.args, '.') >= 0 {
		return ""
	}
	return r.args
}

// hidePaths removes the store directory from an encoded error reply: a
// reply never tells a client where the server keeps its files. Paths in the
// store read as relative to it.
func (js *JetStream) hidePaths(b []byte) []byte {
	dir, err := json.Marshal(filepath.Clean(js.cfg.StoreDir) + string(filepath.Separator))
	if err != nil || len(dir) <= 3 {
		return b
	}
	dir = dir[1 : len(dir)-1] // as it appears inside a JSON string
	if !bytes.Contains(b, dir) {
		return b
	}
	return bytes.ReplaceAll(b, dir, nil)
}
