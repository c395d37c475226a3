package wal

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestIntervalSyncOnlyWhenWritten: under SyncInterval an idle store
// fsyncs nothing and sets no timer; a write is fsynced about SyncInterval
// later without any other call (a power loss then keeps it: CrashClone
// drops what was not synced), once, and the store is idle again after;
// an eviction's tombstone alone (MaxMsgs) is fsynced the same way.
func TestIntervalSyncOnlyWhenWritten(t *testing.T) {
	mem := vfs.NewMemFS()
	var syncs atomic.Int64
	fs := &vfs.HookFS{Inner: mem, Hook: func(op, path string, _ bool) {
		if op == "sync" && strings.HasSuffix(path, ".seg") {
			syncs.Add(1)
		}
	}}
	const every = 10 * time.Millisecond
	s, err := Open("/db", Options{FS: fs, Sync: SyncInterval, SyncInterval: every, CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	quiet := func(what string) int64 {
		t.Helper()
		before := syncs.Load()
		time.Sleep(20 * every)
		if n := syncs.Load() - before; n != 0 {
			t.Fatalf("%s: %d segment fsyncs in %v of idleness", what, n, 20*every)
		}
		s.mu.Lock()
		armed := s.syncArmed
		s.mu.Unlock()
		if armed {
			t.Fatalf("%s: the interval timer is set on an idle store", what)
		}
		return syncs.Load()
	}
	synced := func(what string, after int64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); syncs.Load() == after; time.Sleep(every) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not fsynced within 5 s", what)
			}
		}
	}
	n := quiet("after open")
	if _, _, err := s.Append("a", nil, []byte("one")); err != nil {
		t.Fatal(err)
	}
	synced("a write", n)
	n = quiet("after the write's fsync")
	crashed, err := Open("/db", Options{FS: mem.CrashClone(), Sync: SyncInterval, CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st := crashed.State(); st.Msgs != 1 {
		t.Fatalf("after a power loss: %d messages, want the fsynced 1", st.Msgs)
	}
	crashed.Close()
	// A limit's eviction is written as a tombstone, fsynced by the timer.
	if err := s.UpdateLimits(store.Limits{MaxMsgs: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Append("a", nil, []byte("two")); err != nil {
		t.Fatal(err)
	}
	synced("a write and a tombstone", n)
	quiet("after the tombstone's fsync")
}
