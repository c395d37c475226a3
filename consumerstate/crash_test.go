package consumerstate

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// crasher takes a crash image of a MemFS just before its crashAt-th
// mutating operation (counting from when it is armed), and lets the test
// record, at that instant, which states the consumers could legally come
// back in.
type crasher struct {
	mem     *vfs.MemFS
	rng     *rand.Rand // nil: CrashClone, else CrashCloneTorn
	process bool       // ProcessCrashClone (kill -9), overrides rng

	mu      sync.Mutex
	armed   bool
	n       int
	crashAt int
	image   *vfs.MemFS
	onCrash func() // runs with mu held, at the crash
}

func (c *crasher) fs() vfs.FS {
	return &vfs.HookFS{Inner: c.mem, Hook: func(op, path string, mut bool) {
		if !mut {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.armed || c.image != nil {
			return
		}
		c.n++
		if c.n == c.crashAt {
			c.crashLocked()
		}
	}}
}

func (c *crasher) crashLocked() {
	if c.process {
		c.image = c.mem.ProcessCrashClone()
	} else if c.rng != nil {
		c.image = c.mem.CrashCloneTorn(c.rng)
	} else {
		c.image = c.mem.CrashClone()
	}
	if c.onCrash != nil {
		c.onCrash()
	}
}

func (c *crasher) crashed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.image != nil
}

// history is what one consumer went through: every state it had, every
// config, and how far each is known durable.
type history struct {
	states      []State
	durable     int // states[durable:] are acceptable after a crash
	cfgs        []string
	cfgDurable  int
	atCrash     int // len(states)-1 at the crash
	cfgAtCrash  int
	durAtCrash  int
	cfgDurCrash int
}

