package subject

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestSetAgreesWithOverlap: for random filters, Set.Overlapping finds an
// overlapping member exactly when Overlap holds for some member, and the
// owner it reports does overlap.
func TestSetAgreesWithOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	toks := []string{"a", "b", "c", "*", ">"}
	gen := func() string {
		n := 1 + rng.IntN(4)
		var parts []string
		for i := 0; i < n; i++ {
			tok := toks[rng.IntN(len(toks))]
			if tok == ">" && i != n-1 {
				tok = "*"
			}
			parts = append(parts, tok)
		}
		return strings.Join(parts, ".")
	}
	for round := 0; round < 300; round++ {
		var s Set
		var members []string
		for i := rng.IntN(6); i > 0; i-- {
			m := gen()
			members = append(members, m)
			s.Add(m, m)
		}
		for q := 0; q < 30; q++ {
			f := gen()
			want := false
			for _, m := range members {
				want = want || Overlap(m, f)
			}
			owner, got := s.Overlapping(f)
			if got != want {
				t.Fatalf("members %v, filter %q: Overlapping %v, pairwise %v", members, f, got, want)
			}
			if got && !Overlap(owner, f) {
				t.Fatalf("members %v, filter %q: reported owner %q does not overlap", members, f, owner)
			}
		}
	}
}

func manySubjects(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("orders.region%d.store%d.*", i%50, i)
	}
	return out
}

// BenchmarkSetDisjoint10k checks 10,000 subjects of one stream against each
// other, as a stream create does: the target is at most 100 ms.
func BenchmarkSetDisjoint10k(b *testing.B) {
	subjects := manySubjects(10000)
	for b.Loop() {
		start := time.Now()
		var s Set
		for _, subj := range subjects {
			if _, ok := s.Overlapping(subj); ok {
				b.Fatal("unexpected overlap")
			}
			s.Add(subj, subj)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms/10k-subjects")
	}
}
