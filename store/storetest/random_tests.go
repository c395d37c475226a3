package storetest

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var randomTests = []suiteTest{
	{"Random/AgainstModel", testRandomModel},
}

// seedEnv names the environment variable that replays one seed of the
// randomized test.
const seedEnv = "STORETEST_SEED"

func testRandomModel(t *testing.T, open openFunc) {
	seeds := []uint64{1, 2, 3, 4, uint64(time.Now().UnixNano())}
	if v := os.Getenv(seedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
		seeds = []uint64{seed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("replay: %s=%d go test -run '%s' ...", seedEnv, seed, t.Name())
				}
			})
			runRandom(t, open, nil, seed, 600)
		})
	}
}

// sentinels are the errors the randomized test compares by identity.
var sentinels = []error{
	store.ErrNotFound, store.ErrEOF, store.ErrClosed, store.ErrMaxMsgs, store.ErrMaxBytes,
	store.ErrMaxMsgsPerSubj, store.ErrMaxMsgSize, store.ErrInvalidSubject, store.ErrInvalidSequence,
}

// sameErr reports whether a and b are both nil or match the same sentinels.
func sameErr(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for _, s := range sentinels {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

var randomLimits = []store.Limits{
	{},
	{MaxMsgs: 150},
	{MaxMsgs: 40, Discard: store.DiscardNew},
	{MaxBytes: 3000},
	{MaxBytes: 2500, Discard: store.DiscardNew},
	{MaxMsgsPerSubject: 6, MaxMsgs: 200},
	{MaxMsgsPerSubject: 4, MaxMsgs: 60, Discard: store.DiscardNew},
	{MaxMsgsPerSubject: 3, MaxBytes: 4000, Discard: store.DiscardNew, DiscardNewPerSubject: true},
	{MaxMsgs: 80, MaxBytes: 4000, MaxMsgsPerSubject: 10, MaxMsgSize: 100},
	{MaxMsgSize: 40, MaxMsgs: 100, Discard: store.DiscardNew},
}

var (
	randomSubjects = []string{"r.a", "r.b", "r.c.x", "r.c.y", "q.1", "q.2", "q.3.z", "solo"}
	randomFilters  = []string{"", ">", "r.*", "r.>", "r.c.*", "*.c.*", "q.>", "*.1", "solo", "r.a", "none", "*", "q.*.z"}
)

// runRandom applies n random operations to a store under test and to the
// model, comparing every result and, after each change, the whole contents.
// With a non-nil reopen, some operations close the store under test and
// reopen it (reopen must return the reopened store), requiring identical
// contents, times included, across the reopen.
func runRandom(t *testing.T, open openFunc, reopen func(limits store.Limits) store.StreamStore, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	limits := randomLimits[rng.IntN(len(randomLimits))]
	got := newHarness(t, open, limits).s
	want := newModelSized(limits, store.SizeFunc(got))
	defer want.Close()

	var history []string
	fail := func(format string, args ...any) {
		t.Helper()
		start := max(0, len(history)-15)
		t.Fatalf("seed %d, op %d: %s\nlast operations:\n  %s", seed, len(history), fmt.Sprintf(format, args...),
			strings.Join(history[start:], "\n  "))
	}
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	seqNear := func() uint64 {
		st := want.State()
		lo := st.FirstSeq
		if lo > 0 {
			lo--
		}
		return lo + rng.Uint64N(st.LastSeq-lo+3)
	}
	for i := 0; i < n; i++ {
		mutated := true
		switch p := rng.IntN(100); {
		case p < 52:
			subj := randomSubjects[rng.IntN(len(randomSubjects))]
			switch rng.IntN(20) {
			case 0:
				subj = "bad..subject"
			case 1:
				subj = "r.*"
			}
			var hdr []byte
			if rng.IntN(3) == 0 {
				hdr = bytesOf(rng.IntN(30))
			}
			data := bytesOf(rng.IntN(90))
			async := rng.IntN(5) == 0
			history = append(history, fmt.Sprintf("append(%q, hdr %d, data %d, async %v)", subj, len(hdr), len(data), async))
			wseq, _, werr := want.Append(subj, hdr, data)
			var gseq uint64
			var gerr error
			if async {
				ch := make(chan uint64, 1)
				gerr = got.AppendAsync(subj, hdr, data, func(seq uint64, _ int64, err error) {
					if err != nil {
						t.Errorf("done(%d): %v", seq, err)
					}
					ch <- seq
				})
				if gerr == nil {
					gseq = waitDone(t, ch)
				}
			} else {
				gseq, _, gerr = got.Append(subj, hdr, data)
			}
			if !sameErr(gerr, werr) || gseq != wseq {
				fail("append: got seq %d err %v, want seq %d err %v", gseq, gerr, wseq, werr)
			}
		case p < 64:
			seq := seqNear()
			erase := rng.IntN(4) == 0
			history = append(history, fmt.Sprintf("delete(%d, %v)", seq, erase))
			if gerr, werr := got.Delete(seq, erase), want.Delete(seq, erase); !sameErr(gerr, werr) {
				fail("delete: got %v, want %v", gerr, werr)
			}
		case p < 70:
			filter := randomFilters[rng.IntN(len(randomFilters))]
			if rng.IntN(25) == 0 {
				filter = "a..b"
			}
			var upTo, keep uint64
			if rng.IntN(2) == 0 {
				upTo = seqNear()
			}
			if rng.IntN(2) == 0 {
				keep = rng.Uint64N(6)
			}
			history = append(history, fmt.Sprintf("purge(%q, %d, %d)", filter, upTo, keep))
			gn, gerr := got.Purge(filter, upTo, keep)
			wn, werr := want.Purge(filter, upTo, keep)
			if gn != wn || !sameErr(gerr, werr) {
				fail("purge: got %d %v, want %d %v", gn, gerr, wn, werr)
			}
		case p < 74:
			seq := seqNear()
			switch rng.IntN(10) {
			case 0:
				seq = 0
			case 1:
				seq += rng.Uint64N(30)
			}
			history = append(history, fmt.Sprintf("compact(%d)", seq))
			gn, gerr := got.Compact(seq)
			wn, werr := want.Compact(seq)
			if gn != wn || !sameErr(gerr, werr) {
				fail("compact: got %d %v, want %d %v", gn, gerr, wn, werr)
			}
		case p < 77:
			seq := seqNear()
			if rng.IntN(8) == 0 {
				seq = 0
			}
			history = append(history, fmt.Sprintf("truncate(%d)", seq))
			if gerr, werr := got.Truncate(seq), want.Truncate(seq); !sameErr(gerr, werr) {
				fail("truncate: got %v, want %v", gerr, werr)
			}
		case p < 81:
			l := randomLimits[rng.IntN(len(randomLimits))]
			history = append(history, fmt.Sprintf("updateLimits(%+v)", l))
			if gerr, werr := got.UpdateLimits(l), want.UpdateLimits(l); !sameErr(gerr, werr) {
				fail("update limits: got %v, want %v", gerr, werr)
			}
			limits = l
		case p < 84 && reopen != nil:
			history = append(history, "reopen")
			before := takeSnapshot(t, got)
			if err := got.Close(); err != nil {
				fail("close before reopen: %v", err)
			}
			got = reopen(limits)
			compareSnapshots(t, takeSnapshot(t, got), before)
		default:
			mutated = false
			filter := randomFilters[rng.IntN(len(randomFilters))]
			start := seqNear()
			history = append(history, fmt.Sprintf("query(%q, %d)", filter, start))
			compareQueries(fail, got, want, filter, start)
		}
		if mutated {
			compareContents(fail, got, want)
		}
		if i%50 == 0 || i == n-1 {
			CheckConsistent(t, got)
		}
	}
}

// compareContents compares two stores' counters, deleted lists, subjects
// and messages, ignoring times.
func compareContents(fail func(string, ...any), got, want store.StreamStore) {
	gs, ws := got.StateWithDeleted(), want.StateWithDeleted()
	if counters(gs) != counters(ws) || !equalSeqs(gs.Deleted, ws.Deleted) {
		fail("state: got %s deleted %v\nwant %s deleted %v", counters(gs), gs.Deleted, counters(ws), ws.Deleted)
	}
	if g, w := got.SubjectsState(""), want.SubjectsState(""); !maps.Equal(g, w) {
		fail("subjects: got %v, want %v", g, w)
	}
	var gm, wm store.Msg
	for next := uint64(0); ; {
		gerr := got.LoadNext("", next, &gm)
		werr := want.LoadNext("", next, &wm)
		if !sameErr(gerr, werr) {
			fail("LoadNext(\"\", %d): got %v, want %v", next, gerr, werr)
		}
		if werr != nil {
			return
		}
		if !equalContent(&gm, &wm) {
			fail("LoadNext(\"\", %d): got %s, want %s", next, FormatMsg(&gm), FormatMsg(&wm))
		}
		next = wm.Seq + 1
	}
}

// compareQueries compares the read-only methods for one filter and start.
func compareQueries(fail func(string, ...any), got, want store.StreamStore, filter string, start uint64) {
	var gm, wm store.Msg
	check := func(name string, gerr, werr error) {
		if !sameErr(gerr, werr) || (werr == nil && !equalContent(&gm, &wm)) {
			fail("%s(%q, %d): got %s %v, want %s %v", name, filter, start, FormatMsg(&gm), gerr, FormatMsg(&wm), werr)
		}
	}
	check("LoadNext", got.LoadNext(filter, start, &gm), want.LoadNext(filter, start, &wm))
	check("LoadPrev", got.LoadPrev(filter, start, &gm), want.LoadPrev(filter, start, &wm))
	check("LoadLast", got.LoadLast(filter, &gm), want.LoadLast(filter, &wm))
	check("Load", got.Load(start, &gm), want.Load(start, &wm))
	for _, lps := range []bool{false, true} {
		if g, w := got.NumPending(start, filter, lps), want.NumPending(start, filter, lps); g != w {
			fail("NumPending(%d, %q, %v): got %d, want %d", start, filter, lps, g, w)
		}
	}
	if g, w := got.SubjectsState(filter), want.SubjectsState(filter); !maps.Equal(g, w) {
		fail("SubjectsState(%q): got %v, want %v", filter, g, w)
	}
}
