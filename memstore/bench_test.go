package memstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// benchMsgs is the size of the prefilled stores of the read benchmarks.
const benchMsgs = 1_000_000

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "msgs/s")
	}
}

// BenchmarkAppend measures Append of 128-byte payloads to one subject. The
// store keeps at most a million messages (DiscardOld) so memory stays
// bounded however large b.N grows; past that point each append also drops
// the oldest message, which is the steady state of a limited stream.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{128} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			s, err := New(store.Limits{MaxMsgs: benchMsgs})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := s.Append("bench.append", nil, data); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b)
		})
	}
}

// fillBench returns a store of n 128-byte messages spread round-robin over
// subjects "bench.<i % subjects>".
func fillBench(b *testing.B, n, subjects int) *Store {
	b.Helper()
	s, err := New(store.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, subjects)
	for i := range names {
		names[i] = fmt.Sprintf("bench.%d", i)
	}
	data := make([]byte, 128)
	for i := 0; i < n; i++ {
		if _, _, err := s.Append(names[i%subjects], nil, data); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkLoad measures Load of random sequences from a store of a million
// 128-byte messages.
func BenchmarkLoad(b *testing.B) {
	b.Run("random", func(b *testing.B) {
		s := fillBench(b, benchMsgs, 100)
		defer s.Close()
		rng := rand.New(rand.NewPCG(1, 2))
		seqs := make([]uint64, 1<<16)
		for i := range seqs {
			seqs[i] = 1 + rng.Uint64N(benchMsgs)
		}
		var m store.Msg
		b.SetBytes(128)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := s.Load(seqs[i&(len(seqs)-1)], &m); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b)
	})
}

// BenchmarkLoadNext walks a filter through a store of a million 128-byte
// messages over 10,000 subjects, one LoadNext per op, wrapping at the end.
// filter=sparse is a literal matching one subject (every 10,000th message);
// filter=sparse-wildcard matches the same subject through a '*'; filter=all
// is the baseline where every message matches.
func BenchmarkLoadNext(b *testing.B) {
	const subjects = 10_000
	s := fillBench(b, benchMsgs, subjects)
	defer s.Close()
	for _, c := range []struct{ name, filter string }{
		{"sparse", "bench.4242"},
		{"sparse-wildcard", "*.4242"},
		{"all", ">"},
	} {
		b.Run("filter="+c.name, func(b *testing.B) {
			var m store.Msg
			next := uint64(1)
			b.SetBytes(128)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := s.LoadNext(c.filter, next, &m)
				switch {
				case err == nil:
					next = m.Seq + 1
				case errors.Is(err, store.ErrEOF):
					next = 1
				default:
					b.Fatal(err)
				}
			}
			reportRate(b)
		})
	}
}
