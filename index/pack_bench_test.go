package index

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLookup measures Seqs.Lookup over 4M messages of 176-byte
// records in each packed form: small (one byte per entry, the default for
// such records) and wide (the uint16 form, forced), random and sequential.
func BenchmarkLookup(b *testing.B) {
	const n = 4 << 20
	for _, form := range []string{"small", "wide"} {
		x := fillIndex(n, 1, 176)
		if form == "wide" {
			for _, bl := range x.Seqs.blocks {
				if bl.rel8 != nil {
					var offs []uint32
					for i := range bl.n {
						offs = append(offs, bl.off(i))
					}
					bl.anch, bl.rel, _ = packWide(offs)
					bl.rel8 = nil
				}
			}
		}
		b.Run("form="+form+"/random", func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < b.N; i++ {
				if _, ok := x.Seqs.Lookup(1 + rng.Uint64N(n)); !ok {
					b.Fatal("lookup failed")
				}
			}
		})
		b.Run("form="+form+"/sequential", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, ok := x.Seqs.Lookup(1 + uint64(i)%n); !ok {
					b.Fatal("lookup failed")
				}
			}
		})
	}
}
