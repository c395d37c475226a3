package raftlog

import (
	"fmt"

	"github.com/jetwal/jetwal/segment"
)

// DeleteRange deletes the entries in [min, max], durably. Raft deletes only
// at the ends of its log, so the range must include the first or the last
// entry (or both); a range strictly inside the log is refused, since it would
// leave a hole. Parts of the range outside [FirstIndex, LastIndex] are
// ignored.
//
// A prefix deletion persists the new first index in the meta file (one
// in-place write and sync), then
// removes the segments wholly below it. A suffix deletion seals the active
// segment, removes the segments wholly above the new last index, cuts the
// segment holding it after its record (ftruncate) and starts a new segment at
// last+1. Deleting everything persists a first index
// past the last one, then removes every segment.
func (s *Store) DeleteRange(min, max uint64) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	s.mu.RLock()
	first, last := s.first, s.last
	s.mu.RUnlock()
	if min > max || first == 0 || max < first || min > last {
		return nil
	}
	var err error
	switch {
	case min <= first && max >= last:
		err = s.deleteAll(last)
	case min <= first:
		err = s.deletePrefix(max + 1)
	case max >= last:
		err = s.deleteSuffix(min - 1)
	default:
		return fmt.Errorf("raftlog: DeleteRange(%d, %d) is inside [%d, %d]: only a prefix or a suffix can be deleted", min, max, first, last)
	}
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// deletePrefix makes newFirst the first index. Called under writeMu.
func (s *Store) deletePrefix(newFirst uint64) error {
	if err := s.meta.write(encodeMeta(newFirst)); err != nil {
		return err
	}
	s.metaFirst = newFirst
	s.mu.Lock()
	s.first = newFirst
	drop := 0
	for drop+1 < len(s.segs) && s.segs[drop+1].base <= newFirst {
		drop++
	}
	gone := append([]*seg(nil), s.segs[:drop]...)
	s.segs = append(s.segs[:0:0], s.segs[drop:]...)
	s.mu.Unlock()
	// No reader can reach the dropped segments now; a crash before their
	// removal is finished is repaired by Open (they are below first).
	return s.removeFiles(gone)
}

// deleteSuffix makes newLast the last index. Called under writeMu.
//
// Order matters for crashes: the segments wholly above newLast go first,
// newest first, so a crash leaves a prefix of the old log; then the segment
// holding newLast is cut after it with ftruncate and synced, so a crash
// leaves it whole (the old log) or cut (the new one). Deleted records are
// never kept behind a mask that a later deletion could lift.
func (s *Store) deleteSuffix(newLast uint64) error {
	s.mu.Lock()
	if err := s.seal(s.segs[len(s.segs)-1]); err != nil {
		s.mu.Unlock()
		return err
	}
	keep := len(s.segs)
	for keep > 0 && s.segs[keep-1].base > newLast {
		keep--
	}
	gone := append([]*seg(nil), s.segs[keep:]...)
	s.segs = s.segs[:keep]
	s.last = newLast
	s.mu.Unlock()
	for i, j := 0, len(gone)-1; i < j; i, j = i+1, j-1 {
		gone[i], gone[j] = gone[j], gone[i]
	}
	if err := s.removeFiles(gone); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.cutAfter(s.segs[keep-1], newLast); err != nil {
		return err
	}
	_, err := s.newSegment(newLast+1, s.opts.MinSegmentSize, 0)
	return err
}

// cutAfter trims the sealed segment sg so that newLast is its last record,
// then rewrites its index. Called under mu.
func (s *Store) cutAfter(sg *seg, newLast uint64) error {
	n := newLast - sg.base + 1
	if n >= uint64(len(sg.offs)) {
		return nil
	}
	cut := int64(sg.offs[n])
	path := sg.s.Path()
	f, err := s.fs.OpenRW(path)
	if err != nil {
		return fmt.Errorf("raftlog: open %s: %w", path, err)
	}
	if err := f.Truncate(cut); err != nil {
		f.Close()
		return fmt.Errorf("raftlog: cut %s at offset %d: %w", path, cut, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("raftlog: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("raftlog: close %s: %w", path, err)
	}
	// Readers are excluded (mu), so the old mapping can go once the
	// shortened file is open.
	ns, err := segment.OpenKey(s.fs, path, false, s.key)
	if err != nil {
		return fmt.Errorf("raftlog: %w", err)
	}
	old := sg.s
	sg.s, sg.offs = ns, sg.offs[:n:n]
	old.Close()
	if err := writeFile(s.fs, s.indexPath(sg.base), encodeIndex(sg.base, ns.End(), ns.Created(), sg.offs)); err != nil {
		return fmt.Errorf("raftlog: write %s: %w", s.indexPath(sg.base), err)
	}
	return nil
}

// deleteAll deletes every entry. Called under writeMu.
func (s *Store) deleteAll(last uint64) error {
	if err := s.meta.write(encodeMeta(last + 1)); err != nil {
		return err
	}
	s.metaFirst = last + 1
	s.mu.Lock()
	gone := s.segs
	s.segs = nil
	s.first, s.last = 0, 0
	s.mu.Unlock()
	return s.removeFiles(gone)
}
