package raftlog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// crashFS wraps a MemFS and calls before() ahead of every operation that
// changes the disk, so a test can take a crash image at any of them.
type crashFS struct {
	*vfs.MemFS
	before func()
}

type crashFile struct {
	vfs.File
	before func()
}

func (c *crashFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &crashFile{File: f, before: c.before}, nil
}

func (c *crashFS) Create(name string) (vfs.File, error) {
	c.before()
	return c.wrap(c.MemFS.Create(name))
}
func (c *crashFS) Open(name string) (vfs.File, error)   { return c.wrap(c.MemFS.Open(name)) }
func (c *crashFS) OpenRW(name string) (vfs.File, error) { return c.wrap(c.MemFS.OpenRW(name)) }
func (c *crashFS) Remove(name string) error             { c.before(); return c.MemFS.Remove(name) }
func (c *crashFS) Rename(o, n string) error             { c.before(); return c.MemFS.Rename(o, n) }
func (c *crashFS) SyncDir(dir string) error             { c.before(); return c.MemFS.SyncDir(dir) }

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	f.before()
	return f.File.WriteAt(p, off)
}
func (f *crashFile) Write(p []byte) (int, error) { f.before(); return f.File.Write(p) }
func (f *crashFile) Sync() error                 { f.before(); return f.File.Sync() }
func (f *crashFile) Truncate(n int64) error      { f.before(); return f.File.Truncate(n) }
func (f *crashFile) Allocate(off, n int64) error { f.before(); return f.File.Allocate(off, n) }

// opKind says which outcomes a crash inside an operation may leave.
type opKind int

const (
	kindNone opKind = iota // no write in flight, or one that leaves the log as it was
	kindStore
	kindPrefix
	kindSuffix
	kindAll
)

// crashPoint is the state around the operation in flight at the crash.
type crashPoint struct {
	img       *vfs.MemFS
	kind      opKind
	pre, post model
	stablePre map[string]string
	stableKey string // key being set, if any
	stableVal string
}

func crashSeeds(t *testing.T, n int) []uint64 {
	if s := os.Getenv("JETWAL_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return []uint64{v}
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = rand.Uint64()
	}
	return seeds
}

// TestCrashRandomized runs random appends, truncations at both ends,
// stable-store writes and reopens on the crashable filesystem, takes a crash
// image (keeping a random part of unsynced appends) before a random disk
// operation, and checks that the image reopens to what was acknowledged,
// plus possibly part of the operation in flight: never a hole, a torn entry
// or a resurrected deleted tail, and the stable values old or new.
func TestCrashRandomized(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for _, seed := range crashSeeds(t, n) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("replay: JETWAL_CRASH_SEED=%d go test -run TestCrashRandomized ./raftlog", seed)
				}
			}()
			runCrash(t, seed, crypt.Config{})
		})
	}
}

