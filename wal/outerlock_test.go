package wal

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenLocks: a store keeps a second Open of its directory out until it
// closes. By default with a LOCK file (flock), which keeps other processes
// out too; with OuterLock, where the caller's lock does that, with an
// in-process claim only: no LOCK file, and one descriptor less per store.
func TestOpenLocks(t *testing.T) {
	for _, outer := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "s")
		opts := Options{OuterLock: outer}
		s, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Append("a", nil, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, opts); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatalf("OuterLock %v: second Open of an open store: %v, want EWOULDBLOCK", outer, err)
		}
		_, err = os.Stat(filepath.Join(dir, lockFile))
		if outer != errors.Is(err, os.ErrNotExist) {
			t.Fatalf("OuterLock %v: LOCK file: %v", outer, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(dir, opts)
		if err != nil {
			t.Fatalf("OuterLock %v: Open after Close: %v", outer, err)
		}
		if st := s.State(); st.Msgs != 1 {
			t.Fatalf("OuterLock %v: reopened with %+v", outer, st)
		}
		s.Close()
	}
}
