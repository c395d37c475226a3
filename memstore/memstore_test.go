package memstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/store/storetest"
)

// open is the storetest factory; every store it returns is checked for
// internal consistency when its test ends.
func open(t *testing.T, l store.Limits) store.StreamStore {
	s, err := New(l)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("Check: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, open) }

func mustNew(t *testing.T, l store.Limits) *Store {
	t.Helper()
	s, err := New(l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestNewRejectsBadDiscard(t *testing.T) {
	if _, err := New(store.Limits{Discard: 7}); err == nil {
		t.Fatal("New accepted discard policy 7")
	}
	s := mustNew(t, store.Limits{})
	if err := s.UpdateLimits(store.Limits{Discard: -1}); err == nil {
		t.Fatal("UpdateLimits accepted discard policy -1")
	}
}

// TestAppendAsyncDoneBeforeReturn pins the memstore promise: done has run
// when AppendAsync returns.
func TestAppendAsyncDoneBeforeReturn(t *testing.T) {
	s := mustNew(t, store.Limits{})
	for i := 1; i <= 10; i++ {
		var got uint64
		if err := s.AppendAsync("x", nil, nil, func(seq uint64, _ int64, _ error) { got = seq }); err != nil {
			t.Fatal(err)
		}
		if got != uint64(i) {
			t.Fatalf("after AppendAsync %d done had seen seq %d", i, got)
		}
	}
	if err := s.AppendAsync("x", nil, nil, nil); err != nil {
		t.Fatalf("nil done: %v", err)
	}
}

// TestDoneMayCallStore checks that a done callback can read the store
// while other goroutines append.
func TestDoneMayCallStore(t *testing.T) {
	s := mustNew(t, store.Limits{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				err := s.AppendAsync("cb", nil, nil, func(seq uint64, _ int64, _ error) {
					var m store.Msg
					if err := s.Load(seq, &m); err != nil {
						t.Errorf("Load(%d) from done: %v", seq, err)
					}
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := s.State(); st.Msgs != 800 {
		t.Fatalf("msgs %d", st.Msgs)
	}
}

// TestCloseStopsExpiry checks that Close stops the age timer.
func TestCloseStopsExpiry(t *testing.T) {
	s := mustNew(t, store.Limits{MaxAge: time.Hour})
	if _, _, err := s.Append("a", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	armed := s.ageArmed
	s.mu.RUnlock()
	if !armed {
		t.Fatal("no expiry scheduled after an append with MaxAge")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	armed = s.ageArmed
	s.mu.RUnlock()
	if armed || s.ageTimer.Stop() {
		t.Fatal("age timer still scheduled after Close")
	}
}

// TestRandomCheck runs random operations and verifies the internal
// invariants after every one of them.
func TestRandomCheck(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	s := mustNew(t, store.Limits{MaxMsgs: 3000, MaxMsgsPerSubject: 400})
	var maxMsgs uint64
	for i := 0; i < 20000; i++ {
		var err error
		switch p := rng.IntN(100); {
		case p < 70:
			_, _, err = s.Append(fmt.Sprintf("k.%d.%d", rng.IntN(5), rng.IntN(4)), nil, make([]byte, rng.IntN(50)))
		case p < 92:
			st := s.State()
			err = s.Delete(st.FirstSeq+rng.Uint64N(st.LastSeq-st.FirstSeq+2), rng.IntN(2) == 0)
			if errors.Is(err, store.ErrNotFound) {
				err = nil
			}
		case p < 93 && rng.IntN(20) == 0:
			_, err = s.Purge(fmt.Sprintf("k.%d.*", rng.IntN(5)), 0, rng.Uint64N(3))
		case p >= 93:
			err = s.Truncate(s.State().LastSeq - rng.Uint64N(5))
		}
		if err != nil {
			t.Fatalf("seed %d op %d: %v", seed, i, err)
		}
		maxMsgs = max(maxMsgs, s.State().Msgs)
		if i%16 != 0 {
			continue
		}
		if err := s.Check(); err != nil {
			t.Fatalf("seed %d op %d: %v", seed, i, err)
		}
	}
	if maxMsgs < 2*blockSize {
		t.Fatalf("store peaked at %d messages; the test must span several ring blocks", maxMsgs)
	}
	storetest.CheckConsistent(t, s)
}

// TestCapacityShrinks checks that a big purge gives memory back.
func TestCapacityShrinks(t *testing.T) {
	s := mustNew(t, store.Limits{})
	for i := 0; i < 10000; i++ {
		if _, _, err := s.Append("cap.a", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Compact(9990); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if n := len(s.ents.blocks); n > 2 {
		t.Fatalf("ring holds %d blocks after compacting to 11 messages", n)
	}
	if c := cap(s.subjects["cap.a"].seqs); c > 1000 {
		t.Fatalf("subject index capacity %d after compacting to 11 messages", c)
	}
}
