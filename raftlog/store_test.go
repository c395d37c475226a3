package raftlog

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// op is one step of a behaviour case: store a batch, delete a range, or
// expect an error.
type op struct {
	store   []Entry
	del     [2]uint64
	isDel   bool
	wantErr string // substring of the expected error; the model is unchanged
}

func st(from uint64, n int, term uint64) op { return op{store: genEntries(from, n, term)} }
func del(lo, hi uint64) op                  { return op{del: [2]uint64{lo, hi}, isDel: true} }
func bad(o op, msg string) op               { o.wantErr = msg; return o }

// TestBehaviour runs each case on the real disk, checking the store against
// a model after every operation and again after reopening it.
func TestBehaviour(t *testing.T) {
	cases := []struct {
		name string
		ops  []op
	}{
		{"empty", nil},
		{"one entry", []op{st(1, 1, 1)}},
		{"batches across segments", []op{st(1, 10, 1), st(11, 100, 1), st(111, 1, 2), st(112, 300, 2)}},
		{"empty store starts anywhere", []op{st(1000, 20, 3)}},
		{"index 0 refused", []op{bad(st(0, 1, 1), "index 0")}},
		{"gap refused", []op{st(1, 10, 1), bad(st(12, 1, 1), "does not follow")}},
		{"overwrite refused", []op{st(1, 10, 1), bad(st(5, 1, 1), "does not follow")}},
		{"non-consecutive batch refused", []op{bad(op{store: append(genEntries(1, 2, 1), genEntry(4, 1))}, "not consecutive")}},
		{"prefix inside the first segment", []op{st(1, 50, 1), del(1, 10), st(51, 5, 1)}},
		{"prefix across segments", []op{st(1, 400, 1), del(1, 250), st(401, 10, 1)}},
		{"prefix with min below first", []op{st(10, 300, 1), del(0, 200)}},
		{"prefix twice", []op{st(1, 400, 1), del(1, 100), del(101, 300)}},
		{"suffix in the active segment", []op{st(1, 20, 1), del(15, 20), st(15, 10, 2)}},
		{"suffix into a sealed segment", []op{st(1, 400, 1), del(30, 400), st(30, 40, 2)}},
		{"suffix with max past last", []op{st(1, 300, 1), del(200, 1<<40), st(200, 1, 2)}},
		{"suffix twice then append", []op{st(1, 300, 1), del(250, 300), del(100, 249), st(100, 300, 3), del(390, 399)}},
		{"prefix and suffix", []op{st(1, 400, 1), del(1, 150), del(300, 400), st(300, 5, 2), del(1, 200)}},
		{"delete all then continue above", []op{st(1, 100, 1), del(1, 100), st(500, 10, 2)}},
		{"delete all then restart below the old first", []op{st(1, 300, 1), del(1, 200), del(0, 1000), st(50, 20, 2)}},
		{"delete on empty store", []op{del(1, 10), st(1, 5, 1)}},
		{"delete outside the range", []op{st(10, 20, 1), del(1, 5), del(40, 50), del(7, 3)}},
		{"middle refused", []op{st(1, 100, 1), bad(del(10, 20), "only a prefix or a suffix")}},
		{"entry larger than a segment", []op{st(1, 3, 1), {store: []Entry{{Index: 4, Term: 1, Data: make([]byte, 40000)}}}, st(5, 3, 1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, nil, dir, smallOpts)
			defer func() { s.Close() }()
			var m model
			step := func(i int, o op) {
				var err error
				if o.isDel {
					err = s.DeleteRange(o.del[0], o.del[1])
				} else {
					err = s.StoreEntries(o.store)
				}
				if o.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), o.wantErr) {
						t.Fatalf("op %d: err %v, want %q", i, err, o.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
				if o.isDel {
					m.deleteRange(o.del[0], o.del[1])
				} else {
					m.store(o.store)
				}
			}
			for i, o := range tc.ops {
				step(i, o)
				checkModel(t, s, &m)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				checkClean(t, vfs.Default, dir)
				s = mustOpen(t, nil, dir, smallOpts)
				checkModel(t, s, &m)
			}
			if len(tc.ops) == 0 {
				checkModel(t, s, &m)
				s.Close()
				s = mustOpen(t, nil, dir, smallOpts)
				checkModel(t, s, &m)
			}
		})
	}
}

