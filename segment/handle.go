package segment

import (
	"fmt"
	"sync"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// IdleClose is how long a segment's file descriptor stays open unused. A
// segment is read through its mapping, which stays valid without the
// descriptor, so the descriptor is needed only to write, sync, trim or
// pread; a segment left alone that long gives it back (fileHandle), and
// its next write opens the file again. A server holding thousands of
// streams keeps a descriptor for the segments in use, not for every one.
const IdleClose = 2 * time.Second

// fileHandle is a segment's file, opened again on demand. Every call
// holds the descriptor for its duration (users), so it is safe for
// concurrent use and a descriptor is never closed under a call. The
// descriptor is closed once it was not used for IdleClose and everything
// written through it was synced since: closing it then drops nothing the
// next fsync (on a descriptor opened again: fsync covers the file, not the
// descriptor) would have had to write, and no writeback error can hide in
// between.
type fileHandle struct {
	fs       vfs.FS
	path     string
	readOnly bool // opened with Open: a compressed segment

	mu      sync.Mutex
	f       vfs.File // nil while released
	users   int      // calls using f now
	uses    uint64   // calls so far
	seen    uint64   // uses when the idle timer was armed
	written uint64   // writes so far (WriteAt, Truncate, Allocate)
	synced  uint64   // written when the last successful Sync began
	timer   *time.Timer
	closed  bool
}

// newHandle wraps f, open on path. dirty says f was written and not
// synced yet.
func newHandle(fs vfs.FS, path string, f vfs.File, readOnly, dirty bool) *fileHandle {
	h := &fileHandle{fs: fs, path: path, readOnly: readOnly, f: f}
	if dirty {
		h.written = 1
	}
	h.timer = time.AfterFunc(IdleClose, h.idle)
	return h
}

// acquire returns the open descriptor, opening the file again if it was
// released; release must follow.
func (h *fileHandle) acquire() (vfs.File, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("segment: %s: file closed", h.path)
	}
	if h.f == nil {
		open := h.fs.OpenRW
		if h.readOnly {
			open = h.fs.Open
		}
		f, err := open(h.path)
		if err != nil {
			return nil, fmt.Errorf("segment: reopen %s: %w", h.path, err)
		}
		h.f = f
		h.seen = h.uses
		h.timer.Reset(IdleClose)
	}
	h.users++
	h.uses++
	return h.f, nil
}

func (h *fileHandle) release(wrote bool) {
	h.mu.Lock()
	h.users--
	if wrote {
		h.written++
	}
	h.mu.Unlock()
}

// idle closes the descriptor if it was not used since the timer was armed
// and holds nothing unsynced; otherwise it looks again later while the
// descriptor is open.
func (h *fileHandle) idle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.f == nil {
		return
	}
	if h.users > 0 || h.uses != h.seen || h.written != h.synced {
		h.seen = h.uses
		h.timer.Reset(IdleClose)
		return
	}
	_ = h.f.Close() // nothing unsynced: a close error loses nothing
	h.f = nil
}

// ReadAt is the file's pread.
func (h *fileHandle) ReadAt(b []byte, off int64) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release(false)
	return f.ReadAt(b, off)
}

// WriteAt is the file's pwrite.
func (h *fileHandle) WriteAt(b []byte, off int64) (int, error) {
	f, err := h.acquire()
	if err != nil {
		return 0, err
	}
	defer h.release(true)
	return f.WriteAt(b, off)
}

// Truncate sets the file's size.
func (h *fileHandle) Truncate(size int64) error {
	f, err := h.acquire()
	if err != nil {
		return err
	}
	defer h.release(true)
	return f.Truncate(size)
}

// Allocate reserves disk blocks (vfs.File.Allocate).
func (h *fileHandle) Allocate(off, length int64) error {
	f, err := h.acquire()
	if err != nil {
		return err
	}
	defer h.release(true)
	return f.Allocate(off, length)
}

// Map maps the file (vfs.File.Map); the mapping outlives the descriptor.
func (h *fileHandle) Map(length int) (vfs.Mapping, error) {
	f, err := h.acquire()
	if err != nil {
		return nil, err
	}
	defer h.release(false)
	return f.Map(length)
}

// Sync makes the file durable: everything written through the handle
// before it began, whichever descriptor wrote it.
func (h *fileHandle) Sync() error {
	f, err := h.acquire()
	if err != nil {
		return err
	}
	h.mu.Lock()
	gen := h.written
	h.mu.Unlock()
	err = f.Sync()
	h.mu.Lock()
	h.users--
	if err == nil && gen > h.synced {
		h.synced = gen
	}
	h.mu.Unlock()
	return err
}

// Close closes the descriptor for good.
func (h *fileHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.timer.Stop()
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}
