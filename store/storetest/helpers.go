package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// ReadAll returns every message of s in sequence order, read with LoadNext.
// It fails the test on any error other than the final store.ErrEOF, and if
// LoadNext ever goes backwards.
func ReadAll(t testing.TB, s store.StreamStore) []store.Msg {
	t.Helper()
	var out []store.Msg
	limit := s.State().LastSeq + 1
	for next := uint64(0); ; {
		var m store.Msg
		err := s.LoadNext("", next, &m)
		if errors.Is(err, store.ErrEOF) {
			return out
		}
		if err != nil {
			t.Fatalf("LoadNext(\"\", %d): %v", next, err)
		}
		if m.Seq < next || m.Seq > limit || (len(out) > 0 && m.Seq <= out[len(out)-1].Seq) {
			t.Fatalf("LoadNext(\"\", %d) returned seq %d after %d (LastSeq %d)", next, m.Seq, len(out), limit-1)
		}
		out = append(out, m)
		next = m.Seq + 1
	}
}

// CheckConsistent verifies that everything s reports about itself agrees
// with the messages LoadNext returns: State and StateWithDeleted counters,
// first and last times, the Deleted list, SubjectsState, NumPending from the
// start, LoadLast and Load of every held and every deleted sequence.
func CheckConsistent(t testing.TB, s store.StreamStore) {
	t.Helper()
	msgs := ReadAll(t, s)
	st := s.StateWithDeleted()
	plain := s.State()
	if len(plain.Deleted) != 0 {
		t.Fatalf("State filled Deleted (%d entries)", len(plain.Deleted))
	}
	plain.Deleted = st.Deleted
	wantCounters(t, plain, st)

	var bytes uint64
	size := store.SizeFunc(s)
	subjects := make(map[string]store.SubjectState)
	for i := range msgs {
		m := &msgs[i]
		bytes += size(m.Subject, m.Header, m.Data)
		ss := subjects[m.Subject]
		if ss.Msgs == 0 {
			ss.First = m.Seq
		}
		ss.Msgs++
		ss.Last = m.Seq
		subjects[m.Subject] = ss
		if i > 0 && m.Time < msgs[i-1].Time {
			t.Fatalf("seq %d has time %d before seq %d's %d", m.Seq, m.Time, msgs[i-1].Seq, msgs[i-1].Time)
		}
	}
	if st.Msgs != uint64(len(msgs)) || st.Bytes != bytes || st.NumSubjects != len(subjects) {
		t.Fatalf("state %s, but LoadNext finds %d msgs, %d bytes, %d subjects",
			counters(st), len(msgs), bytes, len(subjects))
	}
	if len(msgs) == 0 {
		if !(st.FirstSeq == st.LastSeq+1 || (st.FirstSeq == 0 && st.LastSeq == 0)) {
			t.Fatalf("empty store: FirstSeq %d LastSeq %d, want FirstSeq = LastSeq+1", st.FirstSeq, st.LastSeq)
		}
		if st.NumDeleted != 0 || len(st.Deleted) != 0 || !st.FirstTime.IsZero() {
			t.Fatalf("empty store: NumDeleted %d Deleted %v FirstTime %v", st.NumDeleted, st.Deleted, st.FirstTime)
		}
	} else {
		first, last := &msgs[0], &msgs[len(msgs)-1]
		if st.FirstSeq != first.Seq || st.LastSeq < last.Seq {
			t.Fatalf("state FirstSeq %d LastSeq %d, messages span %d..%d", st.FirstSeq, st.LastSeq, first.Seq, last.Seq)
		}
		if st.FirstTime.UnixNano() != first.Time {
			t.Fatalf("FirstTime %v, first message's time %v", st.FirstTime, time.Unix(0, first.Time))
		}
		if st.LastTime.UnixNano() < last.Time || (last.Seq == st.LastSeq && st.LastTime.UnixNano() != last.Time) {
			t.Fatalf("LastTime %v, last message (seq %d of %d) has %v", st.LastTime, last.Seq, st.LastSeq, time.Unix(0, last.Time))
		}
		if want := int(st.LastSeq - st.FirstSeq + 1 - st.Msgs); st.NumDeleted != want {
			t.Fatalf("NumDeleted %d, want %d (%s)", st.NumDeleted, want, counters(st))
		}
		var wantDel []uint64
		next := 0
		for seq := st.FirstSeq; seq <= st.LastSeq; seq++ {
			if next < len(msgs) && msgs[next].Seq == seq {
				next++
				continue
			}
			wantDel = append(wantDel, seq)
		}
		if !equalSeqs(st.Deleted, wantDel) {
			t.Fatalf("Deleted %v, want %v", st.Deleted, wantDel)
		}
	}
	for _, f := range []string{"", ">"} {
		if got := s.SubjectsState(f); !maps.Equal(got, subjects) {
			t.Fatalf("SubjectsState(%q) = %v, want %v", f, got, subjects)
		}
	}
	if got := s.NumPending(0, "", false); got != st.Msgs {
		t.Fatalf("NumPending(0, \"\", false) = %d, want %d", got, st.Msgs)
	}
	if got := s.NumPending(0, ">", true); got != uint64(len(subjects)) {
		t.Fatalf("NumPending(0, \">\", true) = %d, want %d", got, len(subjects))
	}
	var m store.Msg
	err := s.LoadLast("", &m)
	switch {
	case len(msgs) == 0 && !errors.Is(err, store.ErrNotFound):
		t.Fatalf("LoadLast on empty store: %v, want ErrNotFound", err)
	case len(msgs) > 0 && err != nil:
		t.Fatalf("LoadLast: %v", err)
	case len(msgs) > 0 && !EqualMsg(&m, &msgs[len(msgs)-1]):
		t.Fatalf("LoadLast = %s, want %s", FormatMsg(&m), FormatMsg(&msgs[len(msgs)-1]))
	}
	for i := range msgs {
		if err := s.Load(msgs[i].Seq, &m); err != nil || !EqualMsg(&m, &msgs[i]) {
			t.Fatalf("Load(%d) = %s, %v; LoadNext gave %s", msgs[i].Seq, FormatMsg(&m), err, FormatMsg(&msgs[i]))
		}
	}
	for i, seq := range st.Deleted {
		if i == 1000 {
			break
		}
		if err := s.Load(seq, &m); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Load(%d) of a deleted sequence: %v, want ErrNotFound", seq, err)
		}
	}
}