func TestStableStore(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, nil, dir, Options{})
	if v, ok, err := s.Get([]byte("missing")); err != nil || ok || v != nil {
		t.Fatalf("Get(missing) = %q, %v, %v", v, ok, err)
	}
	if v, ok, err := s.GetUint64([]byte("missing")); err != nil || ok || v != 0 {
		t.Fatalf("GetUint64(missing) = %d, %v, %v", v, ok, err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetUint64([]byte("CurrentTerm"), 7))
	must(s.Set([]byte("LastVoteCand"), []byte("node-2")))
	must(s.Set([]byte("empty"), nil))
	must(s.SetUint64([]byte("CurrentTerm"), 8))
	for round := 0; round < 2; round++ {
		if v, ok, err := s.GetUint64([]byte("CurrentTerm")); err != nil || !ok || v != 8 {
			t.Fatalf("round %d: CurrentTerm = %d, %v, %v", round, v, ok, err)
		}
		if v, ok, err := s.Get([]byte("LastVoteCand")); err != nil || !ok || string(v) != "node-2" {
			t.Fatalf("round %d: LastVoteCand = %q, %v, %v", round, v, ok, err)
		}
		if v, ok, err := s.Get([]byte("empty")); err != nil || !ok || len(v) != 0 {
			t.Fatalf("round %d: empty = %q, %v, %v", round, v, ok, err)
		}
		if _, _, err := s.GetUint64([]byte("LastVoteCand")); err == nil {
			t.Fatalf("GetUint64 of a 6-byte value: no error")
		}
		must(s.Close())
		s = mustOpen(t, nil, dir, Options{})
	}
	s.Close()
}

// TestConcurrentReaders reads random entries while batches are stored and
// prefixes deleted; every read must return the right entry or ErrNotFound
// for an index deleted meanwhile, and never an entry not yet synced.
func TestConcurrentReaders(t *testing.T) {
	s := mustOpen(t, nil, t.TempDir(), smallOpts)
	defer s.Close()
	if err := s.StoreEntries(genEntries(1, 10, 1)); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	errc := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 0))
			for !stop.Load() {
				first, _ := s.FirstIndex()
				last, _ := s.LastIndex()
				if last < first || first == 0 {
					continue
				}
				idx := first + rng.Uint64N(last-first+1)
				var e Entry
				err := s.GetEntry(idx, &e)
				if errors.Is(err, ErrNotFound) {
					if f, _ := s.FirstIndex(); f > idx {
						continue // deleted between the two calls
					}
				}
				if err != nil {
					errc <- err
					return
				}
				if want := genEntry(idx, 1); !entryEqual(&e, &want) {
					errc <- errors.New("wrong entry read")
					return
				}
				reads.Add(1)
			}
		}(uint64(r))
	}
	next := uint64(11)
	for i := 0; i < 300; i++ {
		n := 1 + i%17
		if err := s.StoreEntries(genEntries(next, n, 1)); err != nil {
			t.Fatal(err)
		}
		next += uint64(n)
		if i%50 == 49 {
			if err := s.DeleteRange(0, next-200); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Let the readers see the final state at least once.
	for reads.Load() < 1000 && len(errc) == 0 {
		var e Entry
		s.GetEntry(next-1, &e)
	}
	stop.Store(true)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
}

// TestStickyWriteError: after a failed sync the store refuses writes until
// reopened, and the reopened store holds what was acknowledged.
func TestStickyWriteError(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	s := mustOpen(t, efs, "/db", smallOpts)
	var m model
	b := genEntries(1, 10, 1)
	if err := s.StoreEntries(b); err != nil {
		t.Fatal(err)
	}
	m.store(b)
	efs.Inject(vfs.Fault{Op: vfs.OpSync, Path: ".seg", Times: 1})
	if err := s.StoreEntries(genEntries(11, 5, 1)); err == nil {
		t.Fatal("StoreEntries with a failing sync: no error")
	}
	efs.Clear()
	if err := s.StoreEntries(genEntries(11, 5, 1)); err == nil || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("write after a failed sync: err %v, want the sticky error", err)
	}
	if err := s.DeleteRange(1, 3); err == nil {
		t.Fatal("DeleteRange after a failed sync: no error")
	}
	checkModel(t, s, &m) // reads go on
	s.Close()
	s = mustOpen(t, mem.CrashClone(), "/db", smallOpts)
	defer s.Close()
	checkModel(t, s, &m)
}

// TestOuterLock: with Options.OuterLock a store holds an in-process claim
// on its directory instead of a lock file: no LockFile is created, a
// second open in this process is refused until the first closes, and
// the entries survive the reopen.
func TestOuterLock(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, nil, dir, Options{OuterLock: true})
	if err := s.StoreEntries([]Entry{{Index: 1, Term: 1, Data: []byte("a")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s with OuterLock: %v, want none", LockFile, err)
	}
	if s2, err := Open(nil, dir, Options{OuterLock: true}); err == nil {
		s2.Close()
		t.Fatal("second open of a claimed directory succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, nil, dir, Options{OuterLock: true})
	defer s.Close()
	if last, err := s.LastIndex(); err != nil || last != 1 {
		t.Fatalf("after reopen: last index %d, %v; want 1", last, err)
	}
}
