package consumerstate

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// catalogOpts are the options of the catalogue crash tests: no background
// flush during a run, and a catalogue small enough that creates compact it
// every few records.
func catalogOpts(fsys vfs.FS, mode SyncMode, key *crypt.DataKey) Options {
	return Options{FS: fsys, Sync: SyncPolicy{Mode: mode, Interval: time.Hour}, catalogBytes: 180, Key: key}
}

// catWorld is what a store holds: consumer name -> "config@delivered
// stream sequence".
type catWorld map[string]string

func (w catWorld) with(name, v string) catWorld {
	o := maps.Clone(w)
	if v == "" {
		delete(o, name)
	} else {
		o[name] = v
	}
	return o
}

// readWorld lists and loads every consumer of s.
func readWorld(t *testing.T, s *Store) (catWorld, error) {
	t.Helper()
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	w := catWorld{}
	for _, n := range names {
		c, err := s.Load(n)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", n, err)
		}
		st := c.Snapshot()
		if err := st.Verify(); err != nil {
			return nil, fmt.Errorf("consumer %s: %w", n, err)
		}
		w[n] = fmt.Sprintf("%s@%d", c.Config(), st.Delivered.Stream)
	}
	return w, nil
}

// TestCrashCatalog crashes (power cut, power cut tearing unsynced bytes,
// kill -9) before every mutating operation of a sequence of creates
// (materialized and not), deliveries, config updates, deletes, catalogue
// compactions, Store.Flush and a close and reopen. The reopened store must
// pass Check and hold exactly the consumers, configs and acknowledged
// states of before or after the operation in flight, and hold them again
// after a clean close and reopen. Creates, deletes, Flush, Store.Flush and
// Close are durable under every sync policy, so every policy must pass.
func TestCrashCatalog(t *testing.T) {
	for _, mode := range []SyncMode{ModeAlways, ModeInterval, ModeNever} {
		t.Run(mode.String(), func(t *testing.T) { crashCatalog(t, mode, nil) })
	}
	// Encrypted (Options.Key): sealed catalogue records and consumers.
	t.Run("always-encrypted", func(t *testing.T) { crashCatalog(t, ModeAlways, testDataKey(t)) })
}