// AssertSameContents fails unless got and want hold the same messages
// (sequence, time, subject, header, data) and report the same
// StateWithDeleted, times included.
func AssertSameContents(t testing.TB, got, want store.StreamStore) {
	t.Helper()
	compareSnapshots(t, takeSnapshot(t, got), takeSnapshot(t, want))
}

// snapshot is everything a store reports, for comparison across a reopen.
type snapshot struct {
	state    store.State
	msgs     []store.Msg
	subjects map[string]store.SubjectState
}

func takeSnapshot(t testing.TB, s store.StreamStore) snapshot {
	t.Helper()
	return snapshot{state: s.StateWithDeleted(), msgs: ReadAll(t, s), subjects: s.SubjectsState("")}
}

func compareSnapshots(t testing.TB, got, want snapshot) {
	t.Helper()
	g, w := got.state, want.state
	wantCounters(t, g, w)
	if !g.FirstTime.Equal(w.FirstTime) || !g.LastTime.Equal(w.LastTime) {
		t.Fatalf("times: got first %v last %v, want first %v last %v", g.FirstTime, g.LastTime, w.FirstTime, w.LastTime)
	}
	if !equalSeqs(g.Deleted, w.Deleted) {
		t.Fatalf("Deleted: got %v, want %v", g.Deleted, w.Deleted)
	}
	if (g.Lost == nil) != (w.Lost == nil) {
		t.Fatalf("Lost: got %+v, want %+v", g.Lost, w.Lost)
	}
	if len(got.msgs) != len(want.msgs) {
		t.Fatalf("got %d messages, want %d", len(got.msgs), len(want.msgs))
	}
	for i := range got.msgs {
		if !EqualMsg(&got.msgs[i], &want.msgs[i]) {
			t.Fatalf("message %d: got %s, want %s", i, FormatMsg(&got.msgs[i]), FormatMsg(&want.msgs[i]))
		}
	}
	if !maps.Equal(got.subjects, want.subjects) {
		t.Fatalf("SubjectsState: got %v, want %v", got.subjects, want.subjects)
	}
}

// EqualMsg reports whether two messages are identical. A nil and an empty
// header (or payload) are equal.
func EqualMsg(a, b *store.Msg) bool {
	return a.Seq == b.Seq && a.Time == b.Time && a.Subject == b.Subject &&
		bytes.Equal(a.Header, b.Header) && bytes.Equal(a.Data, b.Data)
}

// equalContent is EqualMsg without the time, for comparing two stores that
// stamped the same appends at different moments.
func equalContent(a, b *store.Msg) bool {
	return a.Seq == b.Seq && a.Subject == b.Subject &&
		bytes.Equal(a.Header, b.Header) && bytes.Equal(a.Data, b.Data)
}

// FormatMsg renders a message for failure output.
func FormatMsg(m *store.Msg) string {
	d := m.Data
	if len(d) > 32 {
		d = d[:32]
	}
	return fmt.Sprintf("{seq %d time %d subj %q hdr %dB data %dB %q}", m.Seq, m.Time, m.Subject, len(m.Header), len(m.Data), d)
}

