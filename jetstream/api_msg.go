package jetstream

import (
	"errors"
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
	if aerr := deleteOutOfRange(s.store, cfg.Storage, req.Seq); aerr != nil {
		s.mu.Unlock()
		js.respondError(r, typ, aerr)
		return
	}
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

// deleteOutOfRange is nats-server's file store answer to deleting a
// sequence outside the stream's messages: past the last sequence "stream
// store EOF", before the first (or 0, or in an empty stream) "no message
// found", both as a failed delete (10057). A gap inside the range, and any
// sequence of a memory stream, is "sequence not found" (10043), which the
// caller reports.
func deleteOutOfRange(st store.StreamStore, storage api.StorageType, seq uint64) *api.ApiError {
	if storage != api.FileStorage {
		return nil
	}
	state := st.State()
	switch {
	case seq > state.LastSeq:
		return api.Errorf(api.ErrStreamMsgDeleteFailed, "stream store EOF")
	case seq == 0 || seq < state.FirstSeq || state.Msgs == 0:
		return api.Errorf(api.ErrStreamMsgDeleteFailed, "no message found")
	}
	return nil
}
