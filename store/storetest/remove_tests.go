package storetest

import (
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
)

var removeTests = []suiteTest{
	{"Delete", testDelete},
	{"Delete/NotFound", testDeleteNotFound},
	{"Delete/SubjectIndex", testDeleteSubjectIndex},
	{"Purge", testPurge},
	{"Purge/Empty", testPurgeEmpty},
	{"Purge/InvalidFilter", testPurgeInvalidFilter},
	{"Compact", testCompact},
	{"Compact/Empty", testCompactEmpty},
	{"Truncate", testTruncate},
	{"Sequences/Monotonic", testSequencesMonotonic},
}

// wantAfter builds the expected counters of a store filled with
// h.fill(subjects...) of which only the sequences in held remain, lastSeq
// being its LastSeq.
func (h *harness) wantAfter(subjects []string, held []uint64, lastSeq uint64) store.State {
	st := store.State{LastSeq: lastSeq, FirstSeq: lastSeq + 1}
	names := make(map[string]bool)
	for i, seq := range held {
		subj := subjects[seq-1]
		st.Msgs++
		st.Bytes += h.size(subj, 0, len(payload(subj, int(seq-1))))
		names[subj] = true
		if i == 0 {
			st.FirstSeq = seq
		}
	}
	st.NumSubjects = len(names)
	if st.Msgs > 0 {
		st.NumDeleted = int(st.LastSeq - st.FirstSeq + 1 - st.Msgs)
	}
	return st
}

// without returns 1..n minus drop.
func without(n uint64, drop ...uint64) []uint64 {
	gone := make(map[uint64]bool)
	for _, d := range drop {
		gone[d] = true
	}
	var out []uint64
	for s := uint64(1); s <= n; s++ {
		if !gone[s] {
			out = append(out, s)
		}
	}
	return out
}

