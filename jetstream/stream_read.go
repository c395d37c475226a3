package jetstream

import (
	"errors"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// The read side of a stream, for the API handlers: they read a stream
// through these methods and never through its store. Store reads take no
// stream lock (stores are safe for concurrent readers).

// getMsg serves a MSG.GET request.
func (s *stream) getMsg(req *api.MsgGetRequest) (*api.StoredMsg, *api.ApiError) {
	if req.Batch > 0 || len(req.MultiLastFor) > 0 || req.StartTime != nil {
		return nil, api.Errorf(api.ErrBadRequest, "bad request: batch, multi_last and start_time are DIRECT.GET options")
	}
	var m store.Msg
	bad, err := s.loadForGet(req, &m)
	switch {
	case bad != "":
		return nil, api.Errorf(api.ErrBadRequest, "bad request: %s", bad)
	case errors.Is(err, store.ErrNotFound):
		return nil, api.NewError(api.ErrNoMessageFound)
	case err != nil:
		return nil, api.Errorf(api.ErrStreamGeneral, "loading message: %v", err)
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
	return sm, nil
}

// loadForGet loads the message a MSG.GET request names:
// by sequence, the last on a subject, or the next on a subject from a
// sequence on. It reports a bad request or a missing message.
func (s *stream) loadForGet(req *api.MsgGetRequest, m *store.Msg) (bad string, err error) {
	switch {
	case req.Seq > 0 && req.LastFor != "":
		return "seq and last_by_subj can not both be set", nil
	case req.LastFor != "" && req.NextFor != "":
		return "last_by_subj and next_by_subj can not both be set", nil
	case req.LastFor != "":
		// A subject no message can have ("$O.bucket.M.", as the object
		// store's get("") asks) finds none: 404 10037 as with
		// nats-server, not a bad request.
		if !subject.ValidFilter(req.LastFor) {
			return "", store.ErrNotFound
		}
		return "", s.store.LoadLast(req.LastFor, m)
	case req.NextFor != "":
		if !subject.ValidFilter(req.NextFor) {
			return "", store.ErrNotFound
		}
		err := s.store.LoadNext(req.NextFor, max(req.Seq, 1), m)
		if errors.Is(err, store.ErrEOF) {
			err = store.ErrNotFound
		}
		return "", err
	case req.Seq > 0:
		return "", s.store.Load(req.Seq, m)
	}
	return "a seq, last_by_subj or next_by_subj is required", nil
}

// loadDirect loads the message of a checked single DIRECT.GET request. Any
// failure, an invalid subject included, is a 404 for the caller.
func (s *stream) loadDirect(req *api.MsgGetRequest, m *store.Msg) error {
	switch {
	case req.NextFor != "":
		if !subject.ValidFilter(req.NextFor) {
			return store.ErrNotFound
		}
		return s.store.LoadNext(req.NextFor, max(req.Seq, 1), m)
	case req.LastFor != "":
		if !subject.ValidFilter(req.LastFor) {
			return store.ErrNotFound
		}
		return s.store.LoadLast(req.LastFor, m)
	}
	return s.store.Load(req.Seq, m)
}

// seqForTime is the first sequence stored at or after t.
func (s *stream) seqForTime(t time.Time) uint64 { return s.store.SeqForTime(t) }

// state is the stream's store state; details adds the deleted sequences.
func (s *stream) state(details bool) store.State {
	if details {
		return s.store.StateWithDeleted()
	}
	return s.store.State()
}

// subjectCounts counts the stream's messages per subject matching filter
// ("" = all).
func (s *stream) subjectCounts(filter string) map[string]store.SubjectState {
	return s.store.SubjectsState(filter)
}

// msgReader is the read-only part of a stream's store, for the replies
// that walk many messages (batched DIRECT.GET).
type msgReader interface {
	Load(seq uint64, m *store.Msg) error
	LoadNext(filter string, start uint64, m *store.Msg) error
	LoadPrev(filter string, seq uint64, m *store.Msg) error
	State() store.State
	SubjectsState(filter string) map[string]store.SubjectState
	NumPending(start uint64, filter string, lastPerSubject bool) uint64
	SeqForTime(t time.Time) uint64
}

// reader is the stream's store, read-only.
func (s *stream) reader() msgReader { return s.store }
