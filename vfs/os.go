package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	mmap "github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) OpenRW(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                 { return os.RemoveAll(name) }
func (osFS) Rename(o, n string) error                    { return os.Rename(o, n) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

func (osFS) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) Stat(name string) (FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Name: filepath.Base(name), Size: fi.Size(), IsDir: fi.IsDir()}, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

type flock struct{ f *os.File }

func (l flock) Close() error {
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	return l.f.Close()
}

func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("vfs: lock %s: %w (is another jetwal using this directory?)", name, err)
	}
	return flock{f}, nil
}

type osFile struct{ f *os.File }

func (o *osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o *osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o *osFile) Write(p []byte) (int, error)              { return o.f.Write(p) }
func (o *osFile) Close() error                             { return o.f.Close() }
func (o *osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o *osFile) Name() string                             { return o.f.Name() }

// Sync uses fdatasync: the engine never depends on file metadata other than
// size, which fdatasync covers.
func (o *osFile) Sync() error {
	for {
		err := unix.Fdatasync(int(o.f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: o.f.Name(), Err: err}
			}
			return nil
		}
	}
}

// Allocate calls fallocate mode 0, which extends the file size. A zero
// length is a no-op (fallocate itself rejects it with EINVAL).
func (o *osFile) Allocate(off, length int64) error {
	if length == 0 && off >= 0 {
		return nil
	}
	for {
		err := unix.Fallocate(int(o.f.Fd()), 0, off, length)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return ErrAllocUnsupported
		default:
			return &os.PathError{Op: "fallocate", Path: o.f.Name(), Err: err}
		}
	}
}

func (o *osFile) Size() (int64, error) {
	fi, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

type osMapping struct {
	m    mmap.MMap
	name string // file the mapping came from, for errors
}

func (m *osMapping) Bytes() []byte { return m.m }

// Cool drops the pages from the resident set (madvise MADV_DONTNEED: for a
// read-only shared file mapping the page cache keeps them).
func (m *osMapping) Cool() {
	if len(m.m) > 0 {
		_ = unix.Madvise(m.m, unix.MADV_DONTNEED)
	}
}

// CoolRange is Cool for the whole pages that hold [off, off+length).
func (m *osMapping) CoolRange(off, length int) {
	end := min(off+length, len(m.m))
	off = max(off, 0) &^ (os.Getpagesize() - 1)
	if off < end {
		_ = unix.Madvise(m.m[off:end], unix.MADV_DONTNEED)
	}
}

// Unmap releases the mapping. An empty mapping (Map(0), or one already
// unmapped) owns no memory: munmap would reject it with EINVAL, so it is a
// no-op.
func (m *osMapping) Unmap() error {
	if len(m.m) == 0 {
		return nil
	}
	if err := m.m.Unmap(); err != nil {
		return &os.PathError{Op: "munmap", Path: m.name, Err: err}
	}
	return nil
}

func (o *osFile) Map(length int) (Mapping, error) {
	switch {
	case length < 0:
		// mmap-go would map the whole file; the interface means length bytes.
		return nil, &os.PathError{Op: "mmap", Path: o.f.Name(), Err: unix.EINVAL}
	case length == 0:
		return &osMapping{}, nil
	}
	m, err := mmap.MapRegion(o.f, length, mmap.RDONLY, 0, 0)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: o.f.Name(), Err: err}
	}
	return &osMapping{m: m, name: o.f.Name()}, nil
}