func testDelete(t *testing.T, open openFunc) {
	cases := []struct {
		name    string
		deletes []uint64
	}{
		{"interior", []uint64{5}},
		{"first", []uint64{1}},
		{"last", []uint64{10}},
		{"first-three", []uint64{1, 2, 3}},
		{"gap-then-first", []uint64{2, 3, 1}},
		{"last-two", []uint64{10, 9}},
		{"scattered", []uint64{2, 4, 6, 8}},
		{"all", seqRange(1, 10)},
		{"all-reverse", []uint64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{"whole-subject-a.x", []uint64{1, 4, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFixture(t, open)
			for _, seq := range c.deletes {
				h.del(seq)
				h.check()
			}
			held := without(10, c.deletes...)
			h.wantSeqs(held...)
			h.wantState(h.wantAfter(fixtureSubjects, held, 10))
			if seq := h.append("new", nil, nil); seq != 11 {
				t.Fatalf("append after deletes got seq %d, want 11", seq)
			}
		})
	}
}

func testDeleteNotFound(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	h.del(3)
	for _, seq := range []uint64{0, 3, 11, 1 << 50} {
		wantErr(t, fmt.Sprintf("Delete(%d)", seq), h.s.Delete(seq, false), store.ErrNotFound)
		wantErr(t, fmt.Sprintf("Delete(%d, erase)", seq), h.s.Delete(seq, true), store.ErrNotFound)
	}
	if err := h.s.Delete(4, true); err != nil {
		t.Fatalf("erase delete: %v", err)
	}
	wantErr(t, "Load of erased", h.s.Load(4, &store.Msg{}), store.ErrNotFound)
	wantErr(t, "second erase delete", h.s.Delete(4, true), store.ErrNotFound)
	h.wantSeqs(without(10, 3, 4)...)
	for _, seq := range without(10, 3, 4) {
		if m := h.load(seq); string(m.Data) != string(payload(fixtureSubjects[seq-1], int(seq-1))) {
			t.Fatalf("seq %d data %q after erasing a neighbour", seq, m.Data)
		}
	}
	h.check()
}

func testDeleteSubjectIndex(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	// a.x holds 1, 4, 7.
	h.del(1)
	if ss := h.s.SubjectsState("a.x")["a.x"]; ss != (store.SubjectState{Msgs: 2, First: 4, Last: 7}) {
		t.Fatalf("a.x after deleting its first: %+v", ss)
	}
	h.del(7)
	if ss := h.s.SubjectsState("a.x")["a.x"]; ss != (store.SubjectState{Msgs: 1, First: 4, Last: 4}) {
		t.Fatalf("a.x after deleting its last: %+v", ss)
	}
	h.del(4)
	if ss := h.s.SubjectsState("a.x"); len(ss) != 0 {
		t.Fatalf("a.x after deleting all: %v", ss)
	}
	if st := h.s.State(); st.NumSubjects != 5 {
		t.Fatalf("NumSubjects %d, want 5", st.NumSubjects)
	}
	h.append("a.x", nil, nil)
	if ss := h.s.SubjectsState("a.x")["a.x"]; ss != (store.SubjectState{Msgs: 1, First: 11, Last: 11}) {
		t.Fatalf("a.x recreated: %+v", ss)
	}
	h.check()
}

func testPurge(t *testing.T, open openFunc) {
	// Fixture: 1 a.x, 2 a.y, 3 b.x, 4 a.x, 5 c.d.e, 6 b.y, 7 a.x, 8 c.d.f, 9 b.x, 10 a.y
	cases := []struct {
		name          string
		deletes       []uint64
		filter        string
		upTo, keep    uint64
		wantPurged    uint64
		wantRemaining []uint64
	}{
		{name: "all", filter: "", wantPurged: 10},
		{name: "all-fwc", filter: ">", wantPurged: 10},
		{name: "literal", filter: "a.x", wantPurged: 3, wantRemaining: without(10, 1, 4, 7)},
		{name: "wildcard", filter: "a.*", wantPurged: 5, wantRemaining: []uint64{3, 5, 6, 8, 9}},
		{name: "wildcard-fwc", filter: "c.>", wantPurged: 2, wantRemaining: without(10, 5, 8)},
		{name: "no-match", filter: "zzz", wantPurged: 0, wantRemaining: seqRange(1, 10)},
		{name: "upTo", filter: "", upTo: 5, wantPurged: 4, wantRemaining: seqRange(5, 10)},
		{name: "upTo-1", filter: "", upTo: 1, wantPurged: 0, wantRemaining: seqRange(1, 10)},
		{name: "upTo-last", filter: "", upTo: 10, wantPurged: 9, wantRemaining: []uint64{10}},
		{name: "upTo-past-end", filter: "", upTo: 100, wantPurged: 10},
		{name: "keep", filter: "", keep: 3, wantPurged: 7, wantRemaining: seqRange(8, 10)},
		{name: "keep-all", filter: "", keep: 10, wantPurged: 0, wantRemaining: seqRange(1, 10)},
		{name: "keep-more", filter: "", keep: 50, wantPurged: 0, wantRemaining: seqRange(1, 10)},
		{name: "keep-fwc", filter: ">", keep: 1, wantPurged: 9, wantRemaining: []uint64{10}},
		{name: "literal-keep", filter: "a.x", keep: 1, wantPurged: 2, wantRemaining: without(10, 1, 4)},
		{name: "literal-upTo", filter: "a.x", upTo: 7, wantPurged: 2, wantRemaining: without(10, 1, 4)},
		{name: "literal-upTo-keep", filter: "a.x", upTo: 8, keep: 1, wantPurged: 2, wantRemaining: without(10, 1, 4)},
		{name: "literal-upTo-keep-2", filter: "a.x", upTo: 7, keep: 1, wantPurged: 1, wantRemaining: without(10, 1)},
		{name: "wildcard-keep-spans-subjects", filter: "a.*", keep: 2, wantPurged: 3, wantRemaining: without(10, 1, 2, 4)},
		{name: "wildcard-upTo", filter: "*.x", upTo: 5, wantPurged: 3, wantRemaining: without(10, 1, 3, 4)},
		{name: "wildcard-upTo-keep", filter: "*.x", upTo: 9, keep: 1, wantPurged: 3, wantRemaining: without(10, 1, 3, 4)},
		{name: "all-upTo-keep", filter: "", upTo: 8, keep: 2, wantPurged: 5, wantRemaining: seqRange(6, 10)},
		{name: "keep-counts-live-only", deletes: []uint64{9, 10}, filter: "", keep: 2, wantPurged: 6, wantRemaining: []uint64{7, 8}},
		{name: "literal-keep-after-delete", deletes: []uint64{7}, filter: "a.x", keep: 1, wantPurged: 1, wantRemaining: without(10, 1, 7)},
		{name: "all-after-deletes", deletes: []uint64{1, 5, 10}, filter: "", wantPurged: 7},
		{name: "last-subject-purged", filter: "a.y", wantPurged: 2, wantRemaining: without(10, 2, 10)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFixture(t, open)
			for _, d := range c.deletes {
				h.del(d)
			}
			n, err := h.s.Purge(c.filter, c.upTo, c.keep)
			if err != nil {
				t.Fatalf("Purge: %v", err)
			}
			if n != c.wantPurged {
				t.Fatalf("Purge(%q, %d, %d) removed %d, want %d", c.filter, c.upTo, c.keep, n, c.wantPurged)
			}
			h.wantSeqs(c.wantRemaining...)
			h.wantState(h.wantAfter(fixtureSubjects, c.wantRemaining, 10))
			h.check()
			if seq := h.append("after.purge", nil, nil); seq != 11 {
				t.Fatalf("append after purge got seq %d, want 11", seq)
			}
			h.check()
		})
	}
}

