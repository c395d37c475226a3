package wal

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/jetwal/jetwal/memstore"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/store/storetest"
)

// TestRemovalRebuildsFromSurvivors: a compaction or purge that keeps fewer
// messages than it removes rebuilds the index from the survivors
// (survivors.go), and ends where the same removal on the in-memory store
// ends: state, subjects, every survivor loadable, every removed message
// gone, the same again after a restart. Removals that keep more than they
// remove take the pruner instead.
func TestRemovalRebuildsFromSurvivors(t *testing.T) {
	const n = 2000
	for _, c := range []struct {
		name    string
		remove  func(s store.StreamStore) (uint64, error)
		rebuild bool
	}{
		{"compact", func(s store.StreamStore) (uint64, error) { return s.Compact(1900) }, true},
		{"compact-keeps-most", func(s store.StreamStore) (uint64, error) { return s.Compact(100) }, false},
		{"purge-below", func(s store.StreamStore) (uint64, error) { return s.Purge("", 1950, 0) }, true},
		{"purge-keep", func(s store.StreamStore) (uint64, error) { return s.Purge("", 0, 10) }, true},
		{"purge-keep-most", func(s store.StreamStore) (uint64, error) { return s.Purge("", 0, 1500) }, false},
		{"purge-keep-below", func(s store.StreamStore) (uint64, error) { return s.Purge("", 1000, 3) }, false},
		{"purge-keep-all", func(s store.StreamStore) (uint64, error) { return s.Purge("", 0, 5000) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: SyncAlways})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { s.Close() }()
			ref := newRef(t)
			pruneFill(t, s, n)
			refFill(t, ref, n)

			rebuilt := -1
			s.testRebuilt = func(kept int) { rebuilt = kept }
			got, err := c.remove(s)
			if err != nil {
				t.Fatal(err)
			}
			s.testRebuilt = nil
			want, err := c.remove(ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("removed %d, the in-memory store %d", got, want)
			}
			if c.rebuild != (rebuilt >= 0) {
				t.Fatalf("rebuilt from %d survivors (-1: not rebuilt), want rebuilt %v", rebuilt, c.rebuild)
			}
			if c.rebuild && uint64(rebuilt) != ref.State().Msgs {
				t.Fatalf("rebuilt from %d survivors, %d messages remain", rebuilt, ref.State().Msgs)
			}
			sameAs(t, s, ref, n)
			reopenSameAs(t, &s, dir, Options{Sync: SyncAlways}, ref, n)
		})
	}
}

// TestPurgeAllWithPendingAppends: purging everything while appends wait
// for their commit removes what was visible and keeps the rest, reading
// only those (the pruner would read every message); they are there after
// their commit and after a restart.
func TestPurgeAllWithPendingAppends(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Sync: SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	pruneFill(t, s, 1000)
	before := s.State()

	// The commit goroutine calls done callbacks: holding the first one
	// holds it, and the appends after it stay invisible.
	hold, held := make(chan struct{}), make(chan struct{})
	if err := s.AppendAsync("pending.0", nil, []byte("x"), func(uint64, int64, error) {
		close(held)
		<-hold
	}); err != nil {
		t.Fatal(err)
	}
	<-held
	const pending = 20
	for i := 1; i <= pending; i++ {
		if err := s.AppendAsync(fmt.Sprintf("pending.%d", i), nil, []byte("y"), nil); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	visible, last := s.visible, s.last
	s.mu.Unlock()
	if visible != before.LastSeq+1 || last != visible+pending {
		close(hold)
		t.Fatalf("visible %d, last %d: want %d and %d", visible, last, before.LastSeq+1, before.LastSeq+1+pending)
	}

	// The purge's own notification waits for the held callback (callbacks
	// run one at a time): it runs on a goroutine, and the callback is let
	// go once the purge has chosen how to remove.
	rebuilt := -1
	s.testRebuilt = func(kept int) {
		rebuilt = kept
		close(hold)
	}
	var n uint64
	purged := make(chan error)
	go func() {
		var err error
		n, err = s.Purge("", 0, 0)
		purged <- err
	}()
	select {
	case err := <-purged:
		close(hold)
		t.Fatalf("the purge returned (%v) without rebuilding the index from the pending appends", err)
	case <-hold:
	}
	if err := <-purged; err != nil {
		t.Fatal(err)
	}
	s.testRebuilt = nil
	if n != before.Msgs+1 || rebuilt != pending {
		t.Fatalf("purged %d (want %d), rebuilt from %d survivors (want %d)", n, before.Msgs+1, rebuilt, pending)
	}
	check := func() {
		t.Helper()
		st := s.State()
		if st.Msgs != pending || st.FirstSeq != visible+1 || st.LastSeq != last {
			t.Fatalf("after the purge: %+v", st)
		}
		var m store.Msg
		for q := visible + 1; q <= last; q++ {
			if err := s.Load(q, &m); err != nil || m.Subject != fmt.Sprintf("pending.%d", q-visible) || string(m.Data) != "y" {
				t.Fatalf("pending append %d: %q %q %v", q, m.Subject, m.Data, err)
			}
		}
		if subs := s.SubjectsState(">"); len(subs) != pending {
			t.Fatalf("%d subjects after the purge: %v", len(subs), subs)
		}
		storetest.CheckConsistent(t, s)
	}
	check()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{Sync: SyncAlways}); err != nil {
		t.Fatal(err)
	}
	check()
}

