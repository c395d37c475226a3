package wal

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/vfs"
)

// A checkpoint is written in two steps. Under the store lock the index is
// encoded into a temp file, which is only as fast as writing to the page
// cache (about 8 ms for 4M messages); then, with the lock released, the
// temp file is fsynced, renamed over the previous checkpoint and the
// directory fsynced, which on a slow disk takes ten times longer, and the
// new file is mapped and checked to hold the index's packed blocks
// (mapCheckpoint); finally, under the lock again, the index moves its packed
// blocks to that mapping (adoptCheckpoint), which swaps pointers only.
// Appends and reads go on during the middle step. Nothing they do can make
// the checkpoint wrong: it describes the store as it was when encoded, and
// recovery replays whatever the segments hold past the point it covers,
// exactly as for a checkpoint taken at that moment; until the rename, a
// crash finds the previous checkpoint, an older but equally valid starting
// point. One checkpoint is in progress at a time (ckptBusy): the temp file
// has one name.
type ckptJob struct {
	f         vfs.File
	tmp, path string
	size      int64
	place     *index.Placement
	m         vfs.Mapping // the new file, mapped and checked (mapCheckpoint), or nil
	old       vfs.Mapping // the previous checkpoint's mapping, to unmap once mu is released
}

// unmapOld unmaps the mapping j's adoption replaced, if any.
func (j *ckptJob) unmapOld() {
	if j.old != nil {
		j.old.Unmap()
		j.old = nil
	}
}

// checkpointLocked writes a checkpoint and makes it durable without
// releasing the lock, after any checkpoint in progress ends (Close, tests).
func (s *Store) checkpointLocked() error {
	for s.ckptBusy {
		s.ckptIdle.Wait()
	}
	j, err := s.beginCheckpointLocked()
	if err != nil {
		return err
	}
	err = s.endCheckpointLocked(j, s.finishCheckpoint(j))
	j.unmapOld()
	return err
}

// beginCheckpointLocked encodes the index and the trailer into the temp
// file and marks a checkpoint in progress. The index is clean from here:
// a change made while the checkpoint is made durable dirties it again.
func (s *Store) beginCheckpointLocked() (*ckptJob, error) {
	if err := s.finishSealsLocked(); err != nil {
		return nil, err
	}
	t := []byte{trailerVersion}
	le := binary.LittleEndian
	t = le.AppendUint64(t, s.last)
	t = le.AppendUint64(t, s.msgs)
	t = le.AppendUint64(t, s.bytes)
	t = le.AppendUint64(t, uint64(s.lastTS))
	t = le.AppendUint32(t, uint32(len(s.segs)))
	for _, e := range s.segs {
		t = le.AppendUint64(t, e.seg.Base())
		t = le.AppendUint32(t, uint32(e.id))
	}
	t = le.AppendUint32(t, uint32(len(s.segs)-1))
	t = le.AppendUint64(t, uint64(s.active.seg.Flushed()))
	var lost []uint64
	if s.lost != nil {
		lost = s.lost.Msgs
	}
	t = le.AppendUint32(t, uint32(len(lost)))
	for _, q := range lost {
		t = le.AppendUint64(t, q)
	}
	j := &ckptJob{path: filepath.Join(s.dir, checkpointFile)}
	j.tmp = j.path + ".tmp"
	f, err := s.fs.Create(j.tmp)
	if err != nil {
		return nil, fmt.Errorf("wal: checkpoint %s: %w", j.tmp, err)
	}
	j.f = f
	// Streamed through a small buffer: never the whole checkpoint in memory.
	if s.key != nil {
		// Encrypted store: the subject section is sealed, in a session
		// of its own (a fresh salt: encrypt.go, package crypt).
		var sess *crypt.Session
		if sess, err = s.key.NewSession(); err == nil {
			j.size, j.place, err = index.EncodeToPlacedSealed(f, s.idx, t, sess)
		}
	} else {
		j.size, j.place, err = index.EncodeToPlaced(f, s.idx, t)
	}
	if err != nil {
		f.Close()
		s.fs.Remove(j.tmp)
		return nil, fmt.Errorf("wal: checkpoint %s: %w", j.path, err)
	}
	s.ckptBusy = true
	s.dirty = false
	s.rolls = 0
	return j, nil
}

// finishCheckpoint makes j durable and puts it in place: fsync, rename,
// directory fsync. It runs without the store lock (but may with it).
func (s *Store) finishCheckpoint(j *ckptJob) error {
	err := s.opts.Metrics.timeFsync(j.f.Sync)
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.Rename(j.tmp, j.path)
	}
	if err == nil {
		err = s.fs.SyncDir(s.dir)
	}
	if err != nil {
		s.fs.Remove(j.tmp)
		return fmt.Errorf("wal: checkpoint %s: %w", j.path, err)
	}
	return nil
}

// endCheckpointLocked ends the checkpoint in progress: on success the
// index moves to the new file's mapping; on failure the index is dirty
// again, so the next periodic or closing checkpoint writes it.
func (s *Store) endCheckpointLocked(j *ckptJob, err error) error {
	s.ckptBusy = false
	s.ckptIdle.Broadcast()
	if err != nil {
		if j.m != nil {
			j.m.Unmap()
		}
		s.dirty = true
		s.rolls = max(s.rolls, checkpointRolls)
		return err
	}
	s.adoptCheckpoint(j) // ckptload.go
	s.lastCkpt = time.Now()
	s.opts.Metrics.checkpointed()
	return nil
}
