package raftlog

import (
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/segment"
)

// StoreEntries appends a batch of entries at consecutive indexes, durably:
// the records are encoded into one buffer, written with one write and synced
// with one fdatasync (two of each when the batch crosses into a new segment)
// before StoreEntries returns. The first entry must follow LastIndex; on an
// empty store it may start anywhere above 0.
//
// Readers never see an entry before its sync has returned.
func (s *Store) StoreEntries(entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	s.mu.RLock()
	last, empty := s.last, len(s.segs) == 0
	s.mu.RUnlock()
	start := entries[0].Index
	if start == 0 {
		return fmt.Errorf("raftlog: index 0 is not a valid index")
	}
	if !empty && start != last+1 {
		return fmt.Errorf("raftlog: entry index %d does not follow last index %d (no gaps or overwrites; DeleteRange the tail first)", start, last)
	}
	for i := range entries {
		if entries[i].Index != start+uint64(i) {
			return fmt.Errorf("raftlog: batch indexes not consecutive: %d after %d", entries[i].Index, start+uint64(i)-1)
		}
	}
	if empty && start < s.metaFirst {
		// An empty store starting below the persisted first index (after a
		// DeleteRange of everything): lower it first, or recovery would hide
		// the new entries.
		if err := s.meta.write(encodeMeta(start)); err != nil {
			return s.fail(err)
		}
		s.metaFirst = start
	}
	active, err := s.appendLocked(entries)
	if err != nil {
		return s.fail(err)
	}
	// Sync outside mu: readers go on while the disk works. Only this writer
	// changes the active segment, and Close waits for writeMu.
	if err := active.s.SyncFile(); err != nil {
		return s.fail(err)
	}
	s.mu.Lock()
	s.last = entries[len(entries)-1].Index
	if s.first == 0 {
		s.first = start
	}
	s.mu.Unlock()
	return nil
}

// appendLocked encodes and writes the batch under mu. It returns the active
// segment, whose file still needs a sync; segments it sealed on the way are
// already synced.
func (s *Store) appendLocked(entries []Entry) (*seg, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) == 0 {
		if _, err := s.newSegment(entries[0].Index, s.opts.MinSegmentSize, s.recordSize(&entries[0])); err != nil {
			return nil, err
		}
	}
	active := s.segs[len(s.segs)-1]
	var hdr []byte
	for i := range entries {
		e := &entries[i]
		var ts int64
		hdr, ts = appendEntryHeader(hdr[:0], e)
		off, err := active.s.Append(0, e.Index, ts, "", hdr, e.Data)
		if errors.Is(err, segment.ErrFull) {
			if active, err = s.rollover(e.Index, s.recordSize(e)); err != nil {
				return nil, err
			}
			off, err = active.s.Append(0, e.Index, ts, "", hdr, e.Data)
		}
		if err != nil {
			return nil, fmt.Errorf("raftlog: append index %d: %w", e.Index, err)
		}
		active.offs = append(active.offs, uint32(off))
	}
	if err := active.s.Flush(); err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	return active, nil
}

func recordSize(e *Entry) int64 {
	return int64(segment.EncodedSize(0, entryHeader+4+len(e.Extensions), len(e.Data)))
}

// rollover seals the active segment and starts the next at index next.
// Called under mu.
func (s *Store) rollover(next uint64, need int64) (*seg, error) {
	active := s.segs[len(s.segs)-1]
	size := min(s.opts.MaxSegmentSize, 2*active.s.End())
	if len(active.offs) == 0 {
		// Nothing in it yet (a short file after a crash): grow it in place,
		// since a second segment with the same base cannot exist.
		if err := active.s.Grow(max(size, s.opts.MinSegmentSize, segment.HeaderSize+need)); err != nil {
			return nil, fmt.Errorf("raftlog: %w", err)
		}
		return active, nil
	}
	if err := s.seal(active); err != nil {
		return nil, err
	}
	return s.newSegment(next, size, need)
}

// seal flushes, trims and syncs a segment and writes its offset index.
func (s *Store) seal(sg *seg) error {
	if sg.s.Sealed() {
		return nil
	}
	if err := sg.s.Seal(); err != nil {
		return fmt.Errorf("raftlog: %w", err)
	}
	// The index is a cache checked against the segment on open: it needs no
	// sync of its own.
	if err := writeFile(s.fs, s.indexPath(sg.base), encodeIndex(sg.base, sg.s.End(), sg.s.Created(), sg.offs)); err != nil {
		return fmt.Errorf("raftlog: write %s: %w", s.indexPath(sg.base), err)
	}
	return nil
}

// newSegment creates the segment starting at base with room for at least
// one record of need bytes, and makes it the active one. Called under mu.
func (s *Store) newSegment(base uint64, size, need int64) (*seg, error) {
	size = max(size, s.opts.MinSegmentSize, segment.HeaderSize+need)
	ss, err := segment.CreateKey(s.fs, s.dir, base, now(), size, s.key)
	if err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	ss.SetZeroAhead(true) // every write is synced (segment/zeroahead.go)
	sg := &seg{s: ss, base: base}
	s.segs = append(s.segs, sg)
	return sg, nil
}

// writable returns the sticky error, or ErrClosed. Called under writeMu.
func (s *Store) writable() error {
	if s.werr != nil {
		return s.werr
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return nil
}

// fail records a write error: the store accepts no more writes until it is
// reopened, because what reached the disk is unknown. Called under writeMu.
func (s *Store) fail(err error) error {
	s.werr = fmt.Errorf("raftlog: store failed, reopen it: %w", err)
	return err
}