func crashCatalog(t *testing.T, mode SyncMode, key *crypt.DataKey) {
	cfg := func(v int) string { return fmt.Sprintf(`{"v":%d}`, v) }
	at := func(v, delivered int) string { return fmt.Sprintf("%s@%d", cfg(v), delivered) }
	type catOp struct {
		name  string
		do    func(s **Store) error
		after func(w catWorld) catWorld
	}
	create := func(name string, v int) catOp {
		return catOp{"create " + name, func(s **Store) error { _, err := (*s).Create(name, []byte(cfg(v))); return err },
			func(w catWorld) catWorld { return w.with(name, at(v, 0)) }}
	}
	del := func(name string) catOp {
		return catOp{"delete " + name, func(s **Store) error { return (*s).Delete(name) },
			func(w catWorld) catWorld { return w.with(name, "") }}
	}
	same := func(w catWorld) catWorld { return w }
	ops := []catOp{
		create("a", 1),
		create("b", 2),
		{"deliver to a, flush", func(s **Store) error {
			c, err := (*s).Load("a")
			if err != nil {
				return err
			}
			if err := c.Update(func(st *State) { st.Deliver(1, 1, 1); st.Deliver(2, 1, 2) }); err != nil {
				return err
			}
			return c.Flush()
		}, func(w catWorld) catWorld { return w.with("a", at(1, 2)) }},
		{"config b before its directory: an update record", func(s **Store) error {
			c, err := (*s).Load("b")
			if err != nil {
				return err
			}
			return c.UpdateConfig([]byte(cfg(3)))
		}, func(w catWorld) catWorld { return w.with("b", at(3, 0)) }},
		{"deliver to b, flush", func(s **Store) error {
			c, err := (*s).Load("b")
			if err != nil {
				return err
			}
			if err := c.Update(func(st *State) { st.Deliver(4, 1, 1) }); err != nil {
				return err
			}
			return c.Flush()
		}, func(w catWorld) catWorld { return w.with("b", at(3, 4)) }},
		del("b"), // materialized and in the catalogue
		create("c", 4),
		del("c"), // never materialized
		create("d", 5),
		create("e", 6), // the catalogue is full: compaction
		del("a"),       // materialized, no longer in the catalogue
		del("e"),       // in the catalogue only
		create("a", 7),
		{"deliver to a, store flush", func(s **Store) error {
			c, err := (*s).Load("a")
			if err != nil {
				return err
			}
			if err := c.Update(func(st *State) { st.Deliver(1, 1, 1) }); err != nil {
				return err
			}
			return (*s).Flush()
		}, func(w catWorld) catWorld { return w.with("a", at(7, 1)) }},
		create("f", 8),
		create("g", 9),
		del("d"),
		{"deliver to g, no flush", func(s **Store) error {
			c, err := (*s).Load("g")
			if err != nil {
				return err
			}
			return c.Update(func(st *State) { st.Deliver(1, 1, 1); st.Deliver(2, 1, 1) })
		}, same},
		{"close and reopen", func(s **Store) error {
			fsys := (*s).opts.FS
			if err := (*s).Close(); err != nil {
				return err
			}
			s2, err := Open("/obs", catalogOpts(fsys, mode, key))
			*s = s2
			return err
		}, func(w catWorld) catWorld { return w.with("g", at(9, 2)) }},
		del("f"),
		create("h", 10),
	}
	worlds := []catWorld{{}}
	for _, o := range ops {
		worlds = append(worlds, o.after(worlds[len(worlds)-1]))
	}
	seed := testSeed(t)
	for _, kind := range []string{"power", "torn", "kill"} {
		for crashAt := 1; ; crashAt++ {
			cr := &crasher{mem: vfs.NewMemFS(), crashAt: crashAt, armed: true, process: kind == "kill"}
			if kind == "torn" {
				cr.rng = rand.New(rand.NewPCG(seed, uint64(crashAt)))
			}
			where := func() string { return fmt.Sprintf("%s crash at op %d", kind, crashAt) }
			s, err := Open("/obs", catalogOpts(cr.fs(), mode, key))
			if err != nil {
				t.Fatalf("%s: open: %v", where(), err)
			}
			inFlight := -1
			for i, o := range ops {
				if cr.crashed() {
					break
				}
				inFlight = i
				if err := o.do(&s); err != nil {
					t.Fatalf("%s: %s: %v", where(), o.name, err)
				}
			}
			done := !cr.crashed()
			_ = s.Close()
			if done {
				// every crash point covered
				if crashAt < 60 {
					t.Fatalf("%s: the sequence made only %d mutating operations", kind, crashAt-1)
				}
				t.Logf("%s: %d crash points", kind, crashAt-1)
				break
			}
			image := cr.image
			if inFlight < 0 {
				continue // crashed while opening the empty store
			}
			what := fmt.Sprintf("%s (during %s)", where(), ops[inFlight].name)
			before, after := worlds[inFlight], worlds[inFlight+1]
			if err := CheckKey("/obs", image, key); err != nil {
				t.Fatalf("%s: check: %v", what, err)
			}
			s2, err := Open("/obs", catalogOpts(image, mode, key))
			if err != nil {
				t.Fatalf("%s: reopen: %v", what, err)
			}
			got, err := readWorld(t, s2)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !maps.Equal(got, before) && !maps.Equal(got, after) {
				t.Fatalf("%s: consumers %v, want %v or %v", what, got, before, after)
			}
			if err := s2.Close(); err != nil {
				t.Fatalf("%s: close after recovery: %v", what, err)
			}
			again := image.CrashClone()
			if err := CheckKey("/obs", again, key); err != nil {
				t.Fatalf("%s: check after recovery: %v", what, err)
			}
			s3, err := Open("/obs", catalogOpts(again, mode, key))
			if err != nil {
				t.Fatalf("%s: second reopen: %v", what, err)
			}
			got2, err := readWorld(t, s3)
			s3.Close()
			if err != nil {
				t.Fatalf("%s: second reopen: %v", what, err)
			}
			if !maps.Equal(got, got2) {
				t.Fatalf("%s: consumers %v after recovery, %v after a clean reopen", what, got, got2)
			}
		}
	}
}