// randomOp applies one random operation to c and records the result.
func randomOp(t *testing.T, rng *rand.Rand, c *Consumer, h *history, ts *int64) {
	t.Helper()
	*ts += int64(rng.IntN(1000))
	now := *ts
	err := c.Update(func(s *State) {
		pick := func() StreamSeq {
			if len(s.Pending) == 0 || rng.IntN(8) == 0 {
				return s.AckFloor.Stream + StreamSeq(rng.IntN(4))
			}
			// pending seqs lie in (floor, delivered]; probe a few
			for range 8 {
				x := s.AckFloor.Stream + 1 + StreamSeq(rng.IntN(int(s.Delivered.Stream-s.AckFloor.Stream)))
				if _, ok := s.Pending[x]; ok {
					return x
				}
			}
			return s.Delivered.Stream
		}
		switch r := rng.IntN(100); {
		case r < 35:
			for range 1 + rng.IntN(3) {
				if _, err := s.Deliver(s.Delivered.Stream+1+StreamSeq(rng.IntN(3)), 1, now); err != nil {
					t.Fatal(err)
				}
			}
		case r < 45:
			sseq := pick()
			s.Deliver(sseq, s.DeliveryCount(sseq)+1, now) // may be rejected: not pending
		case r < 75:
			s.Ack(pick())
		case r < 80:
			s.AckAll(pick())
		case r < 88:
			s.Nak(pick(), now+int64(rng.IntN(2))*int64(time.Second))
		case r < 95:
			s.Term(pick())
		case r < 97:
			if _, err := s.DeliverNoAck(s.Delivered.Stream + 1); err != nil && len(s.Pending) == 0 {
				t.Fatal(err)
			}
		case r < 99:
			s.Reset(StreamSeq(max(0, int64(s.Delivered.Stream)+int64(rng.IntN(20))-5)))
		default:
			s.Rewind(StreamSeq(max(0, int64(s.Delivered.Stream)+int64(rng.IntN(20))-5)))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	h.states = append(h.states, c.Snapshot())
}

// TestCrashRandomized runs random delivery/ack/nak/term sequences on two
// consumers with random flushes, checkpoints and config updates, crashes the
// MemFS before a random mutating operation (keeping or tearing unsynced
// bytes), and reopens. Each consumer must come back in a state it actually
// had at or after its last completed Flush, with a config it had at or
// after its last completed UpdateConfig; the recovered store must then keep
// working and survive a clean reopen.
func TestCrashRandomized(t *testing.T) {
	seed := testSeed(t)
	runs := 300
	if testing.Short() {
		runs = 50
	}
	for run := range runs {
		// Every other run encrypted (Options.Key): sealed records,
		// snapshots, configs and catalogue through the same crashes.
		var key *crypt.DataKey
		if run%2 == 1 {
			key = testDataKey(t)
		}
		crashRun(t, seed+uint64(run), key)
	}
}

func crashRun(t *testing.T, seed uint64, key *crypt.DataKey) {
	rng := rand.New(rand.NewPCG(seed, 3))
	var setup string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (%s): %s (replay: go test -run '^TestCrashRandomized$' ./consumerstate/ -consumerstate.seed=%d)",
			seed, setup, fmt.Sprintf(format, args...), seed)
	}
	cr := &crasher{mem: vfs.NewMemFS(), crashAt: 1 + rng.IntN(150)}
	if rng.IntN(2) == 0 {
		cr.rng = rand.New(rand.NewPCG(seed, 4))
	}
	policies := []SyncPolicy{SyncAlways(), SyncInterval(time.Hour), {Mode: ModeNever, Interval: time.Hour},
		SyncInterval(time.Millisecond), {Mode: ModeNever, Interval: time.Millisecond}}
	opts := Options{
		Sync:         policies[rng.IntN(len(policies))],
		CompactBytes: []int64{-1, 100, 600, 0}[rng.IntN(4)],
		// One open log for two consumers: each write of one may close
		// the other's log (logcache.go), so crashes land between a
		// close and the reopen too.
		MaxOpenLogs: []int{0, 1}[rng.IntN(2)],
		Key:         key,
	}
	fsys := cr.fs()
	setup = fmt.Sprintf("sync %v, compact %d, open logs %d, crash at op %d, torn %v, encrypted %v", opts.Sync, opts.CompactBytes, opts.MaxOpenLogs, cr.crashAt, cr.rng != nil, key != nil)
	s := openStore(t, fsys, "/obs", opts)
	names := []string{"a", "b"}
	cons := map[string]*Consumer{}
	hist := map[string]*history{}
	for _, n := range names {
		cfg := fmt.Sprintf(`{"durable_name":%q,"v":0}`, n)
		c, err := s.Create(n, []byte(cfg))
		if err != nil {
			fail("create: %v", err)
		}
		cons[n] = c
		hist[n] = &history{states: []State{c.Snapshot()}, cfgs: []string{cfg}}
	}
	var mu sync.Mutex // guards hist's durable marks against the crash hook
	cr.mu.Lock()
	cr.armed = true
	cr.onCrash = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hist {
			h.atCrash, h.durAtCrash = len(h.states)-1, h.durable
			h.cfgAtCrash, h.cfgDurCrash = len(h.cfgs)-1, h.cfgDurable
		}
	}
	cr.mu.Unlock()
	markDurable := func(hs ...*history) {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hs {
			h.durable = len(h.states) - 1
		}
	}
	ts := int64(1_700_000_000_000_000_000)
	for step := 0; step < 400 && !cr.crashed(); step++ {
		n := names[rng.IntN(len(names))]
		c, h := cons[n], hist[n]
		mu.Lock()
		randomOp(t, rng, c, h, &ts)
		mu.Unlock()
		switch r := rng.IntN(100); {
		case r < 15:
			if err := c.Flush(); err != nil {
				fail("flush: %v", err)
			}
			markDurable(h)
		case r < 20:
			if err := s.Flush(); err != nil {
				fail("store flush: %v", err)
			}
			markDurable(hist["a"], hist["b"])
		case r < 22:
			if err := c.Checkpoint(); err != nil {
				fail("checkpoint: %v", err)
			}
			markDurable(h)
		case r < 24:
			cfg := fmt.Sprintf(`{"durable_name":%q,"v":%d}`, n, step)
			mu.Lock()
			h.cfgs = append(h.cfgs, cfg)
			mu.Unlock()
			if err := c.UpdateConfig([]byte(cfg)); err != nil {
				fail("update config: %v", err)
			}
			mu.Lock()
			h.cfgDurable = len(h.cfgs) - 1
			mu.Unlock()
		}
	}
	cr.mu.Lock()
	if cr.image == nil {
		cr.crashLocked()
	}
	image := cr.image
	cr.mu.Unlock()
	_ = s.Close() // the live store is abandoned; only the image matters

	if err := Check("/obs", image); err != nil {
		fail("check after crash: %v", err)
	}
	if err := CheckKey("/obs", image, key); err != nil {
		fail("check with the key after crash: %v", err)
	}
	s2, err := Open("/obs", Options{FS: image, Sync: SyncAlways(), CompactBytes: opts.CompactBytes, Key: key})
	if err != nil {
		fail("reopen: %v", err)
	}
	for _, n := range names {
		h := hist[n]
		c, err := s2.Load(n)
		if err != nil {
			fail("load %s after crash: %v", n, err)
		}
		got := c.Snapshot()
		if err := got.Verify(); err != nil {
			fail("consumer %s: %v", n, err)
		}
		found := -1
		for j := h.durAtCrash; j <= h.atCrash; j++ {
			if got.Equal(&h.states[j]) {
				found = j
				break
			}
		}
		if found < 0 {
			older := -1
			for j := 0; j < h.durAtCrash; j++ {
				if got.Equal(&h.states[j]) {
					older = j
				}
			}
			fail("consumer %s: recovered state %+v is not one of states %d..%d (matches older state %d)",
				n, got, h.durAtCrash, h.atCrash, older)
		}
		cfg := string(c.Config())
		okCfg := false
		for j := h.cfgDurCrash; j <= h.cfgAtCrash; j++ {
			okCfg = okCfg || cfg == h.cfgs[j]
		}
		if !okCfg {
			fail("consumer %s: config %s not among %v[%d:%d]", n, cfg, h.cfgs, h.cfgDurCrash, h.cfgAtCrash+1)
		}
		// Keep going on the recovered files.
		h.states = []State{got}
		for range 30 {
			randomOp(t, rng, c, h, &ts)
			if rng.IntN(4) == 0 {
				if err := c.Flush(); err != nil {
					fail("flush after recovery: %v", err)
				}
			}
		}
	}
	if key != nil {
		// The records written before the crash and after it, at the
		// offsets the torn tail was cut at too, never share a nonce.
		checkNoncesUnique(t, image, "/obs")
	}
	if err := s2.Close(); err != nil {
		fail("close after recovery: %v", err)
	}
	s3, err := Open("/obs", Options{FS: image.CrashClone(), Key: key})
	if err != nil {
		fail("clean reopen: %v", err)
	}
	defer s3.Close()
	for _, n := range names {
		c, err := s3.Load(n)
		if err != nil {
			fail("clean reopen load %s: %v", n, err)
		}
		want := hist[n].states[len(hist[n].states)-1]
		if got := c.Snapshot(); !got.Equal(&want) {
			fail("consumer %s after clean reopen: %+v, want %+v", n, got, want)
		}
	}
}

