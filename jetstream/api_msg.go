package jetstream

import (
	"errors"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// loadForGet loads the message a MSG.GET or DIRECT.GET request names:
// by sequence, the last on a subject, or the next on a subject from a
// sequence on. It reports a bad request or a missing message.
func loadForGet(st store.StreamStore, req *api.MsgGetRequest, m *store.Msg) (bad string, err error) {
	switch {
	case req.Seq > 0 && req.LastFor != "":
		return "seq and last_by_subj can not both be set", nil
	case req.LastFor != "" && req.NextFor != "":
		return "last_by_subj and next_by_subj can not both be set", nil
	case req.LastFor != "":
		if !subject.ValidFilter(req.LastFor) {
			return "invalid subject " + req.LastFor, nil
		}
		return "", st.LoadLast(req.LastFor, m)
	case req.NextFor != "":
		if !subject.ValidFilter(req.NextFor) {
			return "invalid subject " + req.NextFor, nil
		}
		err := st.LoadNext(req.NextFor, max(req.Seq, 1), m)
		if errors.Is(err, store.ErrEOF) {
			err = store.ErrNotFound
		}
		return "", err
	case req.Seq > 0:
		return "", st.Load(req.Seq, m)
	}
	return "a seq, last_by_subj or next_by_subj is required", nil
}

// apiMsgGet serves STREAM.MSG.GET.<name>.
func (js *JetStream) apiMsgGet(r *apiRequest) {
	const typ = api.TypeMsgGet
	if isEmptyRequest(r.data) {
		js.respondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	var req api.MsgGetRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	if req.Batch > 0 || len(req.MultiLastFor) > 0 || req.StartTime != nil {
		js.respondError(r, typ, api.Errorf(api.ErrBadRequest, "bad request: batch, multi_last and start_time are DIRECT.GET options"))
		return
	}
	s := js.lookup(streamArg(r))
	if s == nil {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	var m store.Msg
	bad, err := loadForGet(s.store, &req, &m)
	switch {
	case bad != "":
		js.respondError(r, typ, api.Errorf(api.ErrBadRequest, "bad request: %s", bad))
		return
	case errors.Is(err, store.ErrNotFound):
		js.respondError(r, typ, api.NewError(api.ErrNoMessageFound))
		return
	case err != nil:
		js.respondError(r, typ, api.Errorf(api.ErrStreamGeneral, "loading message: %v", err))
		return
	}
	sm := &api.StoredMsg{
		Subject:  m.Subject,
		Sequence: m.Seq,
		Header:   m.Header,
		Data:     m.Data,
		Time:     time.Unix(0, m.Time).UTC(),
	}
	if len(sm.Header) == 0 {
		sm.Header = nil
	}
	js.respond(r, api.MsgGetResponse{Response: api.Response{Type: typ}, Message: sm}, false)
}

// apiMsgDelete serves STREAM.MSG.DELETE.<name>; the message is erased
// (overwritten) unless no_erase is set.
func (js *JetStream) apiMsgDelete(r *apiRequest) {
	const typ = api.TypeMsgDelete
	if isEmptyRequest(r.data) {
		js.respondError(r, typ, api.NewError(api.ErrBadRequest))
		return
	}
	var req api.MsgDeleteRequest
	if aerr := decodeRequest(r.data, &req); aerr != nil {
		js.respondError(r, typ, aerr)
		return
	}
	s := js.lookup(streamArg(r))
	if s == nil {
		js.respondError(r, typ, api.NewError(api.ErrStreamNotFound))
		return
	}
	cfg := s.config()
	if cfg.Sealed {
		js.respondError(r, typ, api.NewError(api.ErrStreamSealed))
		return
	}
	if cfg.DenyDelete {
		js.respondError(r, typ, api.Errorf(api.ErrStreamMsgDeleteFailed, "message delete not permitted"))
		return
	}
	s.mu.Lock()
	err := s.store.Delete(req.Seq, !req.NoErase)
	s.mu.Unlock()
	switch {
	case errors.Is(err, store.ErrNotFound):
		js.respondError(r, typ, api.Errorf(api.ErrSequenceNotFound, "sequence %d not found", req.Seq))
	case err != nil:
		js.respondError(r, typ, api.Errorf(api.ErrStreamMsgDeleteFailed, "deleting message %d: %v", req.Seq, err))
	default:
		js.respond(r, api.MsgDeleteResponse{Response: api.Response{Type: typ}, Success: true}, false)
	}
}

// DIRECT.GET status replies.
var (
	hdrNotFound     = statusHeader(404, "Message Not Found")
	hdrEmptyRequest = statusHeader(408, "Empty Request")
	hdrBadRequest   = statusHeader(408, "Bad Request")
	hdrMalformed    = statusHeader(408, "Malformed Request")
)

// apiDirectGet serves DIRECT.GET.<name> (JSON body) and
// DIRECT.GET.<name>.<subject> (last message on subject). The reply is the
// stored message itself with Nats-Stream, Nats-Subject, Nats-Sequence and
// Nats-Time-Stamp headers, or a status-only 404/408. Streams without
// allow_direct do not answer, as nats-server has no responder for them.
func (js *JetStream) apiDirectGet(r *apiRequest) {
	if r.reply == "" {
		return
	}
	name, subj, _ := strings.Cut(r.args, ".")
	s := js.lookup(name)
	if s == nil {
		return
	}
	s.cfgMu.RLock()
	direct := s.cfg.AllowDirect
	s.cfgMu.RUnlock()
	if !direct {
		return
	}
	var req api.MsgGetRequest
	switch {
	case subj != "":
		if !isEmptyRequest(r.data) {
			if decodeRequest(r.data, &req) != nil {
				js.srv.Publish(r.reply, "", hdrMalformed, nil)
				return
			}
			if req.LastFor != "" || req.NextFor != "" || req.Seq != 0 {
				js.srv.Publish(r.reply, "", hdrBadRequest, nil)
				return
			}
		}
		req.LastFor = subj
	case isEmptyRequest(r.data):
		js.srv.Publish(r.reply, "", hdrEmptyRequest, nil)
		return
	default:
		if decodeRequest(r.data, &req) != nil {
			js.srv.Publish(r.reply, "", hdrMalformed, nil)
			return
		}
	}
	if req.Batch > 0 || len(req.MultiLastFor) > 0 || req.StartTime != nil || req.UpToSeq > 0 || req.UpToTime != nil {
		// Batched and multi-subject gets are not implemented.
		js.srv.Publish(r.reply, "", hdrBadRequest, nil)
		return
	}
	var m store.Msg
	bad, err := loadForGet(s.store, &req, &m)
	switch {
	case bad != "":
		js.srv.Publish(r.reply, "", hdrBadRequest, nil)
		return
	case err != nil:
		js.srv.Publish(r.reply, "", hdrNotFound, nil)
		return
	}
	orig := m.Header
	if req.NoHeaders {
		orig = nil
	}
	hdr := directGetHeader(make([]byte, 0, len(orig)+128+len(s.name)+len(m.Subject)), orig, s.name, m.Subject, m.Seq, m.Time)
	js.srv.Publish(r.reply, "", hdr, m.Data)
}
