package jetstream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/jetwal/jetwal/vfs"
)

// lockFile, in <store>/jetstream, is held (flock) by the one process that
// serves the store, for as long as it runs. It holds that process's pid so
// that a second process can say who has the store.
const lockFile = "LOCK"

// ErrStoreLocked is wrapped by New's error when another process serves the
// store directory.
var ErrStoreLocked = errors.New("jetstream: store directory in use by another process")

// lockStore takes the store's lock before anything in it is read or
// written: two processes appending to the same segments would destroy them.
func lockStore(fs vfs.FS, storeDir string) (io.Closer, error) {
	dir := filepath.Join(storeDir, "jetstream")
	if err := vfs.MkdirAllSync(fs, dir, dirPerm); err != nil {
		return nil, fmt.Errorf("jetstream: create store directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	l, err := fs.Lock(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is locked by %s (%v)", ErrStoreLocked, dir, lockHolder(fs, path), err)
	}
	if err := writeHolder(fs, path); err != nil {
		l.Close()
		return nil, fmt.Errorf("jetstream: %s: %w", path, err)
	}
	return l, nil
}

// writeHolder records this process's pid in the lock file.
func writeHolder(fs vfs.FS, path string) error {
	f, err := fs.OpenRW(path)
	if err != nil {
		return err
	}
	line := "pid " + strconv.Itoa(os.Getpid()) + "\n"
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteAt([]byte(line), 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lockHolder names the process recorded in the lock file, as well as it
// can.
func lockHolder(fs vfs.FS, path string) string {
	f, err := fs.Open(path)
	if err != nil {
		return "another process"
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, ok := strings.CutPrefix(strings.TrimSpace(string(b[:n])), "pid ")
	if _, err := strconv.Atoi(pid); !ok || err != nil {
		return "another process"
	}
	return "process " + pid
}

// StoreLock is a store directory's lock shared by the JetStreams of several
// accounts in one process: LockStore takes it once, each New given it in
// Config.StoreLock holds a reference, and the flock goes when the last of
// them (LockStore's caller included) closes.
type StoreLock struct {
	mu   sync.Mutex
	l    io.Closer
	dir  string // the store directory it locks
	refs int
}

// LockStore takes the lock of the store directory storeDir (as New does)
// for sharing between JetStreams (Config.StoreLock). Close releases the
// caller's reference.
func LockStore(fs vfs.FS, storeDir string) (*StoreLock, error) {
	if fs == nil {
		fs = vfs.Default
	}
	l, err := lockStore(fs, storeDir)
	if err != nil {
		return nil, err
	}
	return &StoreLock{l: l, dir: filepath.Clean(storeDir), refs: 1}, nil
}

// share returns the lock New holds: a new reference to sl, or (sl nil) the
// store's own lock.
func (sl *StoreLock) share(fs vfs.FS, storeDir string) (io.Closer, error) {
	if sl == nil {
		return lockStore(fs, storeDir)
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.refs == 0 {
		return nil, fmt.Errorf("jetstream: the shared lock of %s is already released", sl.dir)
	}
	if filepath.Clean(storeDir) != sl.dir {
		return nil, fmt.Errorf("jetstream: the shared store lock is for %s, not %s", sl.dir, storeDir)
	}
	sl.refs++
	return &storeLockRef{sl: sl}, nil
}

// Close releases one reference; the last one unlocks the store.
func (sl *StoreLock) Close() error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.refs == 0 {
		return nil
	}
	sl.refs--
	if sl.refs == 0 {
		return sl.l.Close()
	}
	return nil
}

// storeLockRef is one JetStream's reference to a StoreLock.
type storeLockRef struct {
	once sync.Once
	sl   *StoreLock
}

func (r *storeLockRef) Close() error {
	var err error
	r.once.Do(func() { err = r.sl.Close() })
	return err
}
