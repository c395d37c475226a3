package storetest

import (
	"maps"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var stateTests = []suiteTest{
	{"State/Fresh", testStateFresh},
	{"State/AfterOps", testStateAfterOps},
	{"State/WithDeleted", testStateWithDeleted},
	{"SubjectsState", testSubjectsState},
	{"NumPending", testNumPending},
	{"SeqForTime", testSeqForTime},
}

// timeFar is a time after every message any test stores.
var timeFar = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

func testStateFresh(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	for _, st := range []store.State{h.s.State(), h.s.StateWithDeleted()} {
		if st.Msgs != 0 || st.Bytes != 0 || st.FirstSeq != 0 || st.LastSeq != 0 || st.NumSubjects != 0 ||
			st.NumDeleted != 0 || len(st.Deleted) != 0 || !st.FirstTime.IsZero() || !st.LastTime.IsZero() || st.Lost != nil {
			t.Fatalf("fresh store state %+v, want zero", st)
		}
	}
	if ss := h.s.SubjectsState(""); len(ss) != 0 {
		t.Fatalf("SubjectsState on fresh store: %v", ss)
	}
	if n := h.s.NumPending(0, "", false); n != 0 {
		t.Fatalf("NumPending on fresh store: %d", n)
	}
	if seq := h.s.SeqForTime(time.Now()); seq != 1 {
		t.Fatalf("SeqForTime on fresh store: %d, want 1", seq)
	}
	var m store.Msg
	wantErr(t, "LoadNext", h.s.LoadNext("", 0, &m), store.ErrEOF)
	wantErr(t, "LoadLast", h.s.LoadLast("", &m), store.ErrNotFound)
	wantErr(t, "LoadPrev", h.s.LoadPrev("", 5, &m), store.ErrEOF)
	if err := h.s.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if err := h.s.Sync(); err != nil {
		t.Fatal(err)
	}
	h.wantState(store.State{})
	h.check()
}

// testStateAfterOps checks every counter and both times after each kind of
// operation.
func testStateAfterOps(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	hdr := []byte("NATS/1.0\r\nK: v\r\n\r\n")
	h.append("s.a", hdr, []byte("one"))
	h.append("s.b", nil, []byte("two"))
	h.append("s.a", nil, nil)
	h.append("s.c", hdr, []byte("four"))
	b := h.size
	all := b("s.a", len(hdr), 3) + b("s.b", 0, 3) + b("s.a", 0, 0) + b("s.c", len(hdr), 4)
	h.wantState(store.State{Msgs: 4, Bytes: all, FirstSeq: 1, LastSeq: 4, NumSubjects: 3})
	h.check()

	steps := []struct {
		name string
		do   func() error
		want store.State
	}{
		{"delete-first", func() error { return h.s.Delete(1, false) },
			store.State{Msgs: 3, Bytes: all - b("s.a", len(hdr), 3), FirstSeq: 2, LastSeq: 4, NumSubjects: 3}},
		{"delete-interior", func() error { return h.s.Delete(3, false) },
			store.State{Msgs: 2, Bytes: b("s.b", 0, 3) + b("s.c", len(hdr), 4), FirstSeq: 2, LastSeq: 4, NumSubjects: 2, NumDeleted: 1}},
		{"append", func() error { _, _, err := h.s.Append("s.d", nil, []byte("5")); return err },
			store.State{Msgs: 3, Bytes: b("s.b", 0, 3) + b("s.c", len(hdr), 4) + b("s.d", 0, 1), FirstSeq: 2, LastSeq: 5, NumSubjects: 3, NumDeleted: 1}},
		{"delete-last", func() error { return h.s.Delete(5, false) },
			store.State{Msgs: 2, Bytes: b("s.b", 0, 3) + b("s.c", len(hdr), 4), FirstSeq: 2, LastSeq: 5, NumSubjects: 2, NumDeleted: 2}},
		{"purge-subject", func() error { _, err := h.s.Purge("s.b", 0, 0); return err },
			store.State{Msgs: 1, Bytes: b("s.c", len(hdr), 4), FirstSeq: 4, LastSeq: 5, NumSubjects: 1, NumDeleted: 1}},
		{"purge-all", func() error { _, err := h.s.Purge("", 0, 0); return err },
			store.State{FirstSeq: 6, LastSeq: 5}},
		{"append-after-purge", func() error { _, _, err := h.s.Append("s.e", nil, nil); return err },
			store.State{Msgs: 1, Bytes: b("s.e", 0, 0), FirstSeq: 6, LastSeq: 6, NumSubjects: 1}},
		{"compact-past", func() error { _, err := h.s.Compact(9); return err },
			store.State{FirstSeq: 9, LastSeq: 8}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := h.s.State()
		wantCounters(t, got, st.want)
		h.check()
	}
}

func testStateWithDeleted(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	h.del(3)
	h.del(4)
	h.del(8)
	h.del(10)
	st := h.s.StateWithDeleted()
	if want := []uint64{3, 4, 8, 10}; !equalSeqs(st.Deleted, want) || st.NumDeleted != 4 {
		t.Fatalf("Deleted %v NumDeleted %d, want %v", st.Deleted, st.NumDeleted, want)
	}
	if err := h.s.Truncate(6); err != nil {
		t.Fatal(err)
	}
	st = h.s.StateWithDeleted()
	if want := []uint64{3, 4, 7, 8, 9, 10}; !equalSeqs(st.Deleted, want) {
		t.Fatalf("after Truncate(6): Deleted %v, want %v", st.Deleted, want)
	}
	h.del(1)
	h.del(2)
	st = h.s.StateWithDeleted()
	if want := []uint64{7, 8, 9, 10}; !equalSeqs(st.Deleted, want) || st.FirstSeq != 5 {
		t.Fatalf("after deleting the front: FirstSeq %d Deleted %v, want 5 and %v", st.FirstSeq, st.Deleted, want)
	}
	if plain := h.s.State(); plain.Deleted != nil || plain.NumDeleted != 4 {
		t.Fatalf("State: Deleted %v NumDeleted %d", plain.Deleted, plain.NumDeleted)
	}
	h.check()
}

func testSubjectsState(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	want := map[string]store.SubjectState{
		"a.x": {Msgs: 3, First: 1, Last: 7}, "a.y": {Msgs: 2, First: 2, Last: 10},
		"b.x": {Msgs: 2, First: 3, Last: 9}, "b.y": {Msgs: 1, First: 6, Last: 6},
		"c.d.e": {Msgs: 1, First: 5, Last: 5}, "c.d.f": {Msgs: 1, First: 8, Last: 8},
	}
	pick := func(names ...string) map[string]store.SubjectState {
		out := make(map[string]store.SubjectState)
		for _, n := range names {
			out[n] = want[n]
		}
		return out
	}
	cases := []struct {
		filter string
		want   map[string]store.SubjectState
	}{
		{"", want}, {">", want}, {"a.*", pick("a.x", "a.y")}, {"a.x", pick("a.x")},
		{"*.x", pick("a.x", "b.x")}, {"c.>", pick("c.d.e", "c.d.f")}, {"c.*", pick()},
		{"*.*.f", pick("c.d.f")}, {"nomatch", pick()}, {"a..", pick()}, {"*.>", want},
	}
	for _, c := range cases {
		if got := h.s.SubjectsState(c.filter); !maps.Equal(got, c.want) {
			t.Fatalf("SubjectsState(%q) = %v, want %v (keys %v)", c.filter, got, c.want, sortedKeys(c.want))
		}
	}
	h.del(1)
	h.del(10)
	if got := h.s.SubjectsState("a.*"); !maps.Equal(got, map[string]store.SubjectState{
		"a.x": {Msgs: 2, First: 4, Last: 7}, "a.y": {Msgs: 1, First: 2, Last: 2},
	}) {
		t.Fatalf("SubjectsState(a.*) after deletes = %v", got)
	}
	checkQueries(t, h.s, fixtureFilters, []uint64{0})
}

func testNumPending(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	cases := []struct {
		start  uint64
		filter string
		lps    bool
		want   uint64
	}{
		{0, "", false, 10}, {1, "", false, 10}, {5, "", false, 6}, {10, "", false, 1}, {11, "", false, 0},
		{0, "", true, 6}, {8, "", true, 3}, {11, "", true, 0},
		{0, "a.x", false, 3}, {5, "a.x", false, 1}, {0, "a.x", true, 1}, {8, "a.x", true, 0},
		{0, "a.*", false, 5}, {3, "a.*", true, 2}, {8, "a.*", true, 1},
		{0, "*.x", false, 5}, {0, "c.>", true, 2}, {6, "c.>", false, 1}, {0, "zzz", false, 0},
	}
	for _, c := range cases {
		if got := h.s.NumPending(c.start, c.filter, c.lps); got != c.want {
			t.Fatalf("NumPending(%d, %q, %v) = %d, want %d", c.start, c.filter, c.lps, got, c.want)
		}
	}
	h.del(7)
	h.del(2)
	checkQueries(t, h.s, fixtureFilters, allStarts(h.s))
}

func testSeqForTime(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	if seq := h.s.SeqForTime(time.Time{}); seq != 1 {
		t.Fatalf("SeqForTime(zero) on fresh store = %d, want 1", seq)
	}
	for i := 0; i < 40; i++ {
		h.append("tm", nil, []byte{byte(i)})
		if i%8 == 0 {
			// Let the clock move so that times differ.
			for start := time.Now(); time.Since(start) < time.Microsecond; {
			}
		}
	}
	check := func(stage string) {
		t.Helper()
		msgs := ReadAll(t, h.s)
		st := h.s.State()
		probes := []time.Time{{}, time.Unix(0, 0), timeFar, time.Now().Add(time.Hour)}
		for i := range msgs {
			tm := time.Unix(0, msgs[i].Time)
			probes = append(probes, tm, tm.Add(-1), tm.Add(1))
		}
		for _, p := range probes {
			want := st.LastSeq + 1
			switch {
			case p.IsZero() || p.Before(time.Unix(0, 1)):
				if len(msgs) > 0 {
					want = msgs[0].Seq
				}
			default:
				want = oracleSeqForTime(msgs, st.LastSeq, p.UnixNano())
			}
			if got := h.s.SeqForTime(p); got != want {
				t.Fatalf("%s: SeqForTime(%v) = %d, want %d", stage, p, got, want)
			}
		}
	}
	check("full")
	for _, d := range []uint64{1, 2, 9, 10, 11, 20, 40} {
		h.del(d)
	}
	check("after deletes")
	if _, err := h.s.Purge("", 0, 0); err != nil {
		t.Fatal(err)
	}
	if seq := h.s.SeqForTime(time.Time{}); seq != 41 {
		t.Fatalf("SeqForTime on purged store = %d, want 41", seq)
	}
	if seq := h.s.SeqForTime(time.Now()); seq != 41 {
		t.Fatalf("SeqForTime(now) on purged store = %d, want 41", seq)
	}
}
