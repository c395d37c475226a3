package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// openFunc opens a fresh, empty store enforcing limits.
type openFunc = func(t *testing.T, limits store.Limits) store.StreamStore

// reopenFunc opens the store kept in dir, creating it if dir holds none.
type reopenFunc = func(t *testing.T, dir string, limits store.Limits) store.StreamStore

// suiteTest is one named group of Run's tests.
type suiteTest struct {
	name string
	fn   func(t *testing.T, open openFunc)
}

// Run runs the conformance suite against the stores open returns. open must
// return a new, empty store enforcing limits each time it is called; it may
// call t.Fatal if it cannot.
func Run(t *testing.T, open func(t *testing.T, limits store.Limits) store.StreamStore) {
	groups := [][]suiteTest{
		appendTests, loadTests, removeTests, stateTests, limitTests,
		ageTests, asyncTests, concurrencyTests, readerTests, lifecycleTests, randomTests,
	}
	for _, g := range groups {
		for _, st := range g {
			t.Run(st.name, func(t *testing.T) { st.fn(t, open) })
		}
	}
}

// persistentTest is one named test of RunPersistent.
type persistentTest struct {
	name string
	fn   func(t *testing.T, open reopenFunc)
}

// RunPersistent runs the close-and-reopen tests against the stores open
// returns. open(t, dir, limits) must open the store kept in dir with limits,
// creating an empty one if dir holds none; each test passes its own
// t.TempDir(). The suite closes a store before it reopens its directory.
func RunPersistent(t *testing.T, open func(t *testing.T, dir string, limits store.Limits) store.StreamStore) {
	for _, pt := range persistentTests {
		t.Run(pt.name, func(t *testing.T) { pt.fn(t, open) })
	}
}

// harness wraps a store under test with fatal-on-error helpers.
type harness struct {
	t *testing.T
	s store.StreamStore
}

// newHarness opens a store and registers its Close.
func newHarness(t *testing.T, open openFunc, l store.Limits) *harness {
	t.Helper()
	s := open(t, l)
	if s == nil {
		t.Fatal("open returned a nil store")
	}
	t.Cleanup(func() { closeQuietly(t, s) })
	return &harness{t: t, s: s}
}

// closeQuietly closes s, accepting ErrClosed from a store closed earlier.
func closeQuietly(t testing.TB, s store.StreamStore) {
	t.Helper()
	if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
		t.Errorf("Close: %v", err)
	}
}

// payload is the data the harness stores for the i-th fill message.
func payload(subj string, i int) []byte { return fmt.Appendf(nil, "%s#%d", subj, i) }

// append stores one message and returns its sequence.
func (h *harness) append(subj string, hdr, data []byte) uint64 {
	h.t.Helper()
	seq, _, err := h.s.Append(subj, hdr, data)
	if err != nil {
		h.t.Fatalf("Append(%q): %v", subj, err)
	}
	return seq
}

// fill appends one message per subject, in order, with data payload(subj, i).
func (h *harness) fill(subjects ...string) []uint64 {
	h.t.Helper()
	seqs := make([]uint64, len(subjects))
	for i, subj := range subjects {
		seqs[i] = h.append(subj, nil, payload(subj, i))
	}
	return seqs
}

// fillN appends n messages to subj.
func (h *harness) fillN(subj string, n int) []uint64 {
	h.t.Helper()
	subjects := make([]string, n)
	for i := range subjects {
		subjects[i] = subj
	}
	return h.fill(subjects...)
}

// load reads seq, failing the test if it cannot.
func (h *harness) load(seq uint64) store.Msg {
	h.t.Helper()
	var m store.Msg
	if err := h.s.Load(seq, &m); err != nil {
		h.t.Fatalf("Load(%d): %v", seq, err)
	}
	return m
}

// del deletes seq, failing the test if it cannot.
func (h *harness) del(seq uint64) {
	h.t.Helper()
	if err := h.s.Delete(seq, false); err != nil {
		h.t.Fatalf("Delete(%d): %v", seq, err)
	}
}

// check runs CheckConsistent.
func (h *harness) check() {
	h.t.Helper()
	CheckConsistent(h.t, h.s)
}

// seqs returns the sequences the store holds, in order.
func (h *harness) seqs() []uint64 {
	h.t.Helper()
	return seqsOf(ReadAll(h.t, h.s))
}

// wantSeqs fails unless the store holds exactly want.
func (h *harness) wantSeqs(want ...uint64) {
	h.t.Helper()
	if got := h.seqs(); !equalSeqs(got, want) {
		h.t.Fatalf("store holds %v, want %v", got, want)
	}
}

// wantState compares the counters of State with want; times, Deleted and
// Lost are not compared.
func (h *harness) wantState(want store.State) {
	h.t.Helper()
	wantCounters(h.t, h.s.State(), want)
}

func wantCounters(t testing.TB, got, want store.State) {
	t.Helper()
	if got.Msgs != want.Msgs || got.Bytes != want.Bytes || got.FirstSeq != want.FirstSeq ||
		got.LastSeq != want.LastSeq || got.NumSubjects != want.NumSubjects || got.NumDeleted != want.NumDeleted {
		t.Fatalf("state: got %s\nwant %s", counters(got), counters(want))
	}
}

// counters formats the comparable counters of a State.
func counters(s store.State) string {
	return fmt.Sprintf("{Msgs:%d Bytes:%d FirstSeq:%d LastSeq:%d NumSubjects:%d NumDeleted:%d}",
		s.Msgs, s.Bytes, s.FirstSeq, s.LastSeq, s.NumSubjects, s.NumDeleted)
}

// wantErr fails unless err matches target (nil target: err must be nil).
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	switch {
	case target == nil && err != nil:
		t.Fatalf("%s: unexpected error %v", what, err)
	case target != nil && !errors.Is(err, target):
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func seqsOf(msgs []store.Msg) []uint64 {
	out := make([]uint64, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Seq
	}
	return out
}

func equalSeqs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seqRange returns lo..hi inclusive.
func seqRange(lo, hi uint64) []uint64 {
	var out []uint64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

// size is the accounted size, in the store under test, of a message with
// these parts.
func (h *harness) size(subj string, hdrLen, dataLen int) uint64 {
	return store.SizeFunc(h.s)(subj, make([]byte, hdrLen), make([]byte, dataLen))
}
