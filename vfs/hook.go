package vfs

import (
	"io"
	"os"
)

// HookFS wraps an FS and calls Hook before every operation, on the FS and
// on the files it opens, with whether the operation can change the disk.
// Crash-point tests use it to stop the world before each write, sync,
// rename or remove (for example by taking a MemFS.CrashClone there).
type HookFS struct {
	Inner FS
	Hook  func(op, path string, mutating bool)
}

func (h *HookFS) call(op, path string, mut bool) {
	if h.Hook != nil {
		h.Hook(op, path, mut)
	}
}

func (h *HookFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: h}, nil
}

func (h *HookFS) Create(name string) (File, error) {
	h.call("create", name, true)
	return h.wrap(h.Inner.Create(name))
}

func (h *HookFS) Open(name string) (File, error) {
	h.call("open", name, false)
	return h.wrap(h.Inner.Open(name))
}

func (h *HookFS) OpenRW(name string) (File, error) {
	h.call("openrw", name, false)
	return h.wrap(h.Inner.OpenRW(name))
}

func (h *HookFS) Remove(name string) error {
	h.call("remove", name, true)
	return h.Inner.Remove(name)
}

func (h *HookFS) RemoveAll(name string) error {
	h.call("removeall", name, true)
	return h.Inner.RemoveAll(name)
}

func (h *HookFS) Rename(oldname, newname string) error {
	h.call("rename", oldname, true)
	return h.Inner.Rename(oldname, newname)
}

func (h *HookFS) MkdirAll(dir string, perm os.FileMode) error {
	h.call("mkdir", dir, true)
	return h.Inner.MkdirAll(dir, perm)
}

func (h *HookFS) ReadDir(dir string) ([]string, error) {
	h.call("readdir", dir, false)
	return h.Inner.ReadDir(dir)
}

func (h *HookFS) Stat(name string) (FileInfo, error) {
	h.call("stat", name, false)
	return h.Inner.Stat(name)
}

func (h *HookFS) SyncDir(dir string) error {
	h.call("syncdir", dir, true)
	return h.Inner.SyncDir(dir)
}

func (h *HookFS) Lock(name string) (io.Closer, error) {
	h.call("lock", name, false)
	return h.Inner.Lock(name)
}

type hookFile struct {
	File
	fs *HookFS
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

func (f *hookFile) Sync() error {
	f.fs.call("sync", f.Name(), true)
	return f.File.Sync()
}

func (f *hookFile) Truncate(n int64) error {
	f.fs.call("truncate", f.Name(), true)
	return f.File.Truncate(n)
}

func (f *hookFile) Allocate(off, length int64) error {
	f.fs.call("allocate", f.Name(), true)
	return f.File.Allocate(off, length)
}
