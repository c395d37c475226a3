package vfs

import (
	"io"
	"os"
	"syscall"
)

// memFile is an open MemFS file. It holds its inode, not its name, so it
// keeps working after the name is renamed or removed.
type memFile struct {
	fs       *MemFS
	name     string
	ino      *inode
	writable bool
	// Guarded by fs.mu.
	off    int64 // offset used by Write
	closed bool
}

// check returns the error for op on a closed or read-only file. Called with
// fs.mu held.
func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return pathErr(op, f.name, os.ErrClosed)
	}
	if write && !f.writable {
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close", false); err != nil {
		return err
	}
	f.closed = true
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("readat", f.name, syscall.EINVAL)
	}
	data := f.ino.data
	if off >= int64(len(data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("writeat", f.name, syscall.EINVAL)
	}
	if err := f.ino.writeAt(p, off); err != nil {
		return 0, pathErr("write", f.name, err)
	}
	return len(p), nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if err := f.ino.writeAt(p, f.off); err != nil {
		return 0, pathErr("write", f.name, err)
	}
	f.off += int64(len(p))
	return len(p), nil
}

// Sync makes this file's current contents and size durable. It works on
// read-only handles too, as fdatasync does.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fdatasync", false); err != nil {
		return err
	}
	f.ino.durable = append(f.ino.durable[:0], f.ino.data...)
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if size > MaxMemFileSize {
		return pathErr("truncate", f.name, syscall.EFBIG)
	}
	f.ino.resize(size)
	return nil
}

// Allocate extends the file with zero bytes to at least off+length, as
// fallocate mode 0 does. It never returns ErrAllocUnsupported.
func (f *memFile) Allocate(off, length int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("fallocate", true); err != nil {
		return err
	}
	if off < 0 || length < 0 {
		return pathErr("fallocate", f.name, syscall.EINVAL)
	}
	end := off + length
	if end > MaxMemFileSize || end < off {
		return pathErr("fallocate", f.name, syscall.EFBIG)
	}
	if end > int64(len(f.ino.data)) {
		f.ino.resize(end)
	}
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return 0, err
	}
	return int64(len(f.ino.data)), nil
}

// Map returns a view of the file's bytes [0, length). Writes, truncations
// and allocations made later through any handle are visible in the view for
// as long as it is mapped; bytes past the end of the file read as zero (a
// real mapping would fault there). The view must not be used after Unmap:
// Go cannot revoke it, so such use is a caller bug that goes unnoticed.
// Callers must not write to the view.
func (f *memFile) Map(length int) (Mapping, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("mmap", false); err != nil {
		return nil, err
	}
	if length < 0 {
		return nil, pathErr("mmap", f.name, syscall.EINVAL)
	}
	if length > MaxMemFileSize {
		return nil, pathErr("mmap", f.name, syscall.EFBIG)
	}
	if length == 0 {
		return &memMapping{fs: f.fs}, nil
	}
	n := f.ino
	n.ensureCap(int64(length))
	mp := &memMapping{fs: f.fs, ino: n, buf: n.data[:length:length], gen: n.gen}
	n.maps[mp] = struct{}{}
	return mp, nil
}

// memMapping is a MemFS mapping. While its gen matches its inode's, buf
// shares the inode's backing array and sees every write directly; once the
// inode's array has been replaced, the inode copies each change into buf
// (see inode.mirror).
type memMapping struct {
	fs  *MemFS
	ino *inode // nil for an empty mapping
	gen uint64
	// Guarded by fs.mu.
	buf []byte
}

// Bytes returns the view, or nil after Unmap.
func (mp *memMapping) Bytes() []byte {
	mp.fs.mu.Lock()
	defer mp.fs.mu.Unlock()
	return mp.buf
}

// Cool does nothing: the memory is the file.
func (mp *memMapping) Cool() {}

// CoolRange does nothing, as Cool.
func (mp *memMapping) CoolRange(off, length int) {}

// Unmap releases the view. Unmapping twice is harmless.
func (mp *memMapping) Unmap() error {
	mp.fs.mu.Lock()
	defer mp.fs.mu.Unlock()
	if mp.ino != nil {
		delete(mp.ino.maps, mp)
	}
	mp.buf = nil
	return nil
}

// ensureCap makes cap(n.data) at least c, moving data to a new zeroed array
// if needed. Called with fs.mu held.
func (n *inode) ensureCap(c int64) {
	if c <= int64(cap(n.data)) {
		return
	}
	nc := max(c, 2*int64(cap(n.data)))
	nc = min(nc, max(c, MaxMemFileSize))
	buf := make([]byte, len(n.data), nc)
	copy(buf, n.data)
	n.data = buf
	n.gen++
}

// resize sets the file's length, zero-filling any growth and zeroing bytes
// cut off by a shrink (which keeps data[len:cap] zero, as the invariant
// requires). Called with fs.mu held; size must be within MaxMemFileSize.
func (n *inode) resize(size int64) {
	old := int64(len(n.data))
	switch {
	case size < old:
		clear(n.data[size:old])
		n.data = n.data[:size]
		n.mirror(size, old)
	case size > old:
		n.ensureCap(size)
		n.data = n.data[:size] // already zero by the invariant
		n.mirror(old, size)
	}
}

// writeAt writes p at off, growing the file as needed. Called with fs.mu
// held.
func (n *inode) writeAt(p []byte, off int64) error {
	end := off + int64(len(p))
	if end > MaxMemFileSize || end < off {
		return syscall.EFBIG
	}
	if end > int64(len(n.data)) {
		n.resize(end)
	}
	copy(n.data[off:end], p)
	n.mirror(off, end)
	return nil
}

// mirror copies the file range [lo, hi) into every live mapping whose view
// no longer shares the inode's backing array. Bytes past the end of the file
// are zero in data[:cap], and cap never shrinks, so it covers every view.
// Called with fs.mu held.
func (n *inode) mirror(lo, hi int64) {
	full := n.data[:cap(n.data)]
	for mp := range n.maps {
		if mp.gen == n.gen {
			continue
		}
		l := int64(len(mp.buf))
		if lo >= l {
			continue
		}
		h := min(hi, l)
		copy(mp.buf[lo:h], full[lo:h])
	}
}
