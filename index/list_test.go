package index

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
)

// TestSeqListRuns mixes runs of consecutive sequences (stored without
// bytes) with gapped entries and checks forward and backward walks from
// every position against the plain list.
func TestSeqListRuns(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var l seqList
	var all []uint64
	seq := uint64(10)
	for len(all) < 2000 {
		if rng.Intn(3) == 0 {
			for range 40 + rng.Intn(60) { // a run
				seq++
				l.add(seq)
				all = append(all, seq)
			}
			continue
		}
		seq += uint64(1 + rng.Intn(3))
		l.add(seq)
		all = append(all, seq)
	}
	runs := 0
	for i := range l.marks {
		if l.run(i) {
			runs++
		}
	}
	if runs == 0 {
		t.Fatal("no block was stored as a run")
	}
	for _, start := range []int{0, 1, 31, 32, 33, 500, 1999} {
		it := l.from(all[start])
		var got []uint64
		for {
			s, ok := it.next()
			if !ok {
				break
			}
			if s >= all[start] {
				got = append(got, s)
			}
		}
		if len(got) != len(all)-start || got[0] != all[start] || got[len(got)-1] != all[len(all)-1] {
			t.Fatalf("forward from %d: %d entries", start, len(got))
		}
		for i, s := range got {
			if s != all[start+i] {
				t.Fatalf("forward from %d: entry %d is %d, want %d", start, i, s, all[start+i])
			}
		}
		j := start
		l.rev(all[start], func(s uint64) bool {
			if s != all[j] {
				t.Fatalf("backward from %d: got %d, want %d", start, s, all[j])
			}
			j--
			return true
		})
		if j != -1 {
			t.Fatalf("backward from %d stopped at %d", start, j)
		}
	}
}

// listWalk checks every walk of l against want: forward from each start
// (and from sequences between entries), backward from each, and the
// mark invariants that the codec relies on.
func listWalk(t *testing.T, l *seqList, want []uint64, tag string) {
	t.Helper()
	if err := l.check(); err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	if l.n != len(want) {
		t.Fatalf("%s: list says %d entries, want %d", tag, l.n, len(want))
	}
	for j := 1; j < len(l.marks); j++ {
		if l.run(j) && l.run(j-1) && l.marks[j-1].n < math.MaxUint32 && l.marks[j-1].seq+uint64(l.marks[j-1].n) == l.marks[j].seq {
			t.Fatalf("%s: runs %d and %d continue each other but were not merged", tag, j-1, j)
		}
	}
	step := max(1, len(want)/40)
	for start := 0; start < len(want); start += step {
		for _, s := range []uint64{want[start], want[start] - 1} {
			it := l.from(s)
			i := sort.Search(len(want), func(i int) bool { return want[i] >= s })
			for {
				q, ok := it.next()
				if !ok {
					break
				}
				if q < s {
					continue
				}
				if i >= len(want) || q != want[i] {
					t.Fatalf("%s: forward from %d: entry %d is %d", tag, s, i, q)
				}
				i++
			}
			if i != len(want) {
				t.Fatalf("%s: forward from %d stopped at %d of %d", tag, s, i, len(want))
			}
		}
		j := start
		l.rev(want[start], func(q uint64) bool {
			if j < 0 || q != want[j] {
				t.Fatalf("%s: backward from %d: got %d at %d", tag, want[start], q, j)
			}
			j--
			return true
		})
		if j != -1 {
			t.Fatalf("%s: backward from %d stopped at %d", tag, want[start], j)
		}
	}
}

// TestSeqListRunMarks drives lists with random mixes of long runs, short
// runs that break before a block fills, gaps, and rebuilds after random
// deletions (rebuildList, as Remove does), and checks them against the
// plain slice; runs must be merged so that a stretch costs one mark.
func TestSeqListRunMarks(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for round := range 60 {
		var l seqList
		var all []uint64
		seq := uint64(rng.Intn(100))
		for len(all) < 3000 {
			switch r := rng.Intn(10); {
			case r < 3: // a long run, often across several blocks
				for range 1 + rng.Intn(300) {
					seq++
					l.add(seq)
					all = append(all, seq)
				}
			case r < 5: // a short run that breaks
				for range 1 + rng.Intn(listBlock) {
					seq++
					l.add(seq)
					all = append(all, seq)
				}
				seq++
			default:
				seq += uint64(1 + rng.Intn(1000))
				l.add(seq)
				all = append(all, seq)
			}
		}
		tag := fmt.Sprintf("seed %d round %d", seed, round)
		listWalk(t, &l, all, tag)
		// Delete some entries and rebuild from a new first.
		dead := map[uint64]bool{}
		for range rng.Intn(len(all)) {
			dead[all[rng.Intn(len(all))]] = true
		}
		cut := rng.Intn(len(all))
		var live []uint64
		for _, q := range all[cut:] {
			if !dead[q] {
				live = append(live, q)
			}
		}
		if len(live) == 0 {
			continue
		}
		rebuildList(&l, live[0], func(q uint64) bool { return !dead[q] })
		listWalk(t, &l, live, tag+" rebuilt")
		// Appends after a rebuild extend its last run.
		for range rng.Intn(100) {
			seq++
			l.add(seq)
			live = append(live, seq)
		}
		listWalk(t, &l, live, tag+" rebuilt+appended")
	}
}

