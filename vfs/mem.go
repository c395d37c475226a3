package vfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory FS that models a disk which can lose power.
//
// It keeps two versions of everything:
//
//   - Each file (inode) has current bytes and durable bytes. File.Sync
//     copies current to durable for that file, size included.
//   - Each directory has a current entry table and a durable entry table,
//     both mapping a name to an inode. Create, Rename, Remove, RemoveAll,
//     MkdirAll and Lock (when it creates its file) change only the current
//     table; SyncDir on the directory copies current to durable.
//
// CrashClone and CrashCloneTorn build a new MemFS from the durable state
// only, which is what a machine would find on its disk after a power cut.
// The original stays usable, so a test can crash a running engine, reopen
// the clone, and compare.
//
// Paths are resolved from a single root; relative paths are taken as
// relative to "/". Permission bits are ignored. Open handles keep their
// inode across Rename and Remove, as on POSIX.
//
// A MemFS is safe for concurrent use: one mutex guards all of it. Files are
// limited to MaxMemFileSize bytes; larger sizes fail with EFBIG.
type MemFS struct {
	mu sync.Mutex
	// Guarded by mu.
	root  *inode
	locks map[*inode]bool // inodes currently locked through Lock
}

// MaxMemFileSize is the largest file a MemFS will hold. It keeps a corrupted
// length or offset from making a test allocate the machine's memory.
const MaxMemFileSize = 1 << 31

// NewMemFS returns an empty MemFS holding only the root directory "/", which
// is always durable.
func NewMemFS() *MemFS {
	return &MemFS{root: newDirInode(), locks: make(map[*inode]bool)}
}

// inode is a file or a directory. All fields are guarded by the owning
// MemFS's mu.
type inode struct {
	isDir bool

	// Directory state.
	entries        map[string]*inode // current entry table
	durableEntries map[string]*inode // entry table as of the last SyncDir

	// File state. Invariant: data[len(data):cap(data)] is all zero, and
	// cap(data) never shrinks, so a live mapping's length never exceeds it.
	data    []byte
	gen     uint64 // incremented whenever data gets a new backing array
	durable []byte // contents as of the last Sync; never aliased
	maps    map[*memMapping]struct{}
}

func newDirInode() *inode {
	return &inode{
		isDir:          true,
		entries:        make(map[string]*inode),
		durableEntries: make(map[string]*inode),
	}
}

func newFileInode() *inode {
	return &inode{maps: make(map[*memMapping]struct{})}
}

// splitPath cleans name and returns its components below the root; the root
// itself has none.
func splitPath(name string) []string {
	p := filepath.Clean("/" + name)
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

func pathErr(op, name string, err error) error {
	return &os.PathError{Op: op, Path: name, Err: err}
}

// errnoOf returns the error inside a *os.PathError made by pathErr.
func errnoOf(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// walk resolves the directories named by parts. Called with mu held.
func (m *MemFS) walk(parts []string) (*inode, error) {
	n := m.root
	for _, p := range parts {
		if !n.isDir {
			return nil, syscall.ENOTDIR
		}
		c, ok := n.entries[p]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = c
	}
	return n, nil
}

// lookup resolves name to its inode. Called with mu held.
func (m *MemFS) lookup(op, name string) (*inode, error) {
	if name == "" {
		return nil, pathErr(op, name, syscall.ENOENT)
	}
	n, err := m.walk(splitPath(name))
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	return n, nil
}

// lookupParent resolves the directory holding name and name's last
// component. The root has no parent: it fails with errRoot. Called with mu
// held.
func (m *MemFS) lookupParent(op, name string, errRoot error) (*inode, string, error) {
	if name == "" {
		return nil, "", pathErr(op, name, syscall.ENOENT)
	}
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", pathErr(op, name, errRoot)
	}
	dir, err := m.walk(parts[:len(parts)-1])
	if err == nil && !dir.isDir {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, "", pathErr(op, name, err)
	}
	return dir, parts[len(parts)-1], nil
}

// openOrCreate returns the file inode at name, creating an empty one in the
// current entry table if there is none (existed reports which); a directory
// there fails with EISDIR. Called with mu held.
func (m *MemFS) openOrCreate(name string) (n *inode, existed bool, err error) {
	dir, base, err := m.lookupParent("open", name, syscall.EISDIR)
	if err != nil {
		return nil, false, err
	}
	n, ok := dir.entries[base]
	switch {
	case !ok:
		n = newFileInode()
		dir.entries[base] = n
	case n.isDir:
		return nil, false, pathErr("open", name, syscall.EISDIR)
	}
	return n, ok, nil
}

// Create creates or truncates the named file. Truncating an existing file
// keeps its inode (and so its directory entries); the new length becomes
// durable at the next Sync.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, existed, err := m.openOrCreate(name)
	if err != nil {
		return nil, err
	}
	if existed {
		n.resize(0)
	}
	return &memFile{fs: m, name: name, ino: n, writable: true}, nil
}

// Open opens the named file read-only. Directories cannot be opened.
func (m *MemFS) Open(name string) (File, error) { return m.open(name, false) }

// OpenRW opens an existing file for reading and writing.
func (m *MemFS) OpenRW(name string) (File, error) { return m.open(name, true) }

