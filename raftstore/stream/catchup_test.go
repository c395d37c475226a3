package stream

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// leaderFetcher answers fetches from a leader's store, at most chunk
// messages an answer, as the cluster's leader does. fail makes the next
// fails answers errors (a leader unreachable); after is called after each
// answer given.
type leaderFetcher struct {
	mu    sync.Mutex
	st    func() *wal.Store
	chunk int
	fails int
	msgs  int // messages answered
	calls int
	after func(calls int)
}

func (l *leaderFetcher) Fetch(from, to uint64) ([]store.Msg, uint64, error) {
	l.mu.Lock()
	if l.fails > 0 {
		l.fails--
		l.mu.Unlock()
		return nil, 0, errors.New("no leader")
	}
	l.mu.Unlock()
	st := l.st()
	through := min(to, st.State().LastSeq)
	var out []store.Msg
	for seq := from; seq <= through; {
		var m store.Msg
		err := st.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) || (err == nil && m.Seq > through) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, m)
		seq = m.Seq + 1
		if len(out) == l.chunk {
			through = m.Seq
			break
		}
	}
	l.mu.Lock()
	l.msgs += len(out)
	l.calls++
	calls, after := l.calls, l.after
	l.mu.Unlock()
	if after != nil {
		after(calls)
	}
	return out, through, nil
}

