package wal

import (
	"fmt"

	"github.com/jetwal/jetwal/store"
)

// SkipTo makes next the sequence the next append gets: the sequences between
// the last one and next are never handed out, and count as deleted. It is
// what a replica needs to rebuild a stream from a snapshot with the
// leader's sequences, holes included. The skip is written as a tombstone
// and answered under the sync policy, as a delete is. next at or below
// last+1 changes nothing.
func (s *Store) SkipTo(next uint64) error {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return err
	}
	if next == 0 {
		s.mu.Unlock()
		return fmt.Errorf("wal: %s: skip to 0: %w", s.dir, store.ErrInvalidSequence)
	}
	if next <= s.last+1 {
		s.mu.Unlock()
		return nil
	}
	rs := ranges{{first: s.last + 1, count: next - 1 - s.last}}
	s.last = next - 1
	s.visible = max(s.visible, s.last)
	s.applyTrimsLocked()
	ws, err := s.persistRemovalLocked(rs)
	s.unlockNotify(ws, nil)
	return err
}