func runCrash(t *testing.T, seed uint64, enc crypt.Config) {
	rng := rand.New(rand.NewPCG(seed, 2))
	mem := vfs.NewMemFS()
	opts := Options{MinSegmentSize: 4096 + rng.Int64N(8192), MaxSegmentSize: 32768, Encryption: enc}
	var (
		m       model
		kv      = map[string]string{}
		cur     crashPoint
		crashed *crashPoint
		count   int
		target  = 1 + rng.IntN(400)
	)
	cfs := &crashFS{MemFS: mem}
	cfs.before = func() {
		count++
		if count == target && crashed == nil {
			cp := cur
			cp.img = mem.CrashCloneTorn(rng)
			crashed = &cp
		}
	}
	setPoint := func(kind opKind, post model) {
		cur = crashPoint{kind: kind, pre: m.clone(), post: post, stablePre: copyKV(kv)}
	}
	setPoint(kindNone, m.clone())
	s, err := Open(cfs, "/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	term := uint64(1)
	nops := 20 + rng.IntN(120)
	for i := 0; i < nops && crashed == nil; i++ {
		last := m.last()
		switch p := rng.IntN(100); {
		case p < 60:
			next := last + 1
			if len(m.ents) == 0 {
				next = 1 + rng.Uint64N(50)
			}
			b := genEntries(next, 1+rng.IntN(40), term)
			post := m.clone()
			post.store(b)
			setPoint(kindStore, post)
			if err := s.StoreEntries(b); err != nil {
				t.Fatalf("op %d: StoreEntries: %v", i, err)
			}
			m = post
		case p < 70 && len(m.ents) > 1:
			f := m.first + 1 + rng.Uint64N(last-m.first)
			post := m.clone()
			post.deleteRange(0, f-1)
			setPoint(kindPrefix, post)
			if err := s.DeleteRange(0, f-1); err != nil {
				t.Fatalf("op %d: DeleteRange prefix: %v", i, err)
			}
			m = post
		case p < 80 && len(m.ents) > 1:
			x := m.first + rng.Uint64N(last-m.first)
			post := m.clone()
			post.deleteRange(x+1, last+5)
			setPoint(kindSuffix, post)
			if err := s.DeleteRange(x+1, last+5); err != nil {
				t.Fatalf("op %d: DeleteRange suffix: %v", i, err)
			}
			m = post
			term++ // a new leader's entries follow a suffix deletion
		case p < 83 && len(m.ents) > 0:
			setPoint(kindAll, model{})
			if err := s.DeleteRange(0, last+1); err != nil {
				t.Fatalf("op %d: DeleteRange all: %v", i, err)
			}
			m = model{}
		case p < 93:
			key := fmt.Sprintf("k%d", rng.IntN(3))
			val := fmt.Sprintf("%s=%d:%s", key, i, bytes.Repeat([]byte{'v'}, rng.IntN(300)))
			setPoint(kindNone, m.clone())
			cur.stableKey, cur.stableVal = key, val
			if err := s.Set([]byte(key), []byte(val)); err != nil {
				t.Fatalf("op %d: Set: %v", i, err)
			}
			kv[key] = val
		default:
			setPoint(kindNone, m.clone())
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = Open(cfs, "/db", opts); err != nil {
				t.Fatalf("op %d: reopen: %v", i, err)
			}
			checkModel(t, s, &m)
		}
	}
	if crashed == nil {
		// Every operation returned: the image must hold all of it.
		setPoint(kindNone, m.clone())
		cp := cur
		cp.img = mem.CrashCloneTorn(rng)
		crashed = &cp
	}
	s.Close()
	verifyCrash(t, crashed, opts)
}

func copyKV(kv map[string]string) map[string]string {
	out := make(map[string]string, len(kv))
	for k, v := range kv {
		out[k] = v
	}
	return out
}

// verifyCrash opens the crash image and checks it against the operation in
// flight, then checks that the recovered store takes writes and reopens.
func verifyCrash(t *testing.T, cp *crashPoint, opts Options) {
	t.Helper()
	if r, err := Check(cp.img, "/db"); err == nil && !r.OK() {
		t.Errorf("Check of the crash image found damage: %v", r.Damage)
	}
	s, err := Open(cp.img, "/db", opts)
	if err != nil {
		t.Fatalf("reopen after crash (op kind %d): %v", cp.kind, err)
	}
	if opts.Encryption.Enabled() && !s.Encrypted() {
		t.Fatal("encrypted log reopened in the clear after a crash")
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	pre, post := &cp.pre, &cp.post
	ref := pre
	okFirst, okLast := false, false
	switch cp.kind {
	case kindNone:
		okFirst, okLast = first == pre.first || len(pre.ents) == 0 && first == 0, last == pre.last()
	case kindStore:
		ref = post
		okFirst = first == post.first || len(pre.ents) == 0 && first == 0
		okLast = last >= pre.last() && last <= post.last()
	case kindPrefix:
		okFirst, okLast = first >= pre.first && first <= post.first, last == pre.last()
	case kindSuffix:
		okFirst, okLast = first == pre.first, last >= post.last() && last <= pre.last()
	case kindAll:
		okFirst = first == 0 && last == 0 || first == pre.first && last == pre.last()
		okLast = okFirst
	}
	if !okFirst || !okLast {
		t.Fatalf("op kind %d: recovered [%d, %d]; before [%d, %d], after [%d, %d]",
			cp.kind, first, last, pre.first, pre.last(), post.first, post.last())
	}
	var got model
	if first != 0 {
		got.first = first
		for idx := first; idx <= last; idx++ {
			var e Entry
			if err := s.GetEntry(idx, &e); err != nil {
				t.Fatalf("recovered range [%d, %d]: GetEntry(%d): %v", first, last, idx, err)
			}
			want := &ref.ents[idx-ref.first]
			if !entryEqual(&e, want) {
				t.Fatalf("GetEntry(%d) = term %d, want term %d (a resurrected or torn entry)", idx, e.Term, want.Term)
			}
			got.ents = append(got.ents, e)
		}
	}
	for k, old := range cp.stablePre {
		v, ok, err := s.Get([]byte(k))
		if err != nil || !ok {
			t.Fatalf("stable %s lost: %v", k, err)
		}
		if string(v) != old && !(k == cp.stableKey && string(v) == cp.stableVal) {
			t.Fatalf("stable %s = %.20q, want old %.20q or new %.20q", k, v, old, cp.stableVal)
		}
	}
	if cp.stableKey != "" {
		if _, had := cp.stablePre[cp.stableKey]; !had {
			if v, ok, _ := s.Get([]byte(cp.stableKey)); ok && string(v) != cp.stableVal {
				t.Fatalf("stable %s = %.20q, want absent or %.20q", cp.stableKey, v, cp.stableVal)
			}
		}
	}
	// The recovered store must take writes at both ends and reopen to them.
	next := last + 1
	if first == 0 {
		next = 7
	}
	b := genEntries(next, 30, 99)
	if err := s.StoreEntries(b); err != nil {
		t.Fatalf("append after recovery: %v", err)
	}
	got.store(b)
	if err := s.DeleteRange(next+20, next+40); err != nil {
		t.Fatal(err)
	}
	got.deleteRange(next+20, next+40)
	s.Close()
	s, err = Open(cp.img, "/db", opts)
	if err != nil {
		t.Fatalf("reopen after recovery: %v", err)
	}
	defer s.Close()
	checkModel(t, s, &got)
}
