package memstore

import (
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// scanBudget is how many slots a wildcard lookup scans linearly before it
// considers asking the matching subjects instead.
const scanBudget = 256

// maxDirectSubjects is the most matching subjects a wildcard lookup asks
// directly, skipping the scan, when the filter's subjects are cached.
const maxDirectSubjects = 32

// firstAtOrAfter returns the smallest sequence >= seq among the subjects.
func firstAtOrAfter(l []*subjState, seq uint64) (uint64, bool) {
	var best uint64
	for _, ss := range l {
		if n, ok := ss.nextAt(seq); ok && (best == 0 || n < best) {
			best = n
		}
	}
	return best, best != 0
}

// lastAtOrBefore returns the largest sequence <= seq among the subjects.
func lastAtOrBefore(l []*subjState, seq uint64) (uint64, bool) {
	var best uint64
	for _, ss := range l {
		if p, ok := ss.prevAt(seq); ok && p > best {
			best = p
		}
	}
	return best, best != 0
}

// nearestIn returns the smallest sequence >= seq among the subjects (fwd)
// or the largest <= seq.
func nearestIn(l []*subjState, seq uint64, fwd bool) (uint64, bool) {
	if fwd {
		return firstAtOrAfter(l, seq)
	}
	return lastAtOrBefore(l, seq)
}

// Load reads message seq into m.
func (s *Store) Load(seq uint64, m *store.Msg) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	e := s.at(seq)
	if e == nil {
		return errNotFound
	}
	fill(m, seq, e)
	return nil
}

// LoadNext reads the first message with sequence >= start matching filter.
func (s *Store) LoadNext(filter string, start uint64, m *store.Msg) error {
	kind, err := parseFilter(filter)
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	if s.msgs == 0 {
		return errEOF
	}
	start = max(start, s.first)
	end := s.lastLive()
	if start > end {
		return errEOF
	}
	seq, ok := s.seek(kind, filter, start, end, true)
	if !ok {
		return errEOF
	}
	fill(m, seq, s.slot(seq))
	return nil
}

// LoadLast reads the newest message matching filter.
func (s *Store) LoadLast(filter string, m *store.Msg) error {
	kind, err := parseFilter(filter)
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	if s.msgs == 0 {
		return errNotFound
	}
	seq, ok := s.prev(kind, filter, s.lastLive())
	if !ok {
		return errNotFound
	}
	fill(m, seq, s.slot(seq))
	return nil
}

// LoadPrev reads the newest message with sequence <= seq matching filter.
// It returns store.ErrEOF when there is none, mirroring LoadNext.
func (s *Store) LoadPrev(filter string, seq uint64, m *store.Msg) error {
	kind, err := parseFilter(filter)
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	if s.msgs == 0 || seq < s.first {
		return errEOF
	}
	found, ok := s.prev(kind, filter, min(seq, s.lastLive()))
	if !ok {
		return errEOF
	}
	fill(m, found, s.slot(found))
	return nil
}

// prev finds the last live sequence <= from matching filter; from must lie
// in [first, lastLive]. Caller holds s.mu.
func (s *Store) prev(kind filterKind, filter string, from uint64) (uint64, bool) {
	return s.seek(kind, filter, from, s.first, false)
}

// seek finds the live sequence matching filter nearest to from, walking
// forward up to to (fwd, to >= from) or back down to it (to <= from); both
// lie in [first, lastLive]. A wildcard filter whose subjects are cached
// and few asks them directly; otherwise it scans up to scanBudget slots,
// then asks the matching subjects if there are fewer of them than slots
// left to scan. Caller holds s.mu.
func (s *Store) seek(kind filterKind, filter string, from, to uint64, fwd bool) (uint64, bool) {
	step, left := uint64(1), to-from+1 // left: slots not scanned yet
	if !fwd {
		step, left = ^uint64(0), from-to+1 // adding ^0 steps back one
	}
	switch kind {
	case filterAll:
		for seq := from; left > 0; seq, left = seq+step, left-1 {
			if s.slot(seq).live() {
				return seq, true
			}
		}
		return 0, false
	case filterLiteral:
		ss := s.subjects[filter]
		if ss == nil {
			return 0, false
		}
		if fwd {
			return ss.nextAt(from)
		}
		return ss.prevAt(from)
	}
	if l, ok := s.cachedMatching(filter); ok && len(l) <= maxDirectSubjects {
		return nearestIn(l, from, fwd)
	}
	seq := from
	for budget := scanBudget; left > 0 && budget > 0; seq, left, budget = seq+step, left-1, budget-1 {
		if e := s.slot(seq); e.live() && subject.Match(filter, e.subj.name) {
			return seq, true
		}
	}
	if left == 0 {
		return 0, false
	}
	if uint64(len(s.subjects)) < left {
		return nearestIn(s.matching(filter), seq, fwd)
	}
	for ; left > 0; seq, left = seq+step, left-1 {
		if e := s.slot(seq); e.live() && subject.Match(filter, e.subj.name) {
			return seq, true
		}
	}
	return 0, false
}

// fill copies a live entry into m, reusing m's buffers.
func fill(m *store.Msg, seq uint64, e *entry) {
	m.Seq = seq
	m.Time = e.ts
	m.Subject = e.subj.name
	m.Header = append(m.Header[:0], e.buf[:e.hlen]...)
	m.Data = append(m.Data[:0], e.buf[e.hlen:]...)
}