func testPurgeEmpty(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	for _, f := range []string{"", "a", "a.*"} {
		if n, err := h.s.Purge(f, 0, 0); err != nil || n != 0 {
			t.Fatalf("Purge(%q) on fresh store = %d, %v", f, n, err)
		}
	}
	h.wantState(store.State{})
	h.fill("a", "b")
	if n, err := h.s.Purge("", 0, 0); err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2", n, err)
	}
	h.wantState(store.State{FirstSeq: 3, LastSeq: 2})
	if n, err := h.s.Purge("", 0, 0); err != nil || n != 0 {
		t.Fatalf("second Purge = %d, %v; want 0", n, err)
	}
	h.wantState(store.State{FirstSeq: 3, LastSeq: 2})
	h.check()
}

func testPurgeInvalidFilter(t *testing.T, open openFunc) {
	h := newFixture(t, open)
	for _, f := range []string{"a..b", "a.>.b", ".", "a b"} {
		_, err := h.s.Purge(f, 0, 0)
		wantErr(t, "Purge("+f+")", err, store.ErrInvalidSubject)
	}
	h.wantSeqs(seqRange(1, 10)...)
}

func testCompact(t *testing.T, open openFunc) {
	cases := []struct {
		name       string
		deletes    []uint64
		seq        uint64
		wantPurged uint64
		wantFirst  uint64 // FirstSeq after
		wantLast   uint64 // LastSeq after
		wantHeld   []uint64
	}{
		{name: "middle", seq: 5, wantPurged: 4, wantFirst: 5, wantLast: 10, wantHeld: seqRange(5, 10)},
		{name: "one", seq: 1, wantPurged: 0, wantFirst: 1, wantLast: 10, wantHeld: seqRange(1, 10)},
		{name: "to-last", seq: 10, wantPurged: 9, wantFirst: 10, wantLast: 10, wantHeld: []uint64{10}},
		{name: "last-plus-one", seq: 11, wantPurged: 10, wantFirst: 11, wantLast: 10},
		{name: "past-end", seq: 100, wantPurged: 10, wantFirst: 100, wantLast: 99},
		{name: "onto-deleted", deletes: []uint64{5}, seq: 5, wantPurged: 4, wantFirst: 6, wantLast: 10, wantHeld: seqRange(6, 10)},
		{name: "over-gaps", deletes: []uint64{2, 3}, seq: 6, wantPurged: 3, wantFirst: 6, wantLast: 10, wantHeld: seqRange(6, 10)},
		{name: "below-first", deletes: []uint64{1, 2, 3}, seq: 2, wantPurged: 0, wantFirst: 4, wantLast: 10, wantHeld: seqRange(4, 10)},
		{name: "trailing-deleted", deletes: []uint64{9, 10}, seq: 9, wantPurged: 8, wantFirst: 11, wantLast: 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFixture(t, open)
			for _, d := range c.deletes {
				h.del(d)
			}
			n, err := h.s.Compact(c.seq)
			if err != nil {
				t.Fatalf("Compact(%d): %v", c.seq, err)
			}
			if n != c.wantPurged {
				t.Fatalf("Compact(%d) removed %d, want %d", c.seq, n, c.wantPurged)
			}
			h.wantSeqs(c.wantHeld...)
			want := h.wantAfter(fixtureSubjects, c.wantHeld, c.wantLast)
			want.FirstSeq = c.wantFirst
			h.wantState(want)
			h.check()
			if seq := h.append("after.compact", nil, nil); seq != c.wantLast+1 {
				t.Fatalf("append after Compact(%d) got seq %d, want %d", c.seq, seq, c.wantLast+1)
			}
			h.check()
		})
	}
	t.Run("zero", func(t *testing.T) {
		h := newFixture(t, open)
		_, err := h.s.Compact(0)
		wantErr(t, "Compact(0)", err, store.ErrInvalidSequence)
		h.wantSeqs(seqRange(1, 10)...)
	})
}

