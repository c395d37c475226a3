package consumerstate

import (
	"io"
	"os"
	"sync"

	"github.com/jetwal/jetwal/vfs"
)

// hookFS wraps an FS and calls hook before every operation, with whether
// the operation can change the disk.
type hookFS struct {
	inner vfs.FS
	hook  func(op, path string, mutating bool)
}

func (h *hookFS) call(op, path string, mut bool) { h.hook(op, path, mut) }

func (h *hookFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: h}, nil
}

func (h *hookFS) Create(name string) (vfs.File, error) {
	h.call("create", name, true)
	return h.wrap(h.inner.Create(name))
}
func (h *hookFS) Open(name string) (vfs.File, error) {
	h.call("open", name, false)
	return h.wrap(h.inner.Open(name))
}
func (h *hookFS) OpenRW(name string) (vfs.File, error) {
	h.call("openrw", name, false)
	return h.wrap(h.inner.OpenRW(name))
}
func (h *hookFS) Remove(name string) error { h.call("remove", name, true); return h.inner.Remove(name) }
func (h *hookFS) RemoveAll(name string) error {
	h.call("removeall", name, true)
	return h.inner.RemoveAll(name)
}
func (h *hookFS) Rename(o, n string) error { h.call("rename", o, true); return h.inner.Rename(o, n) }
func (h *hookFS) MkdirAll(dir string, perm os.FileMode) error {
	h.call("mkdir", dir, true)
	return h.inner.MkdirAll(dir, perm)
}
func (h *hookFS) ReadDir(dir string) ([]string, error) {
	h.call("readdir", dir, false)
	return h.inner.ReadDir(dir)
}
func (h *hookFS) Stat(name string) (vfs.FileInfo, error) {
	h.call("stat", name, false)
	return h.inner.Stat(name)
}
func (h *hookFS) SyncDir(dir string) error { h.call("syncdir", dir, true); return h.inner.SyncDir(dir) }
func (h *hookFS) Lock(name string) (io.Closer, error) {
	h.call("lock", name, false)
	return h.inner.Lock(name)
}

type hookFile struct {
	vfs.File
	fs *hookFS
}

func (f *hookFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.call("read", f.Name(), false)
	return f.File.ReadAt(p, off)
}
func (f *hookFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.call("write", f.Name(), true)
	return f.File.WriteAt(p, off)
}
func (f *hookFile) Write(p []byte) (int, error) {
	f.fs.call("write", f.Name(), true)
	return f.File.Write(p)
}
func (f *hookFile) Sync() error { f.fs.call("sync", f.Name(), true); return f.File.Sync() }
func (f *hookFile) Truncate(n int64) error {
	f.fs.call("truncate", f.Name(), true)
	return f.File.Truncate(n)
}

// countFS counts operations through a hookFS.
type countFS struct {
	mu       sync.Mutex
	all, mut int
	ops      []string
}

func newCountFS(inner vfs.FS) (*hookFS, *countFS) {
	c := &countFS{}
	return &hookFS{inner: inner, hook: func(op, path string, mut bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.all++
		if mut {
			c.mut++
			c.ops = append(c.ops, op+" "+path)
		}
	}}, c
}

func (c *countFS) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all, c.mut, c.ops = 0, 0, nil
}

func (c *countFS) counts() (all, mut int, ops []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all, c.mut, append([]string(nil), c.ops...)
}
