package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// contents lists a store's messages as "seq subject data-length" lines.
func contents(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	var m store.Msg
	for seq := uint64(0); ; seq = m.Seq + 1 {
		err := s.LoadNext("", seq, &m)
		if errors.Is(err, store.ErrEOF) {
			return b.String()
		}
		if err != nil {
			t.Fatalf("load from %d: %v", seq, err)
		}
		fmt.Fprintf(&b, "%d %s %d %x\n", m.Seq, m.Subject, len(m.Data), m.Data[:min(4, len(m.Data))])
	}
}

// TestAtomicBatchCrash crashes a store at every write, sync and allocation
// made while an AppendBatch runs (a kill -9 keeping everything written, and
// a power cut keeping only what was synced), and checks that each reopened
// store holds the whole batch or none of it: for a kill -9, exactly the
// store before or after the batch, evictions the batch caused (max msgs per
// subject) included. A second crash after more appends must not bring a
// dropped batch back. Batches are large enough to be flushed in pieces.
func TestAtomicBatchCrash(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	for range rounds {
		seed := crashSeed(t)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run 'TestAtomicBatchCrash' ./wal", seed)
				}
			}()
			runBatchCrash(t, seed)
		})
	}
}

func runBatchCrash(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	mem.SyncDir("/")
	type point struct {
		what  string
		kill  *vfs.MemFS // everything written
		power *vfs.MemFS // only what was synced
	}
	// The hook runs on the appending goroutine and on the store's
	// background one (sealing segments): both are crash points.
	var (
		mu      sync.Mutex
		points  []point
		capture bool
	)
	hook := &vfs.HookFS{Inner: mem, Hook: func(op, path string, mutating bool) {
		mu.Lock()
		defer mu.Unlock()
		if capture && mutating {
			points = append(points, point{what: op + " " + path, kill: mem.ProcessCrashClone(), power: mem.CrashClone()})
		}
	}}
	setCapture := func(on bool) {
		mu.Lock()
		capture = on
		mu.Unlock()
	}
	sync := []SyncMode{SyncAlways, SyncNever}[rng.IntN(2)]
	opts := Options{FS: hook, Sync: sync, SegmentSize: int64(64<<10 + rng.IntN(256<<10)), CheckpointEvery: -1}
	if rng.IntN(2) == 0 {
		opts.Limits.MaxMsgsPerSubject = 2
	}
	s, err := Open("/db/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	msg := func(i int) store.Msg {
		data := make([]byte, 1+rng.IntN(8<<10))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		return store.Msg{Subject: fmt.Sprintf("s.%d", rng.IntN(6)), Data: data}
	}
	for i := range 20 + rng.IntN(100) {
		m := msg(i)
		if _, _, err := s.Append(m.Subject, nil, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	before := contents(t, s)
	batch := make([]store.Msg, 20+rng.IntN(150))
	for i := range batch {
		batch[i] = msg(i)
	}
	setCapture(true)
	if n, err := s.AppendBatch(batch); err != nil || n != len(batch) {
		t.Fatalf("AppendBatch: %d of %d: %v", n, len(batch), err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	after := contents(t, s)
	s.Close()
	setCapture(false)
	if len(points) < 2 {
		t.Fatalf("only %d crash points during the batch", len(points))
	}
	first, last := batch[0].Seq, batch[len(batch)-1].Seq

	reopen := func(fs vfs.FS) *Store {
		t.Helper()
		o := opts
		o.FS = fs
		s, err := Open("/db/s", o)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		return s
	}
	// batchPart counts the batch's messages present (evictions aside,
	// none of them is ever removed by the batch itself unless the limit
	// is on; so count the stored sequences of the batch's range).
	dropped, kept := 0, 0
	for i, p := range points {
		s := reopen(p.kill)
		got := contents(t, s)
		switch got {
		case before:
			dropped++
		case after:
			kept++
		default:
			names, _ := p.kill.ReadDir("/db/s")
			t.Logf("files %v report %+v dropped %+v first %d last %d", names, s.Recovery(), s.Recovery().DroppedBatch, first, last)
			t.Fatalf("kill -9 at point %d (%s): the store is neither the one before the batch nor the one after\nbefore:\n%s\nafter:\n%s\ngot:\n%s", i, p.what, before, after, got)
		}
		// More appends, a crash, and the batch stays as it was.
		if _, _, err := s.Append("after.crash", nil, []byte("x")); err != nil {
			t.Fatalf("append after the crash at point %d: %v", i, err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		again := reopen(p.kill.ProcessCrashClone())
		got2 := contents(t, again)
		if !strings.HasPrefix(got2, got) || strings.Count(got2, "\n") != strings.Count(got, "\n")+1 {
			t.Fatalf("point %d (%s): after one more append and a second crash:\n%s\nwant the first recovery's store and one message more:\n%s", i, p.what, got2, got)
		}
		again.Close()
		s.Close()

		// A power cut: the batch's sequences are all there or none.
		ps := reopen(p.power)
		n := 0
		var m store.Msg
		for q := first; q <= last; q++ {
			if ps.Load(q, &m) == nil {
				n++
			}
		}
		ps.Close()
		if opts.Limits.MaxMsgsPerSubject == 0 && n != 0 && n != len(batch) {
			t.Fatalf("power cut at point %d (%s): %d of the batch's %d messages kept", i, p.what, n, len(batch))
		}
	}
	if dropped == 0 || kept == 0 {
		t.Fatalf("crash points: %d dropped the batch, %d kept it; want both outcomes", dropped, kept)
	}
	t.Logf("%d crash points: %d dropped the batch, %d kept it", len(points), dropped, kept)
}

// TestAtomicBatchTakenBack: a batch a limit stopped part way (its stored
// prefix carries the batch-open flag) and that the caller took back with
// Truncate, then a batch stored in full: a clean reopen and a kill -9
// both find exactly what the store served.
func TestAtomicBatchTakenBack(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{FS: mem, Sync: SyncAlways, Limits: store.Limits{MaxMsgs: 6, Discard: store.DiscardNew}}
	s, err := Open("/db/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Append("a", nil, []byte("first")); err != nil {
		t.Fatal(err)
	}
	n, err := s.AppendBatch(batchOf(8))
	if n != 5 || !errors.Is(err, store.ErrMaxMsgs) {
		t.Fatalf("AppendBatch = %d, %v; want 5, ErrMaxMsgs", n, err)
	}
	if err := s.Truncate(1); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AppendBatch(batchOf(3)); n != 3 || err != nil {
		t.Fatalf("AppendBatch after the take-back = %d, %v", n, err)
	}
	want := contents(t, s)
	killed := mem.ProcessCrashClone()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, fs := range map[string]vfs.FS{"clean": mem, "kill -9": killed} {
		o := opts
		o.FS = fs
		r, err := Open("/db/s", o)
		if err != nil {
			t.Fatalf("%s reopen: %v", name, err)
		}
		if got := contents(t, r); got != want {
			t.Errorf("%s reopen:\n%s\nwant:\n%s", name, got, want)
		}
		r.Close()
	}
}
