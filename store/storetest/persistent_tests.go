package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
)

var persistentTests = []persistentTest{
	{"Reopen/Fresh", testReopenFresh},
	{"Reopen/Messages", testReopenMessages},
	{"Reopen/AfterDeletes", testReopenAfterDeletes},
	{"Reopen/AfterRemovals", testReopenAfterRemovals},
	{"Reopen/Twice", testReopenTwice},
	{"Reopen/AfterAppendAsync", testReopenAsync},
	{"Reopen/TighterLimits", testReopenTighterLimits},
	{"Reopen/MaxAge", testReopenMaxAge},
	{"Reopen/Remove", testReopenRemove},
	{"Reopen/Large", testReopenLarge},
	{"Reopen/Random", testReopenRandom},
}

// reopener is a harness over a store kept in one directory.
type reopener struct {
	*harness
	open   reopenFunc
	dir    string
	limits store.Limits
}

func newReopener(t *testing.T, open reopenFunc, limits store.Limits) *reopener {
	r := &reopener{harness: &harness{t: t}, open: open, dir: t.TempDir(), limits: limits}
	r.s = r.openNow()
	return r
}

// openNow opens the directory with r.limits and registers the Close.
func (r *reopener) openNow() store.StreamStore {
	r.t.Helper()
	s := r.open(r.t, r.dir, r.limits)
	if s == nil {
		r.t.Fatal("open returned a nil store")
	}
	r.t.Cleanup(func() { closeQuietly(r.t, s) })
	return s
}

// closeStore closes the current store, failing on any error.
func (r *reopener) closeStore() {
	r.t.Helper()
	if err := r.s.Close(); err != nil {
		r.t.Fatalf("Close: %v", err)
	}
}

// reopen closes and reopens the store with the same limits and requires
// that it reports exactly what it did before.
func (r *reopener) reopen() {
	r.t.Helper()
	before := takeSnapshot(r.t, r.s)
	r.closeStore()
	r.s = r.openNow()
	compareSnapshots(r.t, takeSnapshot(r.t, r.s), before)
	r.check()
}

// reopenWith closes the store and reopens it with other limits.
func (r *reopener) reopenWith(l store.Limits) {
	r.t.Helper()
	r.closeStore()
	r.limits = l
	r.s = r.openNow()
	r.check()
}

// wantNext appends and requires sequence want.
func (r *reopener) wantNext(want uint64) {
	r.t.Helper()
	if seq := r.append("next", nil, []byte("n")); seq != want {
		r.t.Fatalf("append after reopen got seq %d, want %d", seq, want)
	}
}

func testReopenFresh(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.reopen()
	r.wantState(store.State{})
	r.wantNext(1)
	r.reopen()
}

func testReopenMessages(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.append("m.plain", nil, []byte("hello"))
	r.append("m.hdr", []byte("NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n"), []byte("with header"))
	r.append("m.empty", nil, nil)
	r.append("m.hdr-only", []byte("NATS/1.0\r\n\r\n"), nil)
	r.append("m.bin", nil, []byte{0, 0, 0, 0xff, '\r', '\n'})
	r.append("m.big", nil, bytes.Repeat([]byte("big!"), 256<<10))
	r.append(string(bytes.Repeat([]byte("long."), 60))+"end", nil, []byte("x"))
	r.reopen()
	r.wantNext(8)
	r.reopen()
}

func testReopenAfterDeletes(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.fill(fixtureSubjects...)
	for _, seq := range []uint64{1, 5, 6, 10} {
		r.del(seq)
	}
	r.reopen()
	st := r.s.StateWithDeleted()
	if st.FirstSeq != 2 || st.LastSeq != 10 || !equalSeqs(st.Deleted, []uint64{5, 6, 10}) {
		t.Fatalf("after reopen: %s deleted %v", counters(st), st.Deleted)
	}
	// The deleted newest sequence must not be handed out again.
	r.wantNext(11)
	r.reopen()
}

