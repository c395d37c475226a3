package jetstream

import (
	"errors"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// The operation set of a stream: the only ways its state changes. Each
// takes the API's own request value (plain, serializable JSON types) and
// answers with the API error to send, so an API handler only decodes,
// calls one operation and encodes the answer; it takes no lock and calls
// no store. The operations are:
//
//   - publish: processPublish (stream.go), a captured message;
//   - purge and deleteMsg (this file);
//   - create, update and delete of the stream: JetStream.createStream,
//     updateStream and deleteStream (stream_admin.go);
//   - consumers: addConsumer and removeConsumer (stream_consumers.go);
//     a consumer's own state changes (deliver, ack, nak, term) are the
//     consumer's methods (consumer_ack.go, consumer_pull.go).
//
// In clustered mode a replicated stream's store turns each store write
// into a raft proposal, so these operations are also what a stream
// group's followers apply.

// purge serves a purge request: all messages, those of a filter, those
// below a sequence, or all but the newest keep. It returns the number
// removed and moves the consumers past what went.
func (s *stream) purge(req api.StreamPurgeRequest) (uint64, *api.ApiError) {
	if req.Sequence > 0 && req.Keep > 0 {
		return 0, api.Errorf(api.ErrBadRequest, "bad request: seq and keep can not both be set")
	}
	if req.Subject != "" && !subject.ValidFilter(req.Subject) {
		return 0, api.Errorf(api.ErrBadRequest, "bad request: invalid filter %q", req.Subject)
	}
	cfg := s.config()
	if cfg.Sealed {
		return 0, api.NewError(api.ErrStreamSealed)
	}
	if cfg.DenyPurge {
		return 0, api.Errorf(api.ErrStreamPurgeFailed, "stream purge not permitted")
	}
	filter := req.Subject
	if filter == ">" {
		filter = ""
	}
	purged, err := s.purgeLocked(filter, req.Sequence, req.Keep)
	if err != nil {
		return 0, api.Errorf(api.ErrStreamGeneral, "purge failed: %v", err)
	}
	s.consumersPurged(filter)
	return purged, nil
}

// purgeLocked removes messages under the publish lock, so it cannot
// interleave with the header checks of a publish.
func (s *stream) purgeLocked(filter string, upTo, keep uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.store.Purge(filter, upTo, keep)
	s.resync.Store(true)
	return n, err
}

// deleteMsg serves a message delete request; the message is erased
// (overwritten) unless no_erase is set.
func (s *stream) deleteMsg(req api.MsgDeleteRequest) *api.ApiError {
	cfg := s.config()
	if cfg.Sealed {
		return api.NewError(api.ErrStreamSealed)
	}
	if cfg.DenyDelete {
		return api.Errorf(api.ErrStreamMsgDeleteFailed, "message delete not permitted")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if aerr := deleteOutOfRange(s.store, cfg.Storage, req.Seq); aerr != nil {
		return aerr
	}
	err := s.store.Delete(req.Seq, !req.NoErase)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.Errorf(api.ErrSequenceNotFound, "sequence %d not found", req.Seq)
	case err != nil:
		return api.Errorf(api.ErrStreamMsgDeleteFailed, "deleting message %d: %v", req.Seq, err)
	}
	return nil
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