// matchFilter is the suite's own reading of a filter: "" and ">" match
// everything, otherwise subject.Match.
func matchFilter(filter, subj string) bool {
	return filter == "" || filter == ">" || subject.Match(filter, subj)
}

// The oracles below answer queries from a ReadAll result by brute force.

func oracleNext(msgs []store.Msg, filter string, start uint64) (uint64, bool) {
	for i := range msgs {
		if msgs[i].Seq >= start && matchFilter(filter, msgs[i].Subject) {
			return msgs[i].Seq, true
		}
	}
	return 0, false
}

func oraclePrev(msgs []store.Msg, filter string, seq uint64) (uint64, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Seq <= seq && matchFilter(filter, msgs[i].Subject) {
			return msgs[i].Seq, true
		}
	}
	return 0, false
}

func oraclePending(msgs []store.Msg, filter string, start uint64, lastPerSubject bool) uint64 {
	var n uint64
	last := make(map[string]uint64)
	for i := range msgs {
		if !matchFilter(filter, msgs[i].Subject) {
			continue
		}
		last[msgs[i].Subject] = msgs[i].Seq
		if msgs[i].Seq >= start {
			n++
		}
	}
	if !lastPerSubject {
		return n
	}
	n = 0
	for _, seq := range last {
		if seq >= start {
			n++
		}
	}
	return n
}

func oracleSubjects(msgs []store.Msg, filter string) map[string]store.SubjectState {
	out := make(map[string]store.SubjectState)
	for i := range msgs {
		if !matchFilter(filter, msgs[i].Subject) {
			continue
		}
		ss := out[msgs[i].Subject]
		if ss.Msgs == 0 {
			ss.First = msgs[i].Seq
		}
		ss.Msgs++
		ss.Last = msgs[i].Seq
		out[msgs[i].Subject] = ss
	}
	return out
}

func oracleSeqForTime(msgs []store.Msg, lastSeq uint64, tn int64) uint64 {
	for i := range msgs {
		if msgs[i].Time >= tn {
			return msgs[i].Seq
		}
	}
	return lastSeq + 1
}

// checkQueries compares LoadNext, LoadPrev, LoadLast, NumPending and
// SubjectsState with the oracles for every filter and every start in
// starts.
func checkQueries(t testing.TB, s store.StreamStore, filters []string, starts []uint64) {
	t.Helper()
	msgs := ReadAll(t, s)
	var m store.Msg
	for _, f := range filters {
		for _, start := range starts {
			want, ok := oracleNext(msgs, f, start)
			err := s.LoadNext(f, start, &m)
			checkLoad(t, fmt.Sprintf("LoadNext(%q, %d)", f, start), &m, err, want, ok, store.ErrEOF)
			want, ok = oraclePrev(msgs, f, start)
			err = s.LoadPrev(f, start, &m)
			checkLoad(t, fmt.Sprintf("LoadPrev(%q, %d)", f, start), &m, err, want, ok, store.ErrEOF)
			for _, lps := range []bool{false, true} {
				if got, want := s.NumPending(start, f, lps), oraclePending(msgs, f, start, lps); got != want {
					t.Fatalf("NumPending(%d, %q, %v) = %d, want %d", start, f, lps, got, want)
				}
			}
		}
		want, ok := oraclePrev(msgs, f, ^uint64(0))
		err := s.LoadLast(f, &m)
		checkLoad(t, fmt.Sprintf("LoadLast(%q)", f), &m, err, want, ok, store.ErrNotFound)
		if got, want := s.SubjectsState(f), oracleSubjects(msgs, f); !maps.Equal(got, want) {
			t.Fatalf("SubjectsState(%q) = %v, want %v", f, got, want)
		}
	}
}

// checkLoad checks the outcome of one Load-family call against an oracle.
func checkLoad(t testing.TB, what string, m *store.Msg, err error, want uint64, ok bool, none error) {
	t.Helper()
	switch {
	case !ok && !errors.Is(err, none):
		t.Fatalf("%s: got seq %d, err %v; want %v", what, m.Seq, err, none)
	case ok && err != nil:
		t.Fatalf("%s: %v, want seq %d", what, err, want)
	case ok && m.Seq != want:
		t.Fatalf("%s: got seq %d, want %d", what, m.Seq, want)
	}
}

// allStarts is every start sequence from 0 to LastSeq+2.
func allStarts(s store.StreamStore) []uint64 {
	return seqRange(0, s.State().LastSeq+2)
}

// sortedKeys returns a map's keys in order, for stable failure output.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
