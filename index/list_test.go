package index

import (
	"math/rand"
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