// TestSeqListRunMemory: a subject whose 10M messages are consecutive costs
// one mark, a run extended in place; one with every other sequence still
// answers walks (and costs its varints).
func TestSeqListRunMemory(t *testing.T) {
	var l seqList
	for q := uint64(5); q < 5+10_000_000; q++ {
		l.add(q)
	}
	if got := l.memBytes(); got >= 1024 || len(l.marks) != 1 {
		t.Fatalf("10M consecutive sequences: %d marks, memBytes %d", len(l.marks), got)
	}
	it := l.from(7_000_000)
	if q, ok := it.next(); !ok || q != 7_000_000 {
		t.Fatalf("from inside the run: %d %v", q, ok)
	}
	l.add(20_000_000) // a break, then a new run
	for q := uint64(20_000_001); q < 20_000_100; q++ {
		l.add(q)
	}
	if len(l.marks) != 2 || l.marks[1].n != 100 {
		t.Fatalf("after a break: %d marks", len(l.marks))
	}
	n := 0
	l.rev(20_000_001, func(q uint64) bool { n++; return n < 5 })
	if n != 5 {
		t.Fatalf("rev across marks returned %d", n)
	}

	var g seqList
	var want []uint64
	for q := uint64(1); q < 200_000; q += 2 {
		g.add(q)
		want = append(want, q)
	}
	if len(g.marks) != (len(want)+listBlock-1)/listBlock {
		t.Fatalf("every other sequence: %d marks for %d entries", len(g.marks), len(want))
	}
	listWalk(t, &g, want, "every other")
}

// TestSubjectsRunMemory: through the subject index, one subject of 10M
// consecutive messages keeps a list of under 1 KiB, and removing its oldest
// messages (as a limit does) moves First and rebuilds it as one run again; two subjects
// taking every other sequence keep varint lists that still answer.
func TestSubjectsRunMemory(t *testing.T) {
	x := New()
	for q := uint64(1); q <= 10_000_000; q++ {
		x.Subj.Add("one", q)
	}
	id, _, _ := x.Subj.lookup("one")
	l := x.Subj.lists.at(x.Subj.ent(id).list - 1)
	if got := l.memBytes(); got >= 1024 {
		t.Fatalf("10M consecutive messages of one subject: list of %d marks, %d bytes", len(l.marks), got)
	}
	const gone = 6_000_000 // past half: the list is rebuilt (rebuildList)
	var upTo uint64        // removed so far, as the store's live reports
	live := func(q uint64) bool { return q > upTo }
	for q := uint64(1); q <= gone; q++ {
		upTo = q
		x.Subj.Remove("one", q, live)
	}
	if info, _ := x.Subj.Get("one"); info.First != gone+1 || info.Msgs != 10_000_000-gone {
		t.Fatalf("after removing the oldest %d: %+v", gone, info)
	}
	l = x.Subj.lists.at(x.Subj.ent(id).list - 1)
	if l.n >= 10_000_000 || l.n < 10_000_000-gone {
		t.Fatalf("list of %d entries for %d live messages: not rebuilt", l.n, 10_000_000-gone)
	}
	if got := l.memBytes(); got >= 1024 {
		t.Fatalf("after removals and a rebuild: list of %d marks, %d bytes", len(l.marks), got)
	}

	y := New()
	for q := uint64(1); q <= 100_000; q++ {
		y.Subj.Add(fmt.Sprintf("alt.%d", q%2), q)
	}
	p := y.Subj.PlanFor("alt.1")
	if q, ok := p.NextIn(50_000, func(uint64) bool { return true }); !ok || q != 50_001 {
		t.Fatalf("every other sequence: next from 50000 is %d %v", q, ok)
	}
	if q, ok := p.PrevIn(50_000, func(uint64) bool { return true }); !ok || q != 49_999 {
		t.Fatalf("every other sequence: previous from 50000 is %d %v", q, ok)
	}
}

// TestSeqListRunFull: a run holds at most 2^32-1 entries; the next
// consecutive sequence starts a new mark, which becomes a run of its own.
func TestSeqListRunFull(t *testing.T) {
	const start = 1000
	l := seqList{marks: []listMark{{seq: start, n: math.MaxUint32 - 3}}, n: math.MaxUint32 - 3}
	l.last = start + math.MaxUint32 - 4
	for range 40 {
		l.add(l.last + 1)
	}
	if len(l.marks) != 2 || l.marks[0].n != math.MaxUint32 || l.marks[1].n != 37 || !l.run(1) || len(l.buf) != 0 {
		t.Fatalf("marks %v, %d bytes", l.marks, len(l.buf))
	}
	if err := l.check(); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	l.rev(l.last, func(q uint64) bool { got = append(got, q); return len(got) < 45 })
	for i, q := range got {
		if q != l.last-uint64(i) {
			t.Fatalf("backward across the full run: entry %d is %d", i, q)
		}
	}
	it := l.from(start + math.MaxUint32 - 2)
	for want := uint64(start + math.MaxUint32 - 2); want <= l.last; want++ {
		if q, ok := it.next(); !ok || q != want {
			t.Fatalf("forward across the full run: %d %v, want %d", q, ok, want)
		}
	}
	if _, ok := it.next(); ok {
		t.Fatal("forward past the end")
	}
}
