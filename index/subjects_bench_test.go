package index

import (
	"fmt"
	"testing"
)

// BenchmarkSubjectsAddBytes appends to known subjects of a large index
// (the append and recovery hot path): subjects=1 hits the last-subject
// fast path, the others look up the table with each call. New subjects
// are measured by the new=true case.
func BenchmarkSubjectsAddBytes(b *testing.B) {
	for _, subjects := range []int{1, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("subjects=%d", subjects), func(b *testing.B) {
			names := make([][]byte, subjects)
			x := NewSubjects()
			seq := uint64(0)
			for i := range names {
				names[i] = fmt.Appendf(nil, "kv.bucket.key-%07d", i)
				seq++
				x.AddBytes(names[i], seq)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq++
				x.AddBytes(names[(i*7919)%subjects], seq)
			}
		})
	}
	b.Run("new=true", func(b *testing.B) {
		names := make([][]byte, 1_000_000)
		for i := range names {
			names[i] = fmt.Appendf(nil, "kv.bucket.key-%07d", i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		var x *Subjects
		for i := 0; i < b.N; i++ {
			if i%len(names) == 0 {
				x = NewSubjects()
			}
			x.AddBytes(names[i%len(names)], uint64(i+1))
		}
	})
}

// BenchmarkIndexAddOneSubject is the index's share of an append to a
// one-subject stream (Add with a string, the last-subject fast path).
func BenchmarkIndexAddOneSubject(b *testing.B) {
	x := New()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x.Add(uint64(i+1), Loc{Seg: 1, Off: uint32(i)}, "bench.subject")
	}
}

// BenchmarkPlanNextLiteral is the index's share of a filtered read of one
// subject among 10,000 (LoadNext with a literal filter).
func BenchmarkPlanNextLiteral(b *testing.B) {
	x := New()
	for q := uint64(1); q <= 1_000_000; q++ {
		name := fmt.Sprintf("dense.%d", q%9999)
		if q%10000 == 5000 {
			name = "sparse.target"
		}
		x.Add(q, Loc{Seg: 1, Off: uint32(q)}, name)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := x.Subj.PlanFor("sparse.target")
		if _, ok := p.NextIn(uint64(1+(i*7919)%990_000), x.Seqs.Live); !ok {
			b.Fatal("no next")
		}
	}
}

// BenchmarkMatchScan resolves a wildcard filter against 200k subjects with
// the match cache cold (as after every new subject): the scan of every
// subject name. prefix=k.7. can skip names by their literal prefix;
// prefix=none (a leading wildcard) cannot.
func BenchmarkMatchScan(b *testing.B) {
	x := NewSubjects()
	for i := 0; i < 200_000; i++ {
		x.Add(fmt.Sprintf("k.%d.%d", i%1000, i), uint64(i+1))
	}
	for _, c := range []struct{ name, filter string }{{"prefix=k.7.", "k.7.>"}, {"prefix=none", "*.7.>"}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				x.cache = nil
				if m := x.match(c.filter); len(m) == 0 {
					b.Fatal("no match")
				}
			}
		})
	}
}
