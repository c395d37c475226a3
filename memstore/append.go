package memstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// Append stores a message. It is durable (in memory) when Append returns.
func (s *Store) Append(subj string, hdr, data []byte) (uint64, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(subj, hdr, data)
}

// AppendAsync stores a message and calls done before returning; see the
// package documentation for how concurrent callers are ordered. A limit or
// validation error is returned directly and done is not called. A nil done
// is allowed.
func (s *Store) AppendAsync(subj string, hdr, data []byte, done store.AppendDone) error {
	s.mu.Lock()
	seq, ts, err := s.appendLocked(subj, hdr, data)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	ticket := s.tickets
	s.tickets++
	s.mu.Unlock()
	s.turn.deliver(ticket, func() {
		if done != nil {
			done(seq, ts, nil)
		}
	})
	return nil
}

// deliveryTurn hands out the right to run AppendAsync callbacks in the order
// their tickets were issued (which is sequence order).
type deliveryTurn struct {
	mu      sync.Mutex // guards the fields below
	cond    *sync.Cond
	next    uint64 // ticket whose callback may run now
	waiting int
}

func (d *deliveryTurn) deliver(ticket uint64, fn func()) {
	d.mu.Lock()
	for d.next != ticket {
		d.waiting++
		d.cond.Wait()
		d.waiting--
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.next++
		if d.waiting > 0 {
			d.cond.Broadcast()
		}
		d.mu.Unlock()
	}()
	fn()
}

// appendLocked validates, enforces limits and stores one message.
// Caller holds s.mu exclusively.
func (s *Store) appendLocked(subj string, hdr, data []byte) (uint64, int64, error) {
	if s.closed {
		return 0, 0, errClosed
	}
	if !subject.ValidPublish(subj) {
		return 0, 0, fmt.Errorf("memstore: append to %q: %w", subj, store.ErrInvalidSubject)
	}
	l := &s.limits
	if l.MaxMsgSize > 0 && len(hdr)+len(data) > int(l.MaxMsgSize) {
		return 0, 0, fmt.Errorf("memstore: append %d bytes, limit %d: %w",
			len(hdr)+len(data), l.MaxMsgSize, store.ErrMaxMsgSize)
	}
	size := store.MemRecordSize(subj, hdr, data)
	if l.MaxBytes > 0 && size > uint64(l.MaxBytes) {
		return 0, 0, fmt.Errorf("memstore: message of %d bytes exceeds max bytes %d: %w",
			size, l.MaxBytes, store.ErrMaxBytes)
	}
	ss := s.subjects[subj]
	if err := s.checkDiscardNew(ss, size); err != nil {
		return 0, 0, err
	}

	seq := s.last + 1
	ts := time.Now().UnixNano()
	if ts < s.lastTs {
		ts = s.lastTs // keep times sorted by sequence
	}
	if ss == nil {
		ss = &subjState{name: strings.Clone(subj)}
		s.subjects[ss.name] = ss
		s.subjGen++
	}
	// One allocation holds header and payload; append-based copies skip
	// zeroing memory that is overwritten at once.
	var buf []byte
	switch {
	case len(hdr)+len(data) == 0:
	case len(hdr) == 0:
		buf = slices.Clone(data)
	case len(data) == 0:
		buf = slices.Clone(hdr)
	default:
		buf = append(hdr[:len(hdr):len(hdr)], data...)
	}
	if s.ents.len() == 0 {
		s.base = seq
	} else {
		// Tombstones for trailing sequences removed earlier keep the
		// index dense.
		for s.base+uint64(s.ents.len()) < seq {
			s.ents.push(entry{ts: s.lastTs})
		}
	}
	s.ents.push(entry{buf: buf, subj: ss, ts: ts, hlen: uint32(len(hdr))})
	ss.seqs = append(ss.seqs, seq)
	if s.msgs == 0 {
		s.first = seq
	}
	s.msgs++
	s.bytes += size
	s.last = seq
	s.lastTs = ts

	s.enforceCounts(ss)
	s.armAgeTimer()
	return seq, ts, nil
}

// checkDiscardNew refuses a message that DiscardNew limits do not allow.
// ss is the message's subject, nil if new. Caller holds s.mu.
func (s *Store) checkDiscardNew(ss *subjState, size uint64) error {
	l := &s.limits
	if l.Discard != store.DiscardNew {
		return nil
	}
	// A subject at its limit replaces its oldest message instead of
	// growing the stream, unless the per-subject limit refuses new ones.
	atSubjLimit := l.MaxMsgsPerSubject > 0 && ss != nil && int64(len(ss.seqs)) >= l.MaxMsgsPerSubject
	if atSubjLimit && l.DiscardNewPerSubject {
		return fmt.Errorf("memstore: subject %q holds %d messages: %w",
			ss.name, len(ss.seqs), store.ErrMaxMsgsPerSubj)
	}
	if l.MaxMsgs > 0 && !atSubjLimit && s.msgs >= uint64(l.MaxMsgs) {
		return fmt.Errorf("memstore: stream holds %d messages: %w", s.msgs, store.ErrMaxMsgs)
	}
	if l.MaxBytes > 0 {
		after := s.bytes + size
		if atSubjLimit {
			after -= s.at(ss.firstSeq()).size()
		}
		if after > uint64(l.MaxBytes) {
			return fmt.Errorf("memstore: stream would hold %d bytes, limit %d: %w",
				after, l.MaxBytes, store.ErrMaxBytes)
		}
	}
	return nil
}