func openFetching(t *testing.T, fs vfs.FS, fetch Fetcher) *FSM {
	t.Helper()
	f, err := OpenWith("/r", testOpts(fs), Options{Fetch: fetch})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func snapshotOf(t *testing.T, f *FSM) *memSink {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	return sink
}

// appendLog is n appends of 100-byte messages on 5 subjects, from index
// first.
func appendLog(first, n int) []*raft.Log {
	var logs []*raft.Log
	for i := range n {
		data := fmt.Appendf(nil, "%-100d", first+i)
		logs = append(logs, cmd(uint64(first+i), EncodeAppend(fmt.Sprintf("s.%d", i%5), nil, data, int64(first+i)*1000)))
	}
	return logs
}

// TestCatchupFetchesOnlyTheMissingRange: a follower 100 messages behind on
// a 1,000-message stream restores the leader's version 2 snapshot (a few
// dozen bytes): it fetches those 100 messages and no others, and ends
// with the leader's contents, applied at the snapshot's index.
func TestCatchupFetchesOnlyTheMissingRange(t *testing.T) {
	logs := appendLog(1, 1000)
	var a *FSM
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 64}
	a, err := OpenWith("/a", wal.Options{FS: vfs.NewMemFS()}, Options{Fetch: lf})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenWith("/b", wal.Options{FS: vfs.NewMemFS()}, Options{Fetch: lf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.ApplyBatch(logs)
	b.ApplyBatch(logs[:900])
	sink := snapshotOf(t, a)
	if sink.Len() > 64 {
		t.Fatalf("a snapshot of %d bytes: not the state alone", sink.Len())
	}
	if err := b.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	if lf.msgs != 100 || b.Applied() != 1000 {
		t.Fatalf("fetched %d messages, applied %d; want 100 and 1000", lf.msgs, b.Applied())
	}
	if fs := b.Fetched(); fs.Msgs != 100 || fs.Bytes != 100*(3+100) || fs.From != 901 || fs.To != 1000 {
		t.Fatalf("Fetched() = %+v", fs)
	}
	sameContents(t, "caught up", dump(t, b.Store()), dump(t, a.Store()))
	// The log goes on after the snapshot.
	more := appendLog(1001, 10)
	a.ApplyBatch(more)
	b.ApplyBatch(more)
	sameContents(t, "after the snapshot", dump(t, b.Store()), dump(t, a.Store()))
}

// TestCatchupReconciles: followers at many points of a log of appends,
// deletes, purges, skips and refusals (some ahead of the leader's first
// sequence with old messages below it, some holding messages the
// snapshot lists as deleted, some holding nothing) restore the leader's
// version 2 snapshot; the leader meanwhile applied more of the log
// (compactions and deletes: part of the range it is asked for is gone).
// Each follower ends with the leader's contents at the snapshot, fetching
// no message it held, then applies the rest of the log like the leader.
func TestCatchupReconciles(t *testing.T) {
	logs := testLog(rand.New(rand.NewPCG(5, 6)), 300)
	rng := rand.New(rand.NewPCG(7, 8))
	var a *FSM
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 7}
	a = openFetching(t, vfs.NewMemFS(), lf)
	defer a.Close()
	ref := openFSM(t, vfs.NewMemFS()) // the leader's contents at the snapshot
	defer ref.Close()
	applyInBatches(t, a, rng, logs[:200])
	applyInBatches(t, ref, rng, logs[:200])
	sink := snapshotOf(t, a)
	st, err := readState(sink.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.deleted) == 0 || st.first <= 1 {
		t.Fatalf("snapshot state %+v: no interior deletes or nothing compacted, not a useful test", st)
	}
	applyInBatches(t, a, rng, logs[200:260]) // the leader moves on
	atSnap := dump(t, ref.Store())
	for prior := 0; prior <= 200; prior += 10 {
		b := openFetching(t, vfs.NewMemFS(), lf)
		applyInBatches(t, b, rng, logs[:prior])
		had := b.Store().State().LastSeq
		lf.msgs = 0
		if err := b.Restore(sink.reader()); err != nil {
			t.Fatal(err)
		}
		got := dump(t, b.Store())
		// Only what follows the follower's last sequence is fetched.
		if missing := st.last - min(st.last, max(had, st.first-1)); uint64(lf.msgs) > missing {
			t.Fatalf("prior %d: fetched %d messages, %d sequences missing", prior, lf.msgs, missing)
		}
		if b.Applied() != 200 {
			t.Fatalf("prior %d: applied %d", prior, b.Applied())
		}
		// Messages the leader removed after the snapshot are missing on
		// the follower too (they were never fetched); the rest match.
		checkSubset(t, fmt.Sprintf("restored over %d entries", prior), got, atSnap)
		applyInBatches(t, b, rng, logs[200:260])
		sameContents(t, fmt.Sprintf("restored over %d entries, then the log", prior), dump(t, b.Store()), dump(t, a.Store()))
		b.Close()
	}
}

// checkSubset: got holds only messages of want, at their sequences, with
// their times and bodies, and the same first and last sequences.
func checkSubset(t *testing.T, what string, got, want contents) {
	t.Helper()
	if got.state.LastSeq != want.state.LastSeq {
		t.Fatalf("%s: last sequence %d, want %d", what, got.state.LastSeq, want.state.LastSeq)
	}
	w := map[uint64]store.Msg{}
	for _, m := range want.msgs {
		w[m.Seq] = m
	}
	for _, m := range got.msgs {
		x, ok := w[m.Seq]
		if !ok || m.Time != x.Time || m.Subject != x.Subject || string(m.Data) != string(x.Data) || string(m.Header) != string(x.Header) {
			t.Fatalf("%s: message %d (%q) is not the leader's", what, m.Seq, m.Subject)
		}
	}
}

// TestCatchupLeaderUnreachable: fetches fail for a while (no leader); the
// restore retries until one answers. A restore whose fetches never succeed
// ends with ErrStopped when the FSM closes, and is resumed at the next
// Open.
func TestCatchupLeaderUnreachable(t *testing.T) {
	logs := appendLog(1, 200)
	var a *FSM
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 50, fails: 3}
	a = openFetching(t, vfs.NewMemFS(), lf)
	defer a.Close()
	a.ApplyBatch(logs)
	sink := snapshotOf(t, a)
	b, err := OpenWith("/b", wal.Options{FS: vfs.NewMemFS()}, Options{Fetch: lf})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	sameContents(t, "after retries", dump(t, b.Store()), dump(t, a.Store()))
	b.Close()

	fs := vfs.NewMemFS()
	down := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 50, fails: 1 << 30}
	c := openFetching(t, fs, down)
	done := make(chan error, 1)
	go func() { done <- c.Restore(sink.reader()) }()
	time.Sleep(100 * time.Millisecond)
	if !c.Pending() {
		t.Fatal("no restore pending while the leader is unreachable")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("restore on close: %v, want ErrStopped", err)
	}
	c = openFetching(t, fs, lf)
	defer c.Close()
	if !c.Pending() || c.Applied() != 0 {
		t.Fatalf("reopened: pending %v, applied %d", c.Pending(), c.Applied())
	}
	// Raft hands it the entries after the snapshot: the restore completes
	// first.
	more := appendLog(201, 5)
	a.ApplyBatch(more)
	c.ApplyBatch(more)
	if c.Pending() || c.Applied() != 205 {
		t.Fatalf("after the next entries: pending %v, applied %d", c.Pending(), c.Applied())
	}
	sameContents(t, "resumed at open", dump(t, c.Store()), dump(t, a.Store()))
}

