package raftlog

import (
	"fmt"
	"sort"
)

// GetEntry reads the entry at index into e. Data and Extensions are new copies
// the caller owns. It returns ErrNotFound outside [FirstIndex, LastIndex] and
// an error wrapping ErrCorrupt, naming file and offset, for a damaged record:
// damaged bytes are never returned.
func (s *Store) GetEntry(index uint64, e *Entry) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if index < s.first || index > s.last || s.first == 0 {
		return ErrNotFound
	}
	sg := s.segmentFor(index)
	i := index - sg.base
	if i >= uint64(len(sg.offs)) {
		return fmt.Errorf("raftlog: index %d missing from %s: %w", index, sg.s.Path(), ErrCorrupt)
	}
	off := int64(sg.offs[i])
	r, _, err := sg.s.ReadAt(off)
	if err != nil {
		return fmt.Errorf("raftlog: index %d: %w", index, err)
	}
	if r.Seq != index {
		return corrupt(sg.s.Path(), off, "record holds index %d, expected %d", r.Seq, index)
	}
	return decodeEntry(sg.s.Path(), off, &r, e)
}

// segmentFor returns the segment holding index, which must be within
// [first, last]. Called under mu.
func (s *Store) segmentFor(index uint64) *seg {
	n := len(s.segs)
	if tail := s.segs[n-1]; index >= tail.base {
		return tail // the common case: a recent entry
	}
	i := sort.Search(n, func(i int) bool { return s.segs[i].base > index })
	return s.segs[i-1]
}