func (m *MemFS) open(name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return nil, pathErr("open", name, syscall.EISDIR)
	}
	return &memFile{fs: m, name: name, ino: n, writable: writable}, nil
}

// Remove removes the named file or empty directory from its parent's current
// entry table. Open handles keep working.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, base, err := m.lookupParent("remove", name, syscall.EBUSY)
	if err != nil {
		return err
	}
	n, ok := dir.entries[base]
	if !ok {
		return pathErr("remove", name, syscall.ENOENT)
	}
	if n.isDir && len(n.entries) > 0 {
		return pathErr("remove", name, syscall.ENOTEMPTY)
	}
	delete(dir.entries, base)
	return nil
}

// RemoveAll removes name and everything below it; a missing name is not an
// error. Only the entry in name's parent changes: the subtree becomes
// unreachable, which is all a crash can observe once the parent is synced.
func (m *MemFS) RemoveAll(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name == "" {
		return nil
	}
	dir, base, err := m.lookupParent("unlinkat", name, syscall.EBUSY)
	if err != nil {
		if e := errnoOf(err); e == syscall.ENOENT || e == syscall.ENOTDIR {
			return nil
		}
		return err
	}
	delete(dir.entries, base)
	return nil
}

// Rename moves oldname to newname, replacing newname atomically. Each of the
// two directories records its half of the change in its current table; the
// halves become durable independently, at SyncDir of each directory.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	linkErr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	odir, obase, err := m.lookupParent("rename", oldname, syscall.EBUSY)
	if err != nil {
		return linkErr(errnoOf(err))
	}
	n, ok := odir.entries[obase]
	if !ok {
		return linkErr(syscall.ENOENT)
	}
	ndir, nbase, err := m.lookupParent("rename", newname, syscall.EBUSY)
	if err != nil {
		return linkErr(errnoOf(err))
	}
	if n.isDir && isBelow(ndir, n, make(map[*inode]bool)) {
		return linkErr(syscall.EINVAL)
	}
	if old, ok := ndir.entries[nbase]; ok {
		if old == n {
			return nil
		}
		switch {
		case n.isDir && !old.isDir:
			return linkErr(syscall.ENOTDIR)
		case !n.isDir && old.isDir:
			return linkErr(syscall.EISDIR)
		case old.isDir && len(old.entries) > 0:
			return linkErr(syscall.ENOTEMPTY)
		}
	}
	delete(odir.entries, obase)
	ndir.entries[nbase] = n
	return nil
}

// isBelow reports whether d is dir or lies below it in the current tree.
// visited guards against cycles, which a crash clone can contain when two
// directory renames were synced in only some of their directories. Called
// with mu held.
func isBelow(d, dir *inode, visited map[*inode]bool) bool {
	if d == dir {
		return true
	}
	visited[dir] = true
	for _, c := range dir.entries {
		if c.isDir && !visited[c] && isBelow(d, c, visited) {
			return true
		}
	}
	return false
}

// MkdirAll creates dir and any missing parents. Each new directory's entry
// becomes durable at SyncDir of its parent. perm is ignored.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dir == "" {
		return pathErr("mkdir", dir, syscall.ENOENT)
	}
	n := m.root
	for _, p := range splitPath(dir) {
		c, ok := n.entries[p]
		if !ok {
			c = newDirInode()
			n.entries[p] = c
		} else if !c.isDir {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
		n = c
	}
	return nil
}

// ReadDir lists the current names in dir, sorted.
func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("open", dir)
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, pathErr("readdirent", dir, syscall.ENOTDIR)
	}
	names := make([]string, 0, len(n.entries))
	for name := range n.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// Stat reports a file's current size, or that name is a directory (size 0).
func (m *MemFS) Stat(name string) (FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("stat", name)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Name: filepath.Base(name), Size: int64(len(n.data)), IsDir: n.isDir}, nil
}

// SyncDir makes dir's current entry table durable. Only dir's own entries
// change: subdirectories and file contents keep their own durability.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.lookup("open", dir)
	if err != nil {
		return err
	}
	if !n.isDir {
		return pathErr("fsync", dir, syscall.ENOTDIR)
	}
	n.durableEntries = make(map[string]*inode, len(n.entries))
	for k, v := range n.entries {
		n.durableEntries[k] = v
	}
	return nil
}

// Lock takes an in-process exclusive lock on the named file, creating it (in
// the current entry table) if needed. A second Lock of the same file fails
// with EWOULDBLOCK until the first is closed. Locks do not survive
// CrashClone, as locks do not survive a reboot.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, _, err := m.openOrCreate(name)
	if err != nil {
		return nil, err
	}
	if m.locks[n] {
		return nil, fmt.Errorf("vfs: lock %s: %w (is another jetwal using this directory?)", name, syscall.EWOULDBLOCK)
	}
	m.locks[n] = true
	return &memLock{fs: m, ino: n, name: name}, nil
}

type memLock struct {
	fs   *MemFS
	ino  *inode
	name string
	// Guarded by fs.mu.
	closed bool
}

func (l *memLock) Close() error {
	l.fs.mu.Lock()
	defer l.fs.mu.Unlock()
	if l.closed {
		return pathErr("close", l.name, os.ErrClosed)
	}
	l.closed = true
	delete(l.fs.locks, l.ino)
	return nil
}
