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
	seq, ok := s.next(kind, filter, start)
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

// next finds the first live sequence >= start matching filter. Caller holds
// s.mu.
func (s *Store) next(kind filterKind, filter string, start uint64) (uint64, bool) {
	if s.msgs == 0 {
		return 0, false
	}
	start = max(start, s.first)
	end := s.lastLive()
	if start > end {
		return 0, false
	}
	switch kind {
	case filterAll:
		for seq := start; seq <= end; seq++ {
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
		return ss.nextAt(start)
	}
	if l, ok := s.cachedMatching(filter); ok && len(l) <= maxDirectSubjects {
		return firstAtOrAfter(l, start)
	}
	seq := start
	for budget := scanBudget; seq <= end && budget > 0; seq, budget = seq+1, budget-1 {
		if e := s.slot(seq); e.live() && subject.Match(filter, e.subj.name) {
			return seq, true
		}
	}
	if seq > end {
		return 0, false
	}
	if uint64(len(s.subjects)) < end-seq+1 {
		return firstAtOrAfter(s.matching(filter), seq)
	}
	for ; seq <= end; seq++ {
		if e := s.slot(seq); e.live() && subject.Match(filter, e.subj.name) {
			return seq, true
		}
	}
	return 0, false
}

// prev finds the last live sequence <= from matching filter; from must lie
// in [first, lastLive]. Caller holds s.mu.
func (s *Store) prev(kind filterKind, filter string, from uint64) (uint64, bool) {
	switch kind {
	case filterAll:
		for seq := from; seq >= s.first; seq-- {
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
		return ss.prevAt(from)
	}
	if l, ok := s.cachedMatching(filter); ok && len(l) <= maxDirectSubjects {
		return lastAtOrBefore(l, from)
	}
	seq := from
	for budget := scanBudget; seq >= s.first && budget > 0; seq, budget = seq-1, budget-1 {
		if e := s.slot(seq); e.live() && subject.Match(filter, e.subj.name) {
			return seq, true
		}
	}
	if seq < s.first {
		return 0, false
	}
	if uint64(len(s.subjects)) < seq-s.first+1 {
		return lastAtOrBefore(s.matching(filter), seq)
	}
	for ; seq >= s.first; seq-- {
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
