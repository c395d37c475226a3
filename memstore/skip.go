package memstore

import (
	"fmt"

	"github.com/jetwal/jetwal/store"
)

// maxSkipHeld bounds the gap SkipTo opens while the store holds messages:
// the dense index keeps a tombstone for every skipped sequence after the
// last live message (48 bytes each), so a gap of 2^20 costs about 48 MiB.
// An empty store skips any distance for free.
const maxSkipHeld = 1 << 20

// SkipTo makes next the sequence the next append gets: the sequences
// between the last one and next are never handed out, and count as
// deleted. A mirror uses it over a gap in its origin, so that its messages
// keep their origin's sequences. next at or below LastSeq+1 changes
// nothing.
func (s *Store) SkipTo(next uint64) error {
	if next == 0 {
		return fmt.Errorf("memstore: skip to 0: %w", store.ErrInvalidSequence)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if next <= s.last+1 {
		return nil
	}
	if s.msgs == 0 {
		s.first, s.last = next, next-1
		return nil
	}
	if next-1-s.lastLive() > maxSkipHeld {
		return fmt.Errorf("memstore: skip from %d to %d: a gap of more than %d sequences after held messages: %w",
			s.last, next, maxSkipHeld, store.ErrInvalidSequence)
	}
	s.last = next - 1
	return nil
}
