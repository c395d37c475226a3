package vfs

import (
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
)

// Claim takes an in-process exclusive claim on name in fs: a second Claim
// of the same name in the same FS fails, as a second Lock would, until the
// first is closed. It creates no file and holds no descriptor, and it
// keeps out nothing but this process: for a caller whose own lock already
// keeps other processes out of a whole tree (the JetStream server's store
// lock), so that each store under it need not hold a file lock, and a
// descriptor, of its own. Names are compared cleaned and made absolute.
func Claim(fs FS, name string) (io.Closer, error) {
	if abs, err := filepath.Abs(name); err == nil {
		name = abs
	}
	if t := reflect.TypeOf(fs); t == nil || !t.Comparable() {
		return nil, fmt.Errorf("vfs: claim %s: file system of type %v cannot key a claim", name, t)
	}
	k := claimKey{fs: fs, name: filepath.Clean(name)}
	claims.mu.Lock()
	defer claims.mu.Unlock()
	if _, held := claims.m[k]; held {
		return nil, fmt.Errorf("vfs: claim %s: %w (is it open twice in this process?)", name, syscall.EWOULDBLOCK)
	}
	if claims.m == nil {
		claims.m = make(map[claimKey]struct{})
	}
	claims.m[k] = struct{}{}
	return &claim{k: k}, nil
}

type claimKey struct {
	fs   FS
	name string
}

var claims struct {
	mu sync.Mutex
	m  map[claimKey]struct{}
}

type claim struct {
	once sync.Once
	k    claimKey
}

// Close lets the name go; closing twice is harmless.
func (c *claim) Close() error {
	c.once.Do(func() {
		claims.mu.Lock()
		delete(claims.m, c.k)
		claims.mu.Unlock()
	})
	return nil
}
