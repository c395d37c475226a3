package wal

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// blockedCkptFS stops the fsync of a checkpoint's temp file until release
// is closed, and says when one has reached it.
func blockedCkptFS(inner vfs.FS) (fs *vfs.HookFS, reached <-chan struct{}, release chan struct{}) {
	r := make(chan struct{}, 16)
	release = make(chan struct{})
	fs = &vfs.HookFS{Inner: inner, Hook: func(op, path string, _ bool) {
		if op == "sync" && strings.HasSuffix(path, checkpointFile+".tmp") {
			r <- struct{}{}
			<-release
		}
	}}
	return fs, r, release
}

// within runs work on a goroutine and fails the test unless it returns,
// without an error, within 10 s: what the test holds blocked must not hold
// it up.
func within(t *testing.T, why string, work func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(why)
	}
}

// appendMany appends n copies of data on subj, each acknowledged.
func appendMany(s *Store, subj string, data []byte, n int) error {
	for i := 0; i < n; i++ {
		if _, _, err := s.Append(subj, nil, data); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckpointDurableWithoutLock: while a checkpoint's fsync runs, appends
// and reads of the store go on (they would wait for the store lock if the
// checkpoint held it); a second checkpoint does not start meanwhile; once
// it ends, the store reopens from it with everything appended, those made
// during the fsync included.
func TestCheckpointDurableWithoutLock(t *testing.T) {
	mem := vfs.NewMemFS()
	fs, reached, release := blockedCkptFS(mem)
	opts := Options{FS: fs, Sync: SyncAlways, CheckpointEvery: -1}
	s, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, _, err := s.Append(fmt.Sprintf("a.%d", i%7), nil, []byte("before")); err != nil {
			t.Fatal(err)
		}
	}
	started := make(chan error, 1)
	go func() { started <- s.periodicCheckpoint() }()
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the checkpoint never reached its fsync")
	}
	// The checkpoint is blocked in its fsync: the store serves meanwhile.
	within(t, "appends and reads waited for the checkpoint's fsync", func() error {
		var m store.Msg
		if err := appendMany(s, "during", []byte("x"), 50); err != nil {
			return err
		}
		if err := s.Load(7, &m); err != nil {
			return err
		}
		return s.Delete(3, false)
	})
	// Another checkpoint is refused while this one is in progress.
	s.mu.Lock()
	busy, dirty := s.ckptBusy, s.dirty
	s.mu.Unlock()
	if !busy || !dirty {
		t.Fatalf("during the fsync: busy %v dirty %v, want both (the appends dirtied the index again)", busy, dirty)
	}
	if err := s.periodicCheckpoint(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().LastCheckpoint; got.IsZero() {
		t.Fatal("no checkpoint recorded")
	}
	want := s.State()
	abandon(s) // kill -9: the checkpoint and the log are all recovery has

	o := opts
	o.FS = mem.ProcessCrashClone()
	s2, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if r := s2.Recovery(); !r.UsedCheckpoint || r.CheckpointErr != nil {
		t.Fatalf("recovery did not use the checkpoint: %+v", r)
	}
	if got := s2.State(); got.Msgs != want.Msgs || got.LastSeq != want.LastSeq || got.Bytes != want.Bytes {
		t.Fatalf("reopened: %+v, want %+v", got, want)
	}
	var m store.Msg
	if err := s2.Load(3, &m); err == nil {
		t.Fatal("sequence 3, deleted during the checkpoint's fsync, is back")
	}
	if err := s2.Load(want.LastSeq, &m); err != nil || m.Subject != "during" {
		t.Fatalf("last message: %v %q", err, m.Subject)
	}
}

// TestCloseWaitsForCheckpoint: Close waits for a checkpoint being made
// durable in the background before it writes its own (they share a temp
// file) and closes the files.
func TestCloseWaitsForCheckpoint(t *testing.T) {
	mem := vfs.NewMemFS()
	fs, reached, release := blockedCkptFS(mem)
	s, err := Open("/db", Options{FS: fs, Sync: SyncAlways, CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Append("a", nil, []byte("x")); err != nil {
		t.Fatal(err)
	}
	go s.periodicCheckpoint()
	<-reached
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) during the checkpoint's fsync", err)
	case <-time.After(50 * time.Millisecond):
	}
	// Close's own checkpoint blocks at the same place: let both through.
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s2, err := Open("/db", Options{FS: mem, CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if r := s2.Recovery(); !r.UsedCheckpoint || s2.State().Msgs != 1 {
		t.Fatalf("after Close: %+v, state %+v", r, s2.State())
	}
}

// TestIntervalSyncWithoutLock: under SyncInterval the ticker's fsync of the
// active segment runs with the store lock released and off the goroutine
// that commits appends: while it is blocked, appends are acknowledged (they
// wait for their write, not for that fsync) and reads are served.
func TestIntervalSyncWithoutLock(t *testing.T) {
	mem := vfs.NewMemFS()
	var armed atomic.Bool
	reached := make(chan struct{}, 1)
	release := make(chan struct{})
	fs := &vfs.HookFS{Inner: mem, Hook: func(op, path string, _ bool) {
		if op == "sync" && strings.HasSuffix(path, ".seg") && armed.CompareAndSwap(true, false) {
			reached <- struct{}{}
			<-release
		}
	}}
	s, err := Open("/db", Options{FS: fs, Sync: SyncInterval, SyncInterval: 5 * time.Millisecond, CheckpointEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before Close, whose own sync would block here too
	armed.Store(true)
	if _, _, err := s.Append("a", nil, []byte("first")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("the interval sync never ran")
	}
	within(t, "appends and reads waited for the interval fsync", func() error {
		var m store.Msg
		if err := appendMany(s, "b", []byte("during"), 50); err != nil {
			return err
		}
		return s.Load(1, &m)
	})
	free()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := s.State(); st.Msgs != 51 {
		t.Fatalf("%d messages, want 51", st.Msgs)
	}
}

// TestRollsCheckpoint: every checkpointRolls segment rolls a checkpoint is
// written in the background, without a periodic timer or a Close; a kill -9
// afterwards recovers from it, with what was appended after it replayed.
func TestRollsCheckpoint(t *testing.T) {
	mem := vfs.NewMemFS()
	m := &Metrics{}
	opts := Options{FS: mem, Sync: SyncNever, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10, CheckpointEvery: -1, Metrics: m}
	s, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1000)
	n := 0
	for deadline := time.Now().Add(10 * time.Second); m.Snapshot().Checkpoints == 0; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after %d appends", n)
		}
		if _, _, err := s.Append(fmt.Sprintf("r.%d", n%5), nil, data); err != nil {
			t.Fatal(err)
		}
	}
	// A 16 KiB segment holds 13 to 15 of these (its tombstone reserve
	// aside): no checkpoint before the rolls were due.
	if n < checkpointRolls*13 {
		t.Fatalf("a checkpoint after only %d appends of %d bytes, before %d rolls", n, len(data), checkpointRolls)
	}
	for i := 0; i < 10; i++ {
		if _, _, err := s.Append("after", nil, data); err != nil {
			t.Fatal(err)
		}
	}
	want := s.State()
	abandon(s)
	o := opts
	o.FS, o.Metrics = mem.ProcessCrashClone(), nil
	s2, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if r := s2.Recovery(); !r.UsedCheckpoint {
		t.Fatalf("recovery did not use the roll's checkpoint: %+v", r)
	}
	if got := s2.State(); got.Msgs != want.Msgs || got.LastSeq != want.LastSeq {
		t.Fatalf("reopened %+v, want %+v", got, want)
	}
}
