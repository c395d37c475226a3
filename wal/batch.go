package wal

import (
	"fmt"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// AppendBatch stores msgs in order under one hold of the store lock and
// returns once all of them are durable under the sync policy (see
// AppendAsync); they share the commit with concurrent appends. Each stored
// message gets its Seq and Time filled in. It returns how many were stored:
// on an error, msgs[:n] are stored (and, when n > 0 and the error came from a
// limit or bad input, durable), msgs[n:] are not. The batch is not atomic
// across a crash: a crash may keep any prefix of it that was not yet
// acknowledged.
func (s *Store) AppendBatch(msgs []store.Msg) (int, error) {
	for i := range msgs {
		m := &msgs[i]
		if !subject.ValidPublish(m.Subject) || len(m.Subject) > segment.MaxSubjectLen {
			return 0, fmt.Errorf("%w: message %d: %q", store.ErrInvalidSubject, i, m.Subject)
		}
		if n := segment.EncodedSize(len(m.Subject), len(m.Header), len(m.Data)); n > segment.MaxRecordSize {
			return 0, fmt.Errorf("%w: message %d: record of %d bytes above the %d-byte format limit", store.ErrMaxMsgSize, i, n, segment.MaxRecordSize)
		}
	}
	s.mu.Lock()
	n := 0
	var aerr error
	var size uint64
	for ; n < len(msgs); n++ {
		m := &msgs[n]
		sz := m.Size()
		seq, ts, err := s.appendLocked(m.Subject, m.Header, m.Data, sz)
		if err != nil {
			aerr = err
			break
		}
		m.Seq, m.Time = seq, ts
		size += sz
	}
	if n == 0 {
		s.mu.Unlock()
		return 0, aerr
	}
	last := msgs[n-1]
	// Waiters are released in sequence order, so the batch is durable once
	// its last message is.
	done := make(chan error, 1)
	s.waiters = append(s.waiters, waiter{seq: last.Seq, ts: last.Time, size: size, done: func(_ uint64, _ int64, err error) { done <- err }})
	s.pendB += size
	s.mu.Unlock()
	s.kickCommit()
	if err := <-done; err != nil {
		return 0, err
	}
	return n, aerr
}