func testCompactEmpty(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	if n, err := h.s.Compact(50); err != nil || n != 0 {
		t.Fatalf("Compact(50) on fresh store = %d, %v", n, err)
	}
	h.wantState(store.State{FirstSeq: 50, LastSeq: 49})
	h.check()
	if seq := h.append("a", nil, nil); seq != 50 {
		t.Fatalf("first append after Compact(50) got seq %d", seq)
	}
	h.wantState(store.State{Msgs: 1, Bytes: h.size("a", 0, 0), FirstSeq: 50, LastSeq: 50, NumSubjects: 1})
	if _, err := h.s.Purge("", 0, 0); err != nil {
		t.Fatal(err)
	}
	// Empty at FirstSeq 51: compacting below changes nothing.
	if n, err := h.s.Compact(20); err != nil || n != 0 {
		t.Fatalf("Compact(20) = %d, %v", n, err)
	}
	h.wantState(store.State{FirstSeq: 51, LastSeq: 50})
	if _, err := h.s.Compact(51); err != nil {
		t.Fatal(err)
	}
	h.wantState(store.State{FirstSeq: 51, LastSeq: 50})
	if _, err := h.s.Compact(60); err != nil {
		t.Fatal(err)
	}
	h.wantState(store.State{FirstSeq: 60, LastSeq: 59})
	if seq := h.append("a", nil, nil); seq != 60 {
		t.Fatalf("append got seq %d, want 60", seq)
	}
	if seq := h.s.SeqForTime(timeFar); seq != 61 {
		t.Fatalf("SeqForTime(future) = %d, want 61", seq)
	}
	h.check()
	t.Run("fresh-1", func(t *testing.T) {
		h := newHarness(t, open, store.Limits{})
		if _, err := h.s.Compact(1); err != nil {
			t.Fatal(err)
		}
		h.wantState(store.State{FirstSeq: 1, LastSeq: 0})
		if seq := h.append("a", nil, nil); seq != 1 {
			t.Fatalf("append got seq %d, want 1", seq)
		}
	})
}

func testTruncate(t *testing.T, open openFunc) {
	cases := []struct {
		name     string
		deletes  []uint64
		seq      uint64
		wantHeld []uint64
	}{
		{name: "middle", seq: 5, wantHeld: seqRange(1, 5)},
		{name: "last", seq: 10, wantHeld: seqRange(1, 10)},
		{name: "beyond", seq: 1000, wantHeld: seqRange(1, 10)},
		{name: "first", seq: 1, wantHeld: []uint64{1}},
		{name: "zero", seq: 0},
		{name: "onto-deleted", deletes: []uint64{5}, seq: 5, wantHeld: seqRange(1, 4)},
		{name: "below-first", deletes: []uint64{1, 2, 3}, seq: 2},
		{name: "removes-subject", seq: 7, wantHeld: seqRange(1, 7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newFixture(t, open)
			for _, d := range c.deletes {
				h.del(d)
			}
			if err := h.s.Truncate(c.seq); err != nil {
				t.Fatalf("Truncate(%d): %v", c.seq, err)
			}
			h.wantSeqs(c.wantHeld...)
			h.wantState(h.wantAfter(fixtureSubjects, c.wantHeld, 10))
			h.check()
			if seq := h.append("after.truncate", nil, nil); seq != 11 {
				t.Fatalf("append after Truncate(%d) got seq %d, want 11 (sequences are never reused)", c.seq, seq)
			}
			h.check()
		})
	}
}

// testSequencesMonotonic runs every removing operation and checks that the
// next append always gets LastSeq+1, above every sequence handed out.
func testSequencesMonotonic(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	var maxSeen uint64
	appendOne := func(op string) {
		t.Helper()
		want := h.s.State().LastSeq + 1
		seq := h.append("mono.x", nil, []byte(op))
		if seq != want || seq <= maxSeen {
			t.Fatalf("after %s: append got seq %d, want %d (highest seen %d)", op, seq, want, maxSeen)
		}
		maxSeen = seq
		h.check()
	}
	ops := []struct {
		name string
		do   func() error
	}{
		{"delete-last", func() error { return h.s.Delete(h.s.State().LastSeq, false) }},
		{"purge-all", func() error { _, err := h.s.Purge("", 0, 0); return err }},
		{"purge-subject", func() error { _, err := h.s.Purge("mono.x", 0, 0); return err }},
		{"purge-keep", func() error { _, err := h.s.Purge("", 0, 1); return err }},
		{"compact-end", func() error { _, err := h.s.Compact(h.s.State().LastSeq + 1); return err }},
		{"compact-past", func() error { _, err := h.s.Compact(h.s.State().LastSeq + 10); return err }},
		{"truncate-first", func() error { return h.s.Truncate(h.s.State().FirstSeq) }},
		{"truncate-zero", func() error { return h.s.Truncate(0) }},
		{"limit-1", func() error { return h.s.UpdateLimits(store.Limits{MaxMsgs: 1}) }},
		{"no-limit", func() error { return h.s.UpdateLimits(store.Limits{}) }},
	}
	for round := 0; round < 2; round++ {
		for _, op := range ops {
			appendOne("fill")
			appendOne("fill")
			if err := op.do(); err != nil {
				t.Fatalf("%s: %v", op.name, err)
			}
			appendOne(op.name)
		}
	}
}
