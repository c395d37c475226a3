package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var asyncTests = []suiteTest{
	{"AppendAsync/Order", testAsyncOrder},
	{"AppendAsync/ConcurrentOrder", testAsyncConcurrentOrder},
	{"AppendAsync/Errors", testAsyncErrors},
	{"AppendAsync/MixedWithAppend", testAsyncMixed},
}

// doneRecord is one AppendDone call.
type doneRecord struct {
	seq uint64
	ts  int64
	err error
}

// doneLog collects AppendDone calls and checks that they never overlap.
type doneLog struct {
	t        testing.TB
	inFlight atomic.Int32
	mu       sync.Mutex // guards calls
	calls    []doneRecord
	ch       chan struct{}
}

func newDoneLog(t testing.TB, capacity int) *doneLog {
	return &doneLog{t: t, ch: make(chan struct{}, capacity)}
}

func (d *doneLog) done(seq uint64, ts int64, err error) {
	if d.inFlight.Add(1) != 1 {
		d.t.Errorf("AppendDone(%d) called while another AppendDone was running", seq)
	}
	d.mu.Lock()
	d.calls = append(d.calls, doneRecord{seq, ts, err})
	d.mu.Unlock()
	d.inFlight.Add(-1)
	d.ch <- struct{}{}
}

// wait blocks until n calls have arrived and returns them in arrival order.
func (d *doneLog) wait(n int) []doneRecord {
	d.t.Helper()
	for i := 0; i < n; i++ {
		waitSignal(d.t, d.ch)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]doneRecord(nil), d.calls...)
}

func waitSignal(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(doneTimeout):
		t.Fatalf("AppendDone not called within %v", doneTimeout)
	}
}

func testAsyncOrder(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	const n = 500
	log := newDoneLog(t, n)
	for i := 0; i < n; i++ {
		if err := h.s.AppendAsync("async.o", nil, fmt.Appendf(nil, "m%d", i), log.done); err != nil {
			t.Fatalf("AppendAsync %d: %v", i, err)
		}
	}
	if err := h.s.Sync(); err != nil {
		t.Fatal(err)
	}
	calls := log.wait(n)
	var prevTs int64
	var bytes uint64
	for i, c := range calls {
		if c.err != nil || c.seq != uint64(i+1) || c.ts < prevTs {
			t.Fatalf("done call %d: seq %d ts %d err %v (previous ts %d)", i, c.seq, c.ts, c.err, prevTs)
		}
		prevTs = c.ts
		m := h.load(c.seq)
		if m.Time != c.ts || string(m.Data) != fmt.Sprintf("m%d", i) {
			t.Fatalf("seq %d: done said ts %d, stored %s", c.seq, c.ts, FormatMsg(&m))
		}
		bytes += h.size(m.Subject, len(m.Header), len(m.Data))
	}
	h.wantState(store.State{Msgs: n, Bytes: bytes, FirstSeq: 1, LastSeq: n, NumSubjects: 1})
	h.check()
}

func testAsyncConcurrentOrder(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	const writers, per = 4, 150
	log := newDoneLog(t, writers*per)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := h.s.AppendAsync(fmt.Sprintf("async.w%d", w), nil, []byte("x"), log.done); err != nil {
					t.Errorf("AppendAsync: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	calls := log.wait(writers * per)
	for i, c := range calls {
		if c.err != nil || c.seq != uint64(i+1) {
			t.Fatalf("done call %d carried seq %d err %v: calls are not in sequence order", i, c.seq, c.err)
		}
	}
	h.check()
}

func testAsyncErrors(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{MaxMsgSize: 4, MaxMsgs: 3, Discard: store.DiscardNew})
	log := newDoneLog(t, 16)
	steps := []struct {
		subj string
		data string
		err  error
	}{
		{"e.a", "ok", nil},
		{"e.a", "too long", store.ErrMaxMsgSize},
		{"e..x", "x", store.ErrInvalidSubject},
		{"e.b", "ok", nil},
		{"e.c", "ok", nil},
		{"e.d", "full", store.ErrMaxMsgs},
	}
	for _, s := range steps {
		err := h.s.AppendAsync(s.subj, nil, []byte(s.data), log.done)
		wantErr(t, "AppendAsync("+s.subj+")", err, s.err)
	}
	calls := log.wait(3)
	if len(calls) != 3 || calls[0].seq != 1 || calls[1].seq != 2 || calls[2].seq != 3 {
		t.Fatalf("done calls %+v, want exactly seqs 1, 2, 3", calls)
	}
	if err := h.s.Sync(); err != nil {
		t.Fatal(err)
	}
	// A refused message's done must never come, even later.
	if err := h.s.Delete(1, false); err != nil {
		t.Fatal(err)
	}
	if err := h.s.AppendAsync("e.e", nil, nil, log.done); err != nil {
		t.Fatal(err)
	}
	if calls := log.wait(1); len(calls) != 4 || calls[3].seq != 4 {
		t.Fatalf("done calls %+v, want a fourth with seq 4", calls)
	}
}

func testAsyncMixed(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	log := newDoneLog(t, 100)
	var syncSeqs []uint64
	for i := 0; i < 100; i++ {
		if i%2 == 0 {
			if err := h.s.AppendAsync("mix.async", nil, nil, log.done); err != nil {
				t.Fatal(err)
			}
			continue
		}
		syncSeqs = append(syncSeqs, h.append("mix.sync", nil, nil))
	}
	calls := log.wait(50)
	for i, c := range calls {
		if c.seq != uint64(2*i+1) {
			t.Fatalf("async done %d has seq %d, want %d", i, c.seq, 2*i+1)
		}
	}
	for i, seq := range syncSeqs {
		if seq != uint64(2*i+2) {
			t.Fatalf("sync append %d got seq %d, want %d", i, seq, 2*i+2)
		}
	}
	h.check()
}
