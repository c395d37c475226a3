package memstore

import (
	"fmt"
	"slices"

	"github.com/jetwal/jetwal/store"
)

// Delete removes one message; erase overwrites its bytes first.
func (s *Store) Delete(seq uint64, erase bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if !s.removeSeq(seq, erase) {
		return fmt.Errorf("memstore: delete seq %d: %w", seq, store.ErrNotFound)
	}
	return nil
}

// Purge removes the messages matching filter with sequence < upTo (0 = no
// bound), except the newest keep of them. LastSeq is unchanged; FirstSeq
// moves to the oldest message left, or to LastSeq+1 if none is.
func (s *Store) Purge(filter string, upTo, keep uint64) (uint64, error) {
	kind, err := parseFilter(filter)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed
	}
	if s.msgs == 0 {
		return 0, nil
	}
	bound := upTo // candidates are < bound
	if bound == 0 || bound > s.lastLive() {
		bound = s.lastLive() + 1
	}
	switch kind {
	case filterAll:
		if bound <= s.first {
			return 0, nil
		}
		n := s.countLive(s.first, bound-1)
		if keep >= n {
			return 0, nil
		}
		n -= keep
		if n == s.msgs {
			s.reset()
			return n, nil
		}
		// The candidates are a prefix, so drop from the front.
		for i := uint64(0); i < n; i++ {
			s.removeSeq(s.first, false)
		}
		return n, nil
	case filterLiteral:
		ss := s.subjects[filter]
		if ss == nil {
			return 0, nil
		}
		n := ss.countBelow(bound)
		if keep >= n {
			return 0, nil
		}
		n -= keep
		for i := uint64(0); i < n; i++ {
			s.removeSeq(ss.firstSeq(), false)
		}
		return n, nil
	default:
		list := s.matching(filter)
		var n uint64
		for _, ss := range list {
			n += ss.countBelow(bound)
		}
		if keep >= n {
			return 0, nil
		}
		n -= keep
		if keep == 0 {
			for _, ss := range slices.Clone(list) {
				for c := ss.countBelow(bound); c > 0; c-- {
					s.removeSeq(ss.firstSeq(), false)
				}
			}
			return n, nil
		}
		// Keep spans subjects: drop the oldest n matches in sequence order.
		var removed uint64
		for seq := s.first; removed < n && seq < bound; seq++ {
			if e := s.at(seq); e != nil && matches(kind, filter, e) {
				s.removeSeq(seq, false)
				removed++
			}
		}
		return removed, nil
	}
}

// Compact removes every message with sequence < seq. If that empties the
// store, FirstSeq becomes max(seq, LastSeq+1) and LastSeq FirstSeq-1, so the
// next Append gets that sequence.
func (s *Store) Compact(seq uint64) (uint64, error) {
	if seq == 0 {
		return 0, fmt.Errorf("memstore: compact to sequence 0: %w", store.ErrInvalidSequence)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed
	}
	var n uint64
	switch {
	case s.msgs == 0:
	case seq <= s.first:
		return 0, nil
	case seq > s.lastLive():
		n = s.msgs
		s.reset()
	default:
		for s.msgs > 0 && s.first < seq {
			s.removeSeq(s.first, false)
			n++
		}
		return n, nil
	}
	if seq > s.last {
		s.first, s.last, s.base = seq, seq-1, seq
	}
	return n, nil
}

// Truncate removes every message with sequence > seq. LastSeq is unchanged,
// so sequences are never handed out twice; the removed sequences count as
// deleted until the store moves past them.
func (s *Store) Truncate(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if s.msgs > 0 && seq < s.first {
		s.reset()
		return nil
	}
	for s.msgs > 0 && s.lastLive() > seq {
		s.removeSeq(s.lastLive(), false)
	}
	return nil
}

// removeSeq removes a live message, keeping every index and counter right.
// It reports false if seq was not a live message. Caller holds s.mu
// exclusively.
func (s *Store) removeSeq(seq uint64, erase bool) bool {
	e := s.at(seq)
	if e == nil {
		return false
	}
	ss := e.subj
	s.msgs--
	s.bytes -= e.size()
	if erase {
		clear(e.buf)
	}
	ss.remove(seq)
	if len(ss.seqs) == 0 {
		delete(s.subjects, ss.name)
		s.subjGen++
	}
	*e = entry{ts: e.ts}
	s.trim()
	return true
}

// trim drops tombstones from both ends of ents and fixes first. Caller holds
// s.mu exclusively.
func (s *Store) trim() {
	for s.ents.len() > 0 && !s.ents.front().live() {
		s.ents.popFront()
		s.base++
	}
	for s.ents.len() > 0 && !s.ents.back().live() {
		s.ents.popBack()
	}
	if s.ents.len() == 0 {
		s.first = s.last + 1
		s.base = s.first
		return
	}
	s.first = s.base
}

// reset removes every message at once. LastSeq is kept. Caller holds s.mu
// exclusively.
func (s *Store) reset() {
	s.ents.reset()
	s.subjects = make(map[string]*subjState)
	s.subjGen++
	s.msgs, s.bytes = 0, 0
	s.first = s.last + 1
	s.base = s.first
}

// countLive counts live messages in [lo, hi], scanning the shorter way.
// Caller holds s.mu.
func (s *Store) countLive(lo, hi uint64) uint64 {
	if s.msgs == 0 {
		return 0
	}
	lo = max(lo, s.first)
	hi = min(hi, s.lastLive())
	if lo > hi {
		return 0
	}
	span := s.lastLive() - s.first + 1
	if span == s.msgs { // no tombstones
		return hi - lo + 1
	}
	if hi-lo+1 <= span/2 {
		var n uint64
		for seq := lo; seq <= hi; seq++ {
			if s.slot(seq).live() {
				n++
			}
		}
		return n
	}
	// Count what lies outside [lo, hi] instead.
	n := s.msgs
	for seq := s.first; seq < lo; seq++ {
		if s.slot(seq).live() {
			n--
		}
	}
	for seq := hi + 1; seq <= s.lastLive(); seq++ {
		if s.slot(seq).live() {
			n--
		}
	}
	return n
}
