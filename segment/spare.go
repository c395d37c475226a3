package segment

import (
	"fmt"
	"path/filepath"

	"github.com/jetwal/jetwal/crypt"

	"github.com/jetwal/jetwal/vfs"
)

// SpareName is the file name of a spare: it ends in ".tmp", so recovery
// removes one that a crash left behind (it never holds a record).
const SpareName = "spare.seg.tmp"

// Spare is an empty segment file made ahead of a roll: created,
// preallocated, mapped and synced (its directory entry too), so that the
// roll that takes it does no more than write a header and rename it.
// Creating a file costs a few milliseconds on a busy disk (the allocation
// and the syncs wait for the file system's journal); made by a background
// goroutine, that time is off the path of the appends.
type Spare struct {
	fs       vfs.FS
	dir      string
	path     string
	f        vfs.File
	m        vfs.Mapping
	capacity int64
}

// CreateSpare makes a spare of capacity bytes in dir, replacing any
// earlier spare file there.
func CreateSpare(fs vfs.FS, dir string, capacity int64) (*Spare, error) {
	path := filepath.Join(dir, SpareName)
	f, m, err := prepareFile(fs, dir, path, capacity, nil)
	if err != nil {
		return nil, err
	}
	return &Spare{fs: fs, dir: dir, path: path, f: f, m: m, capacity: capacity}, nil
}

// Capacity is the bytes the spare reserves.
func (sp *Spare) Capacity() int64 { return sp.capacity }

// Use turns the spare into the segment for sequences from base: it writes
// the header and renames the file to the segment's name. Neither is
// durable yet: the segment's first Sync, SyncFile or Finish syncs the file
// and then its directory, so nothing in it counts as durable before its
// name does. A crash before that leaves the spare's name (removed at
// recovery) or the segment's name with a header of zeros or of base (a new
// last segment, which recovery handles as any other). On an error the spare
// is discarded.
func (sp *Spare) Use(base uint64, created int64) (*Segment, error) {
	return sp.UseKey(base, created, nil)
}

// UseKey is Use for an encrypted segment whose records key seals (nil:
// plain).
func (sp *Spare) UseKey(base uint64, created int64, key *crypt.DataKey) (*Segment, error) {
	path := filepath.Join(sp.dir, FileName(base, false))
	if _, err := sp.f.WriteAt(encodeHeader(base, created, keyFlags(key)), 0); err != nil {
		sp.Discard()
		return nil, fmt.Errorf("segment: write header %s: %w", sp.path, err)
	}
	if err := sp.fs.Rename(sp.path, path); err != nil {
		sp.Discard()
		return nil, fmt.Errorf("segment: rename %s to %s: %w", sp.path, path, err)
	}
	s := newWritable(sp.fs, path, sp.f, true, sp.m, base, created, sp.capacity, key)
	s.nameUnsynced.Store(true)
	sp.f, sp.m = nil, nil
	return s, nil
}

// Discard closes the spare and deletes its file (the removal is not
// synced: a spare left behind is removed at recovery).
func (sp *Spare) Discard() error {
	var err error
	if sp.m != nil {
		err = sp.m.Unmap()
		sp.m = nil
	}
	if sp.f == nil {
		return err
	}
	if cerr := sp.f.Close(); err == nil {
		err = cerr
	}
	sp.f = nil
	if rerr := sp.fs.Remove(sp.path); err == nil && rerr != nil {
		err = fmt.Errorf("segment: remove %s: %w", sp.path, rerr)
	}
	return err
}
