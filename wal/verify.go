package wal

import (
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
)

// loseLocked takes a message whose record failed its checksum out of the
// index and records it as lost. Damaged bytes are never served.
func (s *Store) loseLocked(seq uint64, cause error) {
	if !s.idx.Seqs.Live(seq) {
		return
	}
	name := s.idx.Subj.SubjectOf(seq)
	s.idx.Remove(seq, name)
	s.msgs--
	s.dirty = true
	s.noteLost(seq, seq)
	var ce *segment.CorruptError
	if errors.As(cause, &ce) {
		s.report.Corrupt = append(s.report.Corrupt, ce)
	}
}

// corruptRead handles a checksum failure found by a read: the message is
// marked lost and the caller gets an error that is both ErrNotFound (the
// message is gone) and ErrCorrupt (why).
func (s *Store) corruptRead(seq uint64, cause error) error {
	s.mu.Lock()
	s.loseLocked(seq, cause)
	s.mu.Unlock()
	return fmt.Errorf("wal: sequence %d lost: %w: %w", seq, store.ErrNotFound, cause)
}

// Verify reads every record of every segment and checks its checksum. It
// returns the damage found; messages in damaged ranges are marked lost (see
// State().Lost) so readers are told they are missing. Appends and reads go
// on while it runs.
func (s *Store) Verify() []*segment.CorruptError {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	segs := append([]*segEntry(nil), s.segs...)
	for _, e := range segs {
		s.busy[e]++
	}
	s.mu.Unlock()
	var found []*segment.CorruptError
	for _, e := range segs {
		s.mu.RLock()
		compressed, closed := e.seg.Compressed(), s.closed
		s.mu.RUnlock()
		if closed {
			// Stop early: release what is left.
			s.mu.Lock()
			s.unbusyLocked(e)
			s.mu.Unlock()
			continue
		}
		if !compressed {
			found = append(found, s.verifyPlain(e)...)
			e.seg.Cool() // read once, not needed soon: keep the resident set small
			s.mu.Lock()
			s.unbusyLocked(e)
			s.mu.Unlock()
			continue
		}
		res, err := e.seg.Scan(func(int64, *segment.Record) error { return nil })
		s.mu.Lock()
		if err != nil {
			found = append(found, asCorrupt(err))
		}
		for _, d := range res.Damage {
			found = append(found, d.Err)
			s.loseDamageLocked(e, d, 1<<32-1)
		}
		s.unbusyLocked(e)
		s.mu.Unlock()
	}
	return found
}

// verifyChunk bounds how much of a segment Verify scans per hold of the
// read lock, so appends wait at most that long, and how much of it the
// scan keeps resident (each chunk is cooled once scanned).
const verifyChunk = 1 << 20

// verifyPlain verifies the written part of a plain segment, sealed or the
// active one (which a checkpoint may have spared recovery from scanning):
// in chunks, each under the read lock, up to what was written when the
// chunk began. Each chunk's pages are cooled once it is scanned, so that a
// verification running after a restart, over every segment, keeps at most
// a chunk of the store resident instead of the segment it is in.
func (s *Store) verifyPlain(e *segEntry) []*segment.CorruptError {
	var found []*segment.CorruptError
	for off := int64(segment.HeaderSize); ; {
		s.mu.RLock()
		if s.closed || s.removed(e) {
			s.mu.RUnlock()
			return found
		}
		limit := e.seg.Flushed()
		if off >= limit {
			s.mu.RUnlock()
			return found
		}
		res, err := e.seg.ScanWindow(off, off+verifyChunk, limit, func(int64, *segment.Record) error { return nil }, nil)
		s.mu.RUnlock()
		if err != nil {
			return append(found, asCorrupt(err))
		}
		e.seg.CoolRange(off, max(res.End, off+verifyChunk)-off)
		next := res.End
		if len(res.Damage) > 0 {
			s.mu.Lock()
			for _, d := range res.Damage {
				found = append(found, d.Err)
				s.loseDamageLocked(e, d, uint32(limit))
			}
			s.mu.Unlock()
			last := res.Damage[len(res.Damage)-1]
			if last.Resync < 0 {
				return found
			}
			next = max(next, last.Resync)
		}
		if next <= off {
			return found
		}
		off = next
	}
}

// loseDamageLocked marks lost the messages of e whose records start in the
// damaged range d (up to its resync point, or to tail when nothing valid
// follows): reads report them missing instead of serving them.
func (s *Store) loseDamageLocked(e *segEntry, d segment.Damage, tail uint32) {
	end := tail
	if d.Resync >= 0 {
		end = uint32(d.Resync)
	}
	var lose []uint64
	s.idx.Seqs.EachInSeg(e.id, func(seq uint64, off uint32) {
		if off >= uint32(d.Offset) && off < end {
			lose = append(lose, seq)
		}
	})
	for _, q := range lose {
		s.loseLocked(q, d.Err)
	}
}
