package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Op names a kind of filesystem operation that ErrorFS can fail.
type Op int

// The operations ErrorFS can fail. Each FS or File method belongs to exactly
// one Op.
const (
	OpCreate   Op = iota // FS.Create
	OpOpen               // FS.Open, FS.OpenRW
	OpWrite              // File.Write, File.WriteAt
	OpSync               // File.Sync
	OpSyncDir            // FS.SyncDir
	OpRename             // FS.Rename (Path matches either name)
	OpRemove             // FS.Remove, FS.RemoveAll
	OpTruncate           // File.Truncate
	OpAllocate           // File.Allocate
	OpMap                // File.Map
	OpRead               // File.ReadAt
	OpMkdirAll           // FS.MkdirAll
	OpReadDir            // FS.ReadDir
	OpStat               // FS.Stat, File.Size
	OpLock               // FS.Lock
	OpClose              // File.Close (the inner file is still closed)
)

var opNames = [...]string{
	OpCreate:   "create",
	OpOpen:     "open",
	OpWrite:    "write",
	OpSync:     "sync",
	OpSyncDir:  "syncdir",
	OpRename:   "rename",
	OpRemove:   "remove",
	OpTruncate: "truncate",
	OpAllocate: "allocate",
	OpMap:      "map",
	OpRead:     "read",
	OpMkdirAll: "mkdirall",
	OpReadDir:  "readdir",
	OpStat:     "stat",
	OpLock:     "lock",
	OpClose:    "close",
}

func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Fault describes when and how ErrorFS fails an operation.
type Fault struct {
	Op   Op
	Path string // substring of the path to match; "" matches any path
	// After is how many matching operations succeed before the fault fires.
	// Every matching operation counts, including ones another fault failed.
	After int
	// Times is how many times the fault fires; 0 means every matching
	// operation from then on (a sticky fault).
	Times int
	// Err is the error returned, wrapped in *os.PathError so errors.Is sees
	// it (syscall.ENOSPC, syscall.EIO, ...). Nil means syscall.EIO. For
	// OpAllocate, ErrAllocUnsupported is returned bare, as Default does.
	Err error
	// Short makes an OpWrite write the first half of its bytes (rounded
	// down) to the inner file before returning Err with that count.
	Short bool
}

// ErrorFS wraps an FS and fails chosen operations. Every File it returns is
// wrapped too, so file-level operations are matched against the file's name.
// When a fault fires, the inner operation is not performed (except for short
// writes and Close, see Fault and OpClose).
//
// An ErrorFS is safe for concurrent use; faults can be injected and cleared
// while other goroutines use it.
type ErrorFS struct {
	inner FS

	mu sync.Mutex
	// Guarded by mu.
	faults   []*faultState
	injected int // errors returned so far
}

type faultState struct {
	Fault
	seen  int // matching operations so far
	fired int
}

// NewErrorFS returns an ErrorFS over inner with no faults.
func NewErrorFS(inner FS) *ErrorFS { return &ErrorFS{inner: inner} }

// Inject adds a fault. Faults are checked in the order they were added; an
// operation fails with the first one that fires.
func (e *ErrorFS) Inject(f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, &faultState{Fault: f})
}

// Clear removes every fault. The count returned by Injected is kept.
func (e *ErrorFS) Clear() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// Inner returns the wrapped FS.
func (e *ErrorFS) Inner() FS { return e.inner }

// Injected returns how many operations have failed with an injected error
// since the ErrorFS was made.
func (e *ErrorFS) Injected() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.injected
}

// check counts op on the given paths against every fault and returns the
// first fault that fires, or nil.
func (e *ErrorFS) check(op Op, paths ...string) *Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	var hit *Fault
	for _, f := range e.faults {
		if f.Op != op || !matchPath(f.Path, paths) {
			continue
		}
		f.seen++
		if hit != nil || f.seen <= f.After || (f.Times > 0 && f.fired >= f.Times) {
			continue
		}
		f.fired++
		hit = &f.Fault
	}
	if hit != nil {
		e.injected++
	}
	return hit
}

func matchPath(sub string, paths []string) bool {
	if sub == "" {
		return true
	}
	for _, p := range paths {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

// faultErr builds the error a fired fault returns for op on path.
func faultErr(f *Fault, op Op, path string) error {
	err := f.Err
	if err == nil {
		err = syscall.EIO
	}
	if op == OpAllocate && errors.Is(err, ErrAllocUnsupported) {
		return err
	}
	return &os.PathError{Op: op.String(), Path: path, Err: err}
}

// fail returns the injected error for op on name, or nil.
func (e *ErrorFS) fail(op Op, name string) error {
	if f := e.check(op, name); f != nil {
		return faultErr(f, op, name)
	}
	return nil
}

func (e *ErrorFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{fs: e, f: f}, nil
}

// Create fails with an injected OpCreate fault or calls the inner Create.
func (e *ErrorFS) Create(name string) (File, error) {
	if err := e.fail(OpCreate, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Create(name))
}

// Open fails with an injected OpOpen fault or calls the inner Open.
func (e *ErrorFS) Open(name string) (File, error) {
	if err := e.fail(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Open(name))
}

// OpenRW fails with an injected OpOpen fault or calls the inner OpenRW.
func (e *ErrorFS) OpenRW(name string) (File, error) {
	if err := e.fail(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.OpenRW(name))
}

// Remove fails with an injected OpRemove fault or calls the inner Remove.
func (e *ErrorFS) Remove(name string) error {
	if err := e.fail(OpRemove, name); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

// RemoveAll fails with an injected OpRemove fault or calls the inner RemoveAll.
func (e *ErrorFS) RemoveAll(name string) error {
	if err := e.fail(OpRemove, name); err != nil {
		return err
	}
	return e.inner.RemoveAll(name)
}

// Rename fails with an injected OpRename fault matching either name, or
// calls the inner Rename.
func (e *ErrorFS) Rename(oldname, newname string) error {
	if f := e.check(OpRename, oldname, newname); f != nil {
		return faultErr(f, OpRename, oldname)
	}
	return e.inner.Rename(oldname, newname)
}

// MkdirAll fails with an injected OpMkdirAll fault or calls the inner MkdirAll.
func (e *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.fail(OpMkdirAll, dir); err != nil {
		return err
	}
	return e.inner.MkdirAll(dir, perm)
}

// ReadDir fails with an injected OpReadDir fault or calls the inner ReadDir.
func (e *ErrorFS) ReadDir(dir string) ([]string, error) {
	if err := e.fail(OpReadDir, dir); err != nil {
		return nil, err
	}
	return e.inner.ReadDir(dir)
}

// Stat fails with an injected OpStat fault or calls the inner Stat.
func (e *ErrorFS) Stat(name string) (FileInfo, error) {
	if err := e.fail(OpStat, name); err != nil {
		return FileInfo{}, err
	}
	return e.inner.Stat(name)
}

// SyncDir fails with an injected OpSyncDir fault or calls the inner SyncDir.
func (e *ErrorFS) SyncDir(dir string) error {
	if err := e.fail(OpSyncDir, dir); err != nil {
		return err
	}
	return e.inner.SyncDir(dir)
}

// Lock fails with an injected OpLock fault or calls the inner Lock.
func (e *ErrorFS) Lock(name string) (io.Closer, error) {
	if err := e.fail(OpLock, name); err != nil {
		return nil, err
	}
	return e.inner.Lock(name)
}
