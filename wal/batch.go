package wal

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// Atomic batches. AppendBatch writes the records of a batch contiguously in
// one segment (it rolls to a new segment first when the batch does not fit,
// and grows the segment rather than roll in the middle), every record but
// the last with segment.FlagBatchOpen. A crash can only cut a batch short at
// the end of the log: recovery finds the log ending in a run of batch-open
// message records with no closing record, drops those messages and writes
// a tombstone over them (dropOpenBatchLocked). So after a crash a batch is
// in the store whole or not at all.
//
// Limits are applied message by message as the batch is written: a limit
// that refuses a message mid-batch (discard new) leaves the messages before
// it stored, with the batch-open flag; the caller takes them back
// (Truncate) or a crash drops them. Evictions the batch causes (discard
// old) are written as tombstones with the next flush, after the batch's
// records, and segments they empty are removed only once the batch is
// durable: a crash that drops the batch keeps what it would have evicted.

// batchState is the AppendBatch in progress; guarded by Store.mu.
type batchState struct {
	active bool
	flags  uint16 // record flags of the message being appended
	// openSeq, during recovery: the first sequence of the run of
	// batch-open records the scan is in, 0 outside one.
	openSeq uint64
	// dropDead: the batch emptied segments, removed once it is durable.
	dropDead bool
}

// AppendBatch stores msgs in order under one hold of the store lock and
// returns once all of them are durable under the sync policy (see
// AppendAsync); they share the commit with concurrent appends. Each stored
// message gets its Seq and Time filled in. Readers see none of the batch
// until all of it is visible, and a crash keeps all or none of it (see
// above). It returns how many were stored: on an error, msgs[:n] are stored
// (and, when n > 0 and the error came from a limit or bad input, durable),
// msgs[n:] are not.
func (s *Store) AppendBatch(msgs []store.Msg) (int, error) {
	total := 0
	for i := range msgs {
		m := &msgs[i]
		if !subject.ValidPublish(m.Subject) || len(m.Subject) > segment.MaxSubjectLen {
			return 0, fmt.Errorf("%w: message %d: %q", store.ErrInvalidSubject, i, m.Subject)
		}
		n := s.recordSize(len(m.Subject), len(m.Header), len(m.Data))
		if n > segment.MaxRecordSize {
			return 0, fmt.Errorf("%w: message %d: record of %d bytes above the %d-byte format limit", store.ErrMaxMsgSize, i, n, segment.MaxRecordSize)
		}
		total += n
	}
	if len(msgs) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	// The whole batch is reserved before it starts: reserving may wait
	// with mu released, which the batch, under one hold of mu, cannot.
	if err := s.reserveLocked(uint64(len(msgs))); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	if err := s.roomForBatchLocked(total); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	s.batch.active = true
	n := 0
	var aerr error
	var size uint64
	for ; n < len(msgs); n++ {
		m := &msgs[n]
		s.batch.flags = 0
		if n < len(msgs)-1 {
			s.batch.flags = segment.FlagBatchOpen
		}
		sz := store.FileRecordSize(m.Subject, m.Header, m.Data)
		seq, ts, err := s.appendLocked(m.Subject, m.Header, m.Data, sz)
		if err != nil {
			aerr = err
			break
		}
		m.Seq, m.Time = seq, ts
		size += sz
	}
	dropDead := s.batch.dropDead
	s.batch = batchState{}
	if n == 0 {
		s.mu.Unlock()
		return 0, aerr
	}
	last := msgs[n-1]
	// Waiters are released in sequence order, so the batch is durable once
	// its last message is; readers see it from then on (s.visible).
	done := make(chan error, 1)
	first := len(s.waiters) == 0
	s.waiters = append(s.waiters, waiter{seq: last.Seq, ts: last.Time, size: size, done: func(_ uint64, _ int64, err error) { done <- err }})
	s.pendB += size
	s.mu.Unlock()
	if first {
		s.kickCommit() // see kickCommit
	}
	if err := <-done; err != nil {
		return 0, err
	}
	if dropDead {
		s.mu.Lock()
		if !s.closed && s.werr == nil {
			s.dropDeadLocked()
		}
		s.mu.Unlock()
	}
	return n, aerr
}

// roomForBatchLocked makes the active segment able to take a batch of total
// record bytes: a new segment when the active one holds messages and lacks
// the room, a larger one when it holds none.
func (s *Store) roomForBatchLocked(total int) error {
	if s.closed {
		return store.ErrClosed
	}
	if s.werr != nil {
		return s.werr
	}
	need := total + s.tombReserve()
	if s.active.seg.Room(need) {
		return nil
	}
	seq := s.last + 1
	var err error
	if s.active.seg.Base() == seq {
		err = s.active.seg.Grow(max(s.nextSegmentSize(), int64(segment.HeaderSize+need)) + s.active.seg.End())
	} else {
		err = s.rollLocked(seq, need)
	}
	if err != nil {
		if s.werr == nil && errors.Is(err, syscall.ENOSPC) {
			// Nothing changed, as for a single append (appendLocked).
			return fmt.Errorf("wal: %s: disk full: %w", s.dir, err)
		}
		return s.failLocked(err)
	}
	return nil
}

// dropOpenBatchLocked drops, during recovery, an atomic batch a crash cut
// short: scanFrom found the log ending in a run of batch-open records from
// s.batch.openSeq on. Its messages leave the index; tombOpenBatchLocked
// then makes that durable.
func (s *Store) dropOpenBatchLocked() {
	first := s.batch.openSeq
	if first == 0 {
		return
	}
	p := s.newPruner()
	for q := first; q <= s.last; q++ {
		p.removeLocked(q)
	}
	p.finishLocked()
	s.report.DroppedBatch = &DroppedBatch{First: first, Last: s.last}
}

// tombOpenBatchLocked writes and syncs a tombstone over the batch that
// recovery dropped, so that no later recovery serves it: its records stay
// in their segment (which may be sealed), and a later message would close
// their run. Its sequences are not handed out again.
func (s *Store) tombOpenBatchLocked() error {
	d := s.report.DroppedBatch
	s.batch = batchState{}
	if d == nil {
		return nil
	}
	if err := s.appendTombLocked(d.First, d.Last-d.First+1); err != nil {
		return fmt.Errorf("wal: %s: recording the dropped batch %d-%d: %w", s.dir, d.First, d.Last, err)
	}
	if _, err := s.syncLocked(); err != nil {
		return fmt.Errorf("wal: %s: recording the dropped batch %d-%d: %w", s.dir, d.First, d.Last, err)
	}
	return nil
}

// DroppedBatch is an atomic batch recovery dropped because a crash cut it
// short: its messages First..Last.
type DroppedBatch struct {
	First, Last uint64
}