// TestCrashDirectoryOps crashes before every mutating operation of a
// sequence of Create, UpdateConfig and Delete calls. After reopening, the
// set of consumers and their configs must be what it was before or after
// the operation in flight, and every consumer must load.
func TestCrashDirectoryOps(t *testing.T) {
	type world map[string]string // consumer -> config
	type dirOp struct {
		name string
		do   func(s *Store) error
		// after is the world after the op, given the one before.
		after func(w world) world
	}
	cfg := func(v int) string { return fmt.Sprintf(`{"v":%d}`, v) }
	with := func(w world, k, v string) world {
		o := world{}
		for a, b := range w {
			o[a] = b
		}
		if v == "" {
			delete(o, k)
		} else {
			o[k] = v
		}
		return o
	}
	load := func(s *Store, n string) (*Consumer, error) { return s.Load(n) }
	ops := []dirOp{
		{"create a", func(s *Store) error { _, err := s.Create("a", []byte(cfg(1))); return err },
			func(w world) world { return with(w, "a", cfg(1)) }},
		{"work a", func(s *Store) error {
			c, err := load(s, "a")
			if err != nil {
				return err
			}
			c.Update(func(st *State) { st.Deliver(1, 1, 1); st.Deliver(2, 1, 2) })
			return c.Flush()
		}, func(w world) world { return w }},
		{"config a", func(s *Store) error {
			c, err := load(s, "a")
			if err != nil {
				return err
			}
			return c.UpdateConfig([]byte(cfg(2)))
		}, func(w world) world { return with(w, "a", cfg(2)) }},
		{"create b", func(s *Store) error { _, err := s.Create("b", []byte(cfg(3))); return err },
			func(w world) world { return with(w, "b", cfg(3)) }},
		{"checkpoint b", func(s *Store) error {
			c, err := load(s, "b")
			if err != nil {
				return err
			}
			c.Update(func(st *State) { st.Deliver(5, 1, 1) })
			return c.Checkpoint()
		}, func(w world) world { return w }},
		{"delete a", func(s *Store) error { return s.Delete("a") },
			func(w world) world { return with(w, "a", "") }},
		{"create a again", func(s *Store) error { _, err := s.Create("a", []byte(cfg(4))); return err },
			func(w world) world { return with(w, "a", cfg(4)) }},
		{"delete b", func(s *Store) error { return s.Delete("b") },
			func(w world) world { return with(w, "b", "") }},
	}
	worlds := []world{{}}
	for _, o := range ops {
		worlds = append(worlds, o.after(worlds[len(worlds)-1]))
	}
	same := func(a, b world) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if b[k] != v {
				return false
			}
		}
		return true
	}
	seed := testSeed(t)
	for _, torn := range []bool{false, true} {
		for crashAt := 1; ; crashAt++ {
			cr := &crasher{mem: vfs.NewMemFS(), crashAt: crashAt, armed: true}
			if torn {
				cr.rng = rand.New(rand.NewPCG(seed, uint64(crashAt)))
			}
			inFlight := -1
			cr.onCrash = func() {}
			s, err := Open("/stream/obs", Options{FS: cr.fs(), Sync: SyncAlways()})
			for i, o := range ops {
				if err != nil {
					break
				}
				if cr.crashed() {
					break
				}
				inFlight = i
				if e := o.do(s); e != nil {
					t.Fatalf("crashAt %d: %s: %v", crashAt, o.name, e)
				}
			}
			if !cr.crashed() {
				s.Close()
				break // every crash point covered
			}
			s.Close()
			image := cr.image
			if err := Check("/stream/obs", image); err != nil && inFlight >= 0 {
				t.Fatalf("crashAt %d (during %s): check: %v", crashAt, ops[inFlight].name, err)
			}
			s2, err := Open("/stream/obs", Options{FS: image})
			if err != nil {
				if inFlight < 0 {
					continue // crashed while creating the obs directory itself
				}
				t.Fatalf("crashAt %d: reopen: %v", crashAt, err)
			}
			got := world{}
			names, err := s2.List()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				c, err := s2.Load(n)
				if err != nil {
					t.Fatalf("crashAt %d (during %s): load %s: %v", crashAt, ops[max(inFlight, 0)].name, n, err)
				}
				got[n] = string(c.Config())
			}
			s2.Close()
			before, after := worlds[max(inFlight, 0)], worlds[max(inFlight, 0)+1]
			if inFlight < 0 {
				after = worlds[0]
			}
			if !same(got, before) && !same(got, after) {
				t.Fatalf("crashAt %d (during %s, torn %v): consumers %v, want %v or %v",
					crashAt, ops[max(inFlight, 0)].name, torn, got, before, after)
			}
		}
	}
}
