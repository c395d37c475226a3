package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jetwal/jetwal/store"
)

var concurrencyTests = []suiteTest{
	{"Concurrent/AppendersReadersDeleter", testConcurrent},
}

// testConcurrent runs 8 goroutines at once: four appenders (one of them
// through AppendAsync), three readers that check what they see, and one
// deleter. It is meant for -race; the assertions check visibility and
// ordering rules, not timing.
func testConcurrent(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	const writers, per = 4, 250
	var (
		wg          sync.WaitGroup
		writersDone atomic.Bool
		deleted     sync.Map // seq -> true
		mu          sync.Mutex
		written     = make(map[uint64]string) // seq -> data
	)
	record := func(seq uint64, data string) {
		mu.Lock()
		written[seq] = data
		mu.Unlock()
	}
	var writerWG sync.WaitGroup
	for w := 0; w < writers; w++ {
		writerWG.Add(1)
		go func() {
			defer writerWG.Done()
			subj := fmt.Sprintf("conc.w%d", w)
			var prev uint64
			for i := 0; i < per; i++ {
				data := fmt.Sprintf("%s-%d", subj, i)
				if w == 0 {
					got := make(chan uint64, 1)
					err := h.s.AppendAsync(subj, nil, []byte(data), func(seq uint64, _ int64, err error) {
						if err != nil {
							t.Errorf("done: %v", err)
						}
						got <- seq
					})
					if err != nil {
						t.Errorf("AppendAsync: %v", err)
						return
					}
					seq := waitDone(t, got)
					if seq <= prev {
						t.Errorf("writer %d: seq %d after %d", w, seq, prev)
					}
					prev = seq
					record(seq, data)
					continue
				}
				seq, _, err := h.s.Append(subj, nil, []byte(data))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				if seq <= prev {
					t.Errorf("writer %d: seq %d after %d", w, seq, prev)
				}
				prev = seq
				record(seq, data)
			}
		}()
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 99))
			var m store.Msg
			var lastSeen uint64
			for !writersDone.Load() {
				st := h.s.State()
				if st.LastSeq < lastSeen {
					t.Errorf("reader %d: LastSeq went back from %d to %d", r, lastSeen, st.LastSeq)
					return
				}
				lastSeen = st.LastSeq
				if st.Msgs > st.LastSeq {
					t.Errorf("reader %d: %d msgs but LastSeq %d", r, st.Msgs, st.LastSeq)
					return
				}
				if st.LastSeq == 0 {
					runtime.Gosched()
					continue
				}
				// Every sequence up to the LastSeq a reader saw is either
				// loadable with the data its writer stored, or deleted.
				seq := 1 + rng.Uint64N(st.LastSeq)
				err := h.s.Load(seq, &m)
				if _, del := deleted.Load(seq); err != nil && !(del && errors.Is(err, store.ErrNotFound)) {
					t.Errorf("reader %d: Load(%d) with LastSeq %d: %v", r, seq, st.LastSeq, err)
					return
				}
				if err == nil && !strings.HasPrefix(m.Subject, "conc.w") {
					t.Errorf("reader %d: Load(%d) subject %q", r, seq, m.Subject)
					return
				}
				subj := fmt.Sprintf("conc.w%d", rng.IntN(writers))
				switch r {
				case 0:
					if err := h.s.LoadNext(subj, seq, &m); err == nil && (m.Seq < seq || m.Subject != subj) {
						t.Errorf("LoadNext(%q, %d) gave seq %d subject %q", subj, seq, m.Seq, m.Subject)
						return
					}
				case 1:
					if err := h.s.LoadLast("conc.*", &m); err != nil && !errors.Is(err, store.ErrNotFound) {
						t.Errorf("LoadLast: %v", err)
						return
					}
					_ = h.s.NumPending(seq, subj, false)
					_ = h.s.SubjectsState("conc.>")
				default:
					_ = h.s.StateWithDeleted()
					_ = h.s.SeqForTime(timeFar)
					if err := h.s.LoadPrev(">", seq, &m); err != nil && !errors.Is(err, store.ErrEOF) {
						t.Errorf("LoadPrev: %v", err)
						return
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m store.Msg
		next := uint64(0)
		for !writersDone.Load() {
			// Delete every other message of writer 1 as it appears.
			if err := h.s.LoadNext("conc.w1", next, &m); err != nil {
				runtime.Gosched()
				continue
			}
			next = m.Seq + 1
			if m.Seq%2 == 0 {
				deleted.Store(m.Seq, true)
				if err := h.s.Delete(m.Seq, false); err != nil {
					t.Errorf("Delete(%d): %v", m.Seq, err)
					return
				}
			}
		}
	}()
	writerWG.Wait()
	writersDone.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}

	var nDeleted int
	deleted.Range(func(any, any) bool { nDeleted++; return true })
	st := h.s.State()
	if st.LastSeq != writers*per || st.Msgs != uint64(writers*per-nDeleted) {
		t.Fatalf("final state %s, want LastSeq %d and %d msgs", counters(st), writers*per, writers*per-nDeleted)
	}
	for seq, data := range written {
		var m store.Msg
		err := h.s.Load(seq, &m)
		if _, del := deleted.Load(seq); del {
			wantErr(t, fmt.Sprintf("Load(%d) of deleted", seq), err, store.ErrNotFound)
			continue
		}
		if err != nil || string(m.Data) != data {
			t.Fatalf("Load(%d) = %s, %v; want data %q", seq, FormatMsg(&m), err, data)
		}
	}
	h.check()
}