// TestCatchupCrash: a follower's restore is crashed (kill -9, and a power
// cut tearing unsynced writes) before each of its writes, syncs and
// removals. Reopened, it is either at its old state with no restore
// pending, or has the restore pending and not marked applied; raft then
// either installs the snapshot again or, having it, gives the entries
// after it: either way the follower ends with the leader's contents, and
// never fetches again a message it had already made durable (at most one
// answer's worth is fetched twice).
func TestCatchupCrash(t *testing.T) {
	logs := appendLog(1, 300)
	var a *FSM
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 16}
	a = openFetching(t, vfs.NewMemFS(), lf)
	defer a.Close()
	a.ApplyBatch(logs[:250])
	if r := a.ApplyBatch([]*raft.Log{cmd(251, EncodeDelete(240, false)), cmd(252, EncodeCompact(20))}); r[1].(*Result).Err != nil {
		t.Fatal(r[1].(*Result).Err)
	}
	sink := snapshotOf(t, a)
	more := appendLog(253, 10)
	a.ApplyBatch(more)
	want := dump(t, a.Store())

	type point struct {
		what string
		fs   *vfs.MemFS
	}
	var mu sync.Mutex
	var points []point
	fs := vfs.NewMemFS()
	rng := rand.New(rand.NewPCG(9, 9))
	on := false
	hook := &vfs.HookFS{Inner: fs, Hook: func(op, path string, mutating bool) {
		mu.Lock()
		defer mu.Unlock()
		if !on || !mutating {
			return
		}
		what := op + " " + filepath.Base(path)
		points = append(points, point{"kill before " + what, fs.ProcessCrashClone()},
			point{"power cut before " + what, fs.CrashCloneTorn(rng)})
	}}
	b := openFetching(t, hook, lf)
	b.ApplyBatch(logs[:100])
	mu.Lock()
	on = true
	mu.Unlock()
	if err := b.Restore(sink.reader()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	on = false
	mu.Unlock()
	b.Close()
	if len(points) < 20 {
		t.Fatalf("only %d crash points", len(points))
	}
	for i, p := range points {
		for _, again := range []bool{true, false} {
			what := fmt.Sprintf("point %d: %s (install again %v)", i, p.what, again)
			c, err := OpenWith("/r", testOpts(p.fs.ProcessCrashClone()), Options{Fetch: lf})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if c.Applied() > 100 && c.Applied() != 252 {
				t.Fatalf("%s: applied %d", what, c.Applied())
			}
			pending := c.Pending()
			if !again && !pending && c.Applied() != 252 {
				c.Close()
				continue // raft installs it again: the case above
			}
			lf.mu.Lock()
			lf.msgs = 0
			lf.mu.Unlock()
			held := lastStored(c.Store())
			if again {
				if err := c.Restore(sink.reader()); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			c.ApplyBatch(more)
			if c.Pending() || c.Applied() != 262 {
				t.Fatalf("%s: pending %v, applied %d", what, c.Pending(), c.Applied())
			}
			sameContents(t, what, dump(t, c.Store()), want)
			if max := 250 - max(held, 100); held < 250 && lf.msgs > int(max)+16 {
				t.Fatalf("%s: fetched %d messages holding up to %d", what, lf.msgs, held)
			}
			c.Close()
		}
	}
}

// TestSnapshotV1StillRestores: a replica without a fetcher writes version
// 1 snapshots (every message); one with a fetcher restores them as before,
// fetching nothing, and a version 1 restore ends a pending version 2 one.
func TestSnapshotV1StillRestores(t *testing.T) {
	logs := testLog(rand.New(rand.NewPCG(15, 16)), 200)
	rng := rand.New(rand.NewPCG(17, 18))
	a := openFSM(t, vfs.NewMemFS())
	defer a.Close()
	applyInBatches(t, a, rng, logs)
	v1 := snapshotOf(t, a)
	if v := v1.Bytes()[4]; v != 1 {
		t.Fatalf("snapshot version %d without a fetcher", v)
	}
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 8, fails: 1 << 30}
	fs := vfs.NewMemFS()
	b := openFetching(t, fs, lf)
	applyInBatches(t, b, rng, logs[:50])
	// A version 2 restore that cannot reach the leader, interrupted.
	withFetch := openFetching(t, vfs.NewMemFS(), lf)
	applyInBatches(t, withFetch, rng, logs)
	v2 := snapshotOf(t, withFetch)
	withFetch.Close()
	done := make(chan error, 1)
	go func() { done <- b.Restore(v2.reader()) }()
	time.Sleep(50 * time.Millisecond)
	b.Close()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("interrupted restore: %v", err)
	}
	b = openFetching(t, fs, lf)
	defer b.Close()
	if !b.Pending() {
		t.Fatal("no restore pending")
	}
	if err := b.Restore(v1.reader()); err != nil {
		t.Fatal(err)
	}
	if b.Pending() || b.Applied() != 200 || lf.msgs != 0 {
		t.Fatalf("after the version 1 restore: pending %v, applied %d, fetched %d", b.Pending(), b.Applied(), lf.msgs)
	}
	sameContents(t, "version 1", dump(t, b.Store()), dump(t, a.Store()))
	// The checked-in version 1 snapshot still restores.
	c := openFetching(t, vfs.NewMemFS(), lf)
	defer c.Close()
	if err := c.Restore(v1.reader()); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotV2Format: the encoding round-trips, and damage or disorder