// refFill does to the in-memory store what pruneFill does.
func refFill(t *testing.T, s store.StreamStore, n int) {
	t.Helper()
	data := make([]byte, 16)
	for i := 0; i < n; i++ {
		if _, _, err := s.Append(fmt.Sprintf("p.%d", i%7), nil, data); err != nil {
			t.Fatal(err)
		}
	}
	for q := uint64(500); q <= uint64(n); q += 997 {
		if err := s.Delete(q, false); err != nil {
			t.Fatal(err)
		}
	}
}

// newRef returns an empty in-memory store, closed when the test ends: the
// reference a file store's results are compared with.
func newRef(t *testing.T) store.StreamStore {
	t.Helper()
	ref, err := memstore.New(store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	return ref
}

// reopenSameAs closes *s, opens dir again into *s, and checks that it
// still agrees with ref (sameAs).
func reopenSameAs(t *testing.T, s **Store, dir string, opts Options, ref store.StreamStore, n int) {
	t.Helper()
	if err := (*s).Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if *s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	sameAs(t, *s, ref, n)
}

// sameAs fails unless s and ref agree on state, subjects and every
// sequence up to n.
func sameAs(t *testing.T, s, ref store.StreamStore, n int) {
	t.Helper()
	st, rt := s.State(), ref.State()
	if st.Msgs != rt.Msgs || st.FirstSeq != rt.FirstSeq || st.LastSeq != rt.LastSeq {
		t.Fatalf("state %+v, the in-memory store's %+v", st, rt)
	}
	if ss, rs := s.SubjectsState(">"), ref.SubjectsState(">"); !reflect.DeepEqual(ss, rs) {
		t.Fatalf("subjects %v, the in-memory store's %v", ss, rs)
	}
	// The two count bytes differently (the in-memory store has no
	// records): the file store's count is its survivors' record sizes.
	var m, r store.Msg
	var bytes uint64
	for q := uint64(1); q <= uint64(n); q++ {
		err, rerr := s.Load(q, &m), ref.Load(q, &r)
		if (err == nil) != (rerr == nil) || err == nil && m.Subject != r.Subject {
			t.Fatalf("sequence %d: %q %v, the in-memory store's %q %v", q, m.Subject, err, r.Subject, rerr)
		}
		if err == nil {
			bytes += store.FileRecordSize(m.Subject, m.Header, m.Data)
		}
	}
	if st.Bytes != bytes {
		t.Fatalf("state counts %d bytes, its messages' records %d", st.Bytes, bytes)
	}
	storetest.CheckConsistent(t, s)
}

// BenchmarkPurgeKeepLast purges a stream of 256k messages over 64
// subjects down to its last 100, as `nats stream purge --keep 100` does:
// the survivors are read, not the removed messages (survivors.go).
func BenchmarkPurgeKeepLast(b *testing.B) { benchPurge(b, 64, "", 100) }

// benchPurge times Purge(filter, 0, keep) of a stream of 256k 128-byte
// messages over subjects subjects ("purge.<i % subjects>"), refilled
// before each purge and emptied after it with the timer stopped. It
// reports the time per removed message, and what a purge allocates.
func benchPurge(b *testing.B, subjects int, filter string, keep uint64) {
	const n = 256 << 10
	s := benchOpen(b, b.TempDir(), Options{Sync: SyncNever})
	defer s.Close()
	var removed uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fill(b, s, n, func(i int) string { return fmt.Sprintf("purge.%d", i%subjects) }, 128)
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		k, err := s.Purge(filter, 0, keep)
		if err != nil {
			b.Fatal(err)
		}
		removed += k
		b.StopTimer()
		if _, err := s.Purge("", 0, 0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(removed), "ns/removed-msg")
}