func testReopenAfterRemovals(t *testing.T, open reopenFunc) {
	cases := []struct {
		name     string
		do       func(s store.StreamStore) error
		wantNext uint64
	}{
		{"purge-all", func(s store.StreamStore) error { _, err := s.Purge("", 0, 0); return err }, 11},
		{"purge-filter-keep", func(s store.StreamStore) error { _, err := s.Purge("a.*", 0, 1); return err }, 11},
		{"purge-upTo", func(s store.StreamStore) error { _, err := s.Purge("", 6, 0); return err }, 11},
		{"compact", func(s store.StreamStore) error { _, err := s.Compact(5); return err }, 11},
		{"compact-past-end", func(s store.StreamStore) error { _, err := s.Compact(100); return err }, 100},
		{"truncate", func(s store.StreamStore) error { return s.Truncate(5) }, 11},
		{"truncate-all", func(s store.StreamStore) error { return s.Truncate(0) }, 11},
		{"limits-shrink", func(s store.StreamStore) error { return s.UpdateLimits(store.Limits{MaxMsgs: 2}) }, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReopener(t, open, store.Limits{})
			r.fill(fixtureSubjects...)
			if err := c.do(r.s); err != nil {
				t.Fatal(err)
			}
			r.reopen()
			r.wantNext(c.wantNext)
			r.reopen()
		})
	}
	t.Run("compact-fresh", func(t *testing.T) {
		r := newReopener(t, open, store.Limits{})
		if _, err := r.s.Compact(50); err != nil {
			t.Fatal(err)
		}
		r.reopen()
		r.wantState(store.State{FirstSeq: 50, LastSeq: 49})
		r.wantNext(50)
	})
}

func testReopenTwice(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.fillN("t.a", 5)
	r.reopen()
	r.fillN("t.b", 5)
	r.del(3)
	r.reopen()
	r.reopen()
	r.wantSeqs(1, 2, 4, 5, 6, 7, 8, 9, 10)
	r.wantNext(11)
}

func testReopenAsync(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	const n = 300
	log := newDoneLog(t, n)
	for i := 0; i < n; i++ {
		if err := r.s.AppendAsync(fmt.Sprintf("async.%d", i%3), nil, fmt.Appendf(nil, "m%d", i), log.done); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.s.Sync(); err != nil {
		t.Fatal(err)
	}
	log.wait(n)
	r.reopen()
	r.wantSeqs(seqRange(1, n)...)
}

func testReopenTighterLimits(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.fill("a", "b", "a", "b", "a", "b", "a", "b", "a", "b")
	r.reopenWith(store.Limits{MaxMsgs: 4})
	r.wantSeqs(7, 8, 9, 10)
	r.reopenWith(store.Limits{MaxMsgsPerSubject: 1})
	r.wantSeqs(9, 10)
	one := r.size("b", 0, len(payload("b", 9)))
	r.reopenWith(store.Limits{MaxBytes: int64(one), Discard: store.DiscardNew})
	r.wantSeqs(10)
	r.wantState(store.State{Msgs: 1, Bytes: one, FirstSeq: 10, LastSeq: 10, NumSubjects: 1})
}

func testReopenMaxAge(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.fill("age.a", "age.b", "age.c")
	r.reopenWith(store.Limits{MaxAge: shortAge})
	waitExpired(t, r.s, 3)
	r.reopenWith(store.Limits{})
	r.wantState(store.State{FirstSeq: 4, LastSeq: 3})
	r.wantNext(4)
}

func testReopenRemove(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	r.fillN("rm", 5)
	if err := r.s.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	r.s = r.openNow()
	r.wantState(store.State{})
	r.wantNext(1)
	r.check()
}

func testReopenLarge(t *testing.T, open reopenFunc) {
	r := newReopener(t, open, store.Limits{})
	data := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	const n = 3000
	for i := 0; i < n; i++ {
		r.append(fmt.Sprintf("lg.%d.%d", i%4, i%7), nil, data)
	}
	for seq := uint64(1); seq <= n; seq += 17 {
		r.del(seq)
	}
	r.reopen()
	checkQueries(t, r.s, []string{"", "lg.1.*", "lg.*.3", "lg.2.6", "lg.>"}, []uint64{0, 1, 500, 1501, n - 1, n, n + 1})
	r.wantNext(n + 1)
	r.reopen()
}

func testReopenRandom(t *testing.T, open reopenFunc) {
	for _, seed := range []uint64{11, 12, 13} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dir := t.TempDir()
			first := func(t *testing.T, l store.Limits) store.StreamStore { return open(t, dir, l) }
			reopen := func(l store.Limits) store.StreamStore {
				s := open(t, dir, l)
				t.Cleanup(func() { closeQuietly(t, s) })
				return s
			}
			runRandom(t, first, reopen, seed, 400)
		})
	}
}
