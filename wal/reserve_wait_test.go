package wal

import (
	"bytes"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// reserveGate holds fsyncs of the reservation file: each arm holds the
// next one, which sends its release channel on blocked and waits for it to
// be closed.
type reserveGate struct {
	armed   atomic.Bool
	blocked chan chan struct{}
}

func gateReserveSync(mem *vfs.MemFS) (vfs.FS, *reserveGate) {
	g := &reserveGate{blocked: make(chan chan struct{}, 1)}
	return &vfs.HookFS{Inner: mem, Hook: func(op, path string, _ bool) {
		if op == "sync" && strings.HasSuffix(path, reserveFile) && g.armed.CompareAndSwap(true, false) {
			rel := make(chan struct{})
			g.blocked <- rel
			<-rel
		}
	}}, g
}

// goroutineWith reports whether some goroutine's stack holds every one of
// frames.
func goroutineWith(frames ...string) bool { return goroutinesWith(frames...) > 0 }

// goroutinesWith counts the goroutines whose stacks hold every one of
// frames.
func goroutinesWith(frames ...string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		all := true
		for _, f := range frames {
			if !bytes.Contains(g, []byte(f)) {
				all = false
				break
			}
		}
		if all {
			n++
		}
	}
	return n
}

// awaitGoroutine waits until some goroutine's stack holds every one of
// frames. It counts polls, not time: the state it waits for is reached
// without any outside help.
func awaitGoroutine(t *testing.T, what string, frames ...string) {
	t.Helper()
	for range 200000 {
		if goroutineWith(frames...) {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine %s", what)
}

// reserveUpTo appends small messages without callbacks until last.
func reserveUpTo(t *testing.T, s *Store, last uint64) {
	t.Helper()
	s.mu.Lock()
	from := s.last
	s.mu.Unlock()
	for range last - from {
		if err := s.AppendAsync("a", nil, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// moveLast are the two calls that move the last sequence on without an
// append, and so without reserving: SkipTo and Compact past the end.
var moveLast = []struct {
	name string
	to   func(s *Store, next uint64) error
}{
	{"SkipTo", func(s *Store, next uint64) error { return s.SkipTo(next) }},
	{"Compact", func(s *Store, next uint64) error { _, err := s.Compact(next); return err }},
}

// aheadBlocked opens a store under SyncNever whose next mark (2*reserveStep)
// is being written in the background, held, with last at the durable mark
// minus short. It returns the held fsync's release.
func aheadBlocked(t *testing.T, mem *vfs.MemFS, short uint64) (*Store, *reserveGate, chan struct{}) {
	t.Helper()
	fs, g := gateReserveSync(mem)
	s, err := Open("/s", Options{FS: fs, Sync: SyncNever, BootID: func() string { return "boot-1" }})
	if err != nil {
		t.Fatal(err)
	}
	reserveUpTo(t, s, reserveStep/2) // the first mark, reserveStep, in line
	g.armed.Store(true)
	reserveUpTo(t, s, reserveStep/2+1) // the next one starts in the background
	rel := <-g.blocked
	reserveUpTo(t, s, reserveStep-short)
	return s, g, rel
}

// TestReservationRecountsAfterWait: an append that waits for the mark
// being written in the background must count the sequence it needs again
// once it wakes. Meanwhile SkipTo or Compact may have moved the last
// sequence past the mark the wait brings; the append must then write a
// further mark, not hand out a sequence no durable mark covers (which a
// power cut followed by a reboot would hand out a second time).
func TestReservationRecountsAfterWait(t *testing.T) {
	for _, mv := range moveLast {
		t.Run(mv.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			s, _, rel := aheadBlocked(t, mem, 0)
			defer s.Close()
			type result struct {
				seq uint64
				err error
			}
			res := make(chan result, 1)
			go func() {
				seq, _, err := s.Append("a", nil, []byte("x"))
				res <- result{seq, err}
			}()
			awaitGoroutine(t, "waits for the reservation in an append", "sync.(*Cond).Wait", "(*Store).reserveLocked", "(*Store).AppendAsync")
			next := uint64(2*reserveStep + 10) // past the mark being written
			if err := mv.to(s, next); err != nil {
				t.Fatal(err)
			}
			close(rel)
			r := <-res
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.seq != next {
				t.Fatalf("append after %s(%d) got sequence %d", mv.name, next, r.seq)
			}
			upTo, _, _, ok := readReservation(mem.CrashClone(), "/s")
			if !ok || upTo < r.seq {
				t.Fatalf("a power cut now leaves the mark at %d (ok %v), below the acknowledged sequence %d", upTo, ok, r.seq)
			}
		})
	}
}

// TestReservationBatchNeverWaitsMidway: an atomic batch that waits for the
// mark before it starts must, once it wakes, reserve its sequences from
// the last sequence as it is then. Counted from the last sequence before
// the wait, the batch ran into the durable mark midway, waited there with
// the store lock released, and let other callers in (a commit, a reader,
// an append flagged as part of the batch) with half the batch written.
func TestReservationBatchNeverWaitsMidway(t *testing.T) {
	for _, mv := range moveLast {
		t.Run(mv.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			s, g, rel := aheadBlocked(t, mem, 1)
			defer s.Close()
			msgs := make([]store.Msg, 3)
			for i := range msgs {
				msgs[i] = store.Msg{Subject: "b", Data: []byte("y")}
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.AppendBatch(msgs)
				done <- err
			}()
			awaitGoroutine(t, "waits for the reservation in AppendBatch", "sync.(*Cond).Wait", "(*Store).reserveLocked", "(*Store).AppendBatch")
			// Leave room for two of the batch's three messages under the
			// mark being written.
			if err := mv.to(s, 2*reserveStep-1); err != nil {
				t.Fatal(err)
			}
			g.armed.Store(true) // hold the next mark's fsync too
			close(rel)
			rel2 := <-g.blocked
			// Either the batch writes the mark it needs in line, holding
			// the lock (right), or it started in the lock and a mark is
			// being written in the background that its third message has
			// to wait for (wrong). Look at the lock from outside.
			type seen struct {
				active bool
				last   uint64
			}
			look := make(chan seen, 1)
			go func() {
				s.mu.Lock()
				look <- seen{s.batch.active, s.last}
				s.mu.Unlock()
			}()
			var midway *seen
			for midway == nil {
				select {
				case v := <-look:
					midway = &v
				default:
				}
				if midway == nil && goroutineWith("(*Store).writeReservationLocked", "(*Store).AppendBatch") {
					break // the batch holds the lock while it writes the mark
				}
				runtime.Gosched()
			}
			close(rel2)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if midway == nil {
				v := <-look
				midway = &v
			}
			if midway.active {
				t.Fatalf("the store lock was free in the middle of an atomic batch (last sequence %d)", midway.last)
			}
			if first, want := msgs[0].Seq, uint64(2*reserveStep-1); first != want {
				t.Fatalf("batch starts at %d, want %d", first, want)
			}
			upTo, _, _, ok := readReservation(mem.CrashClone(), "/s")
			if !ok || upTo < msgs[2].Seq {
				t.Fatalf("a power cut now leaves the mark at %d (ok %v), below the batch's last sequence %d", upTo, ok, msgs[2].Seq)
			}
		})
	}
}

// TestReservationStepGrowsAfterWait: appenders that had to wait for the
// mark being written in the background double the step, once however many
// waited, so the next mark goes twice as far ahead, and starts once fewer
// than half of that are left (at once, here); a store whose appends never
// wait keeps reserveStep.
func TestReservationStepGrowsAfterWait(t *testing.T) {
	mem := vfs.NewMemFS()
	s, g, rel := aheadBlocked(t, mem, 0)
	defer s.Close()
	if s.reserve.step != reserveStep {
		t.Fatalf("step %d before any wait, want %d", s.reserve.step, reserveStep)
	}
	const waiters = 3
	done := make(chan error, waiters)
	for range waiters {
		go func() {
			_, _, err := s.Append("a", nil, []byte("x"))
			done <- err
		}()
	}
	for i := 0; goroutinesWith("sync.(*Cond).Wait", "(*Store).reserveLocked", "(*Store).AppendAsync") < waiters; i++ {
		if i == 200000 {
			t.Fatalf("fewer than %d appends wait for the reservation", waiters)
		}
		runtime.Gosched()
	}
	g.armed.Store(true) // hold the mark after the one being released
	close(rel)
	// Every waiter needed only the mark just released: none may wait for
	// the next one, which the first of them starts (and the gate holds).
	for got, i := 0, 0; got < waiters; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			got++
		default:
			if i == 200000 {
				g.armed.Store(false)
				go func() { close(<-g.blocked) }()
				t.Fatalf("%d of %d appends still wait, for a mark they do not need", waiters-got, waiters)
			}
			runtime.Gosched()
		}
	}
	// The appends that waited, sequences reserveStep+1 on, leave fewer than
	// step/2 (= reserveStep) under the mark 2*reserveStep: the first of
	// them started the next mark, 2*reserveStep further.
	rel = nil
	for i := 0; rel == nil && i < 200000; i++ {
		select {
		case rel = <-g.blocked:
		default:
			runtime.Gosched()
		}
	}
	if rel == nil {
		g.armed.Store(false) // or Close's mark would block
		t.Fatal("the append that waited started no next mark")
	}
	s.mu.Lock()
	step, upTo := s.reserve.step, s.reserve.upTo
	s.mu.Unlock()
	close(rel)
	if step != 2*reserveStep || upTo != 2*reserveStep {
		t.Fatalf("after the wait: step %d, mark %d; want %d and %d", step, upTo, 2*reserveStep, 2*reserveStep)
	}
	s.mu.Lock()
	s.reserve.waitLocked(&s.mu)
	next := s.reserve.upTo
	s.mu.Unlock()
	if next != 4*reserveStep {
		t.Fatalf("next mark %d, want %d", next, 4*reserveStep)
	}
	if got, _, _, ok := readReservation(mem.CrashClone(), "/s"); !ok || got != next {
		t.Fatalf("a power cut now leaves the mark at %d (ok %v), want %d", got, ok, next)
	}
}
