package wal

import (
	"sync"

	"github.com/jetwal/jetwal/segment"
)

// spareState keeps one segment file ready for the next roll of a store
// that rolls (segment.Spare): making a file under the store lock stalled
// every append and read of the stream for the file system's allocation and
// syncs, several milliseconds each roll on a busy disk. A goroutine of its
// own makes the spare, so neither appends nor group commits wait for it.
// Only a store that has rolled since it opened keeps a spare; a small
// stream never does, so idle streams cost no extra disk.
type spareState struct {
	sp      *segment.Spare
	kick    chan struct{}
	running bool       // spareLoop started
	making  sync.Mutex // one makeSpare at a time: spares share one file name
	// used and created count rolls that took a spare and rolls that made
	// their segment under the lock (tests).
	used, created uint64
}

// takeSpareLocked returns the spare if it holds at least size bytes, and
// drops one too small (the store's SegmentSize changed, or a record larger
// than a segment).
func (s *Store) takeSpareLocked(size int64) *segment.Spare {
	sp := s.spare.sp
	if sp == nil {
		return nil
	}
	s.spare.sp = nil
	if sp.Capacity() < size {
		sp.Discard()
		return nil
	}
	return sp
}

// wantSpareLocked asks for a spare for the roll after this one.
func (s *Store) wantSpareLocked() {
	if !s.spare.running {
		s.spare.running = true
		s.spare.kick = make(chan struct{}, 1)
		s.wg.Add(1)
		go s.spareLoop()
	}
	select {
	case s.spare.kick <- struct{}{}:
	default:
	}
}

// spareLoop makes a spare each time a roll takes one. A spare it cannot
// make (a full disk, say) is not an error: the roll then creates its
// segment itself, and reports what fails.
func (s *Store) spareLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.spare.kick:
		}
		s.makeSpare()
	}
}

// makeSpare makes the spare if the store still wants one.
func (s *Store) makeSpare() {
	s.spare.making.Lock()
	defer s.spare.making.Unlock()
	s.mu.Lock()
	want := !s.closed && s.werr == nil && s.spare.sp == nil && s.active != nil
	var size int64
	if want {
		size = s.nextSegmentSize()
	}
	s.mu.Unlock()
	if !want {
		return
	}
	sp, err := segment.CreateSpare(s.fs, s.dir, size)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closed || s.spare.sp != nil {
		s.mu.Unlock()
		sp.Discard()
		return
	}
	s.spare.sp = sp
	s.mu.Unlock()
}

// discardSpareLocked deletes the spare (Close, after spareLoop ended).
func (s *Store) discardSpareLocked() {
	if s.spare.sp != nil {
		s.spare.sp.Discard()
		s.spare.sp = nil
	}
}