// is refused.
func TestSnapshotV2Format(t *testing.T) {
	s := snapState{index: 9, first: 5, last: 100, lastTS: 77, deleted: []seqRange{{7, 2}, {20, 1}, {90, 11}}}
	b := s.encode()
	got, err := readState(b)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(s) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for i := range b {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x40
		if _, err := readState(bad); err == nil {
			t.Fatalf("byte %d flipped: accepted", i)
		}
	}
	for _, d := range [][]seqRange{{{7, 2}, {8, 1}}, {{7, 2}, {9, 1}}, {{4, 1}}, {{100, 2}}, {{50, 0}}} {
		x := s
		x.deleted = d
		if _, err := readState(x.encode()); err == nil {
			t.Fatalf("deleted ranges %v accepted", d)
		}
	}
	if !s.isDeleted(8) || s.isDeleted(9) || !s.isDeleted(100) || s.isDeleted(89) {
		t.Fatal("isDeleted")
	}
}

// TestCatchupAdopt: a snapshot raft stored and counts applied, which the
// replica never restored (a crash between the two), is adopted before raft
// starts: a version 2 one becomes the pending restore, completed at the
// next entries raft gives; an older one changes nothing; a version 1 one
// is restored at once.
func TestCatchupAdopt(t *testing.T) {
	logs := appendLog(1, 200)
	var a *FSM
	lf := &leaderFetcher{st: func() *wal.Store { return a.Store() }, chunk: 32}
	open := func(fs vfs.FS) *FSM {
		f, err := OpenWith("/r", wal.Options{FS: fs}, Options{Fetch: lf}) // no limits: the leader keeps all
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a = open(vfs.NewMemFS())
	defer a.Close()
	a.ApplyBatch(logs)
	v2 := snapshotOf(t, a)

	fs := vfs.NewMemFS()
	b := open(fs)
	b.ApplyBatch(logs[:50])
	if err := b.Adopt(v2.reader()); err != nil {
		t.Fatal(err)
	}
	if !b.Pending() || lf.msgs != 0 {
		t.Fatalf("adopted: pending %v, fetched %d", b.Pending(), lf.msgs)
	}
	b.Close()
	b = open(fs)
	defer b.Close()
	if !b.Pending() {
		t.Fatal("the adopted restore did not survive a reopen")
	}
	more := appendLog(201, 3)
	a.ApplyBatch(more)
	b.ApplyBatch(more)
	if b.Pending() || b.Applied() != 203 || lf.msgs != 150 {
		t.Fatalf("after the next entries: pending %v, applied %d, fetched %d", b.Pending(), b.Applied(), lf.msgs)
	}
	sameContents(t, "adopted", dump(t, b.Store()), dump(t, a.Store()))
	if err := b.Adopt(v2.reader()); err != nil || b.Pending() {
		t.Fatalf("an older snapshot adopted: %v, pending %v", err, b.Pending())
	}

	plain := openFSM(t, vfs.NewMemFS())
	defer plain.Close()
	plain.ApplyBatch(logs)
	v1 := snapshotOf(t, plain)
	c, err := OpenWith("/c", wal.Options{FS: vfs.NewMemFS()}, Options{Fetch: lf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Adopt(v1.reader()); err != nil {
		t.Fatal(err)
	}
	if c.Pending() || c.Applied() != 200 {
		t.Fatalf("version 1 adopted: pending %v, applied %d", c.Pending(), c.Applied())
	}
}

// FuzzSnapshotState: any bytes decode as a version 2 snapshot or fail
// without panicking, and what decodes encodes back to the same bytes.
func FuzzSnapshotState(f *testing.F) {
	f.Add((&snapState{index: 9, first: 5, last: 100, lastTS: 77, deleted: []seqRange{{7, 2}, {20, 1}}}).encode())
	f.Add((&snapState{}).encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := readState(b)
		if err != nil {
			return
		}
		if got := s.encode(); string(got) != string(b) {
			t.Fatalf("re-encoded differently: %x, read %x", got, b)
		}
	})
}
