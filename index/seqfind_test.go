package index

import (
	"math/rand"
	"sort"
	"testing"
)

// findModel is find as it was before the direct guess: a binary search for
// the first block ending after seq.
func findModel(x *Seqs, seq uint64) (int, int, bool) {
	bi := sort.Search(len(x.blocks), func(i int) bool { return x.blocks[i].end() > seq })
	if bi == len(x.blocks) || x.blocks[bi].base > seq {
		return bi, 0, false
	}
	return bi, int(seq - x.blocks[bi].base), true
}

// TestFindAgainstSearch builds random block layouts (full and short blocks,
// segment rolls, compaction jumps of every size, deleted runs dropped from
// the head and middle by DropDead) and checks find against the binary
// search at every stored sequence, at the gaps' edges and beyond both ends.
// The seed is printed so that a failure can be replayed.
func TestFindAgainstSearch(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for layout := 0; layout < 60; layout++ {
		var x Seqs
		seq := uint64(1 + rng.Intn(3*maxBlock))
		seg := SegID(1)
		off := uint32(32)
		total := 1 + rng.Intn(3*maxBlock) // few blocks: the head's edge cases
		if layout%2 == 0 {
			total = 20000 + rng.Intn(6*maxBlock)
		}
		odds := 100 + rng.Intn(8000) // how rare jumps and rolls are
		for n := 0; n < total; n++ {
			switch r := rng.Intn(odds); {
			case r == 0: // a big compaction jump
				seq += uint64(1 + rng.Intn(20*maxBlock))
			case r < 4: // a small jump
				seq += uint64(1 + rng.Intn(40))
			case r < 8: // a segment roll
				seg++
				off = 32
			}
			x.Add(seq, Loc{Seg: seg, Off: off})
			off += uint32(40 + rng.Intn(200))
			seq++
		}
		last := seq - 1
		// Delete runs, sometimes whole blocks, then drop the dead ones.
		for d := rng.Intn(6); d > 0; d-- {
			bi := rng.Intn(len(x.blocks))
			b := x.blocks[bi]
			from, to := b.base, b.end()
			if rng.Intn(2) == 0 {
				from += uint64(rng.Intn(b.n))
			}
			for s := from; s < to; s++ {
				x.Delete(s)
			}
		}
		if rng.Intn(2) == 0 {
			x.DropDead()
		}
		check := func(s uint64) {
			gb, gi, gok := x.find(s)
			wb, wi, wok := findModel(&x, s)
			if gb != wb || gi != wi || gok != wok {
				t.Fatalf("seed %d layout %d: find(%d) = (%d, %d, %v), binary search (%d, %d, %v); %d blocks",
					seed, layout, s, gb, gi, gok, wb, wi, wok, len(x.blocks))
			}
		}
		for s := uint64(0); s <= last+2*maxBlock; s++ {
			check(s)
		}
		for _, b := range x.blocks {
			for _, s := range []uint64{b.base - 1, b.base, b.end() - 1, b.end()} {
				check(s)
			}
		}
		check(^uint64(0))
	}
	var empty Seqs
	if bi, _, ok := empty.find(5); bi != 0 || ok {
		t.Fatalf("empty index: find(5) = %d, %v", bi, ok)
	}
}

// TestLookupSpan: LookupSpan finds what Lookup finds, and the next entry's
// offset within the same block (deleted or not), none for a block's last.
func TestLookupSpan(t *testing.T) {
	var x Seqs
	const n = 3*maxBlock + 10
	for q := uint64(1); q <= n; q++ {
		x.Add(q, Loc{Seg: 1, Off: uint32(q * 100)})
	}
	for q := uint64(2); q <= n; q += 5 {
		x.Delete(q)
	}
	for q := uint64(0); q <= n+1; q++ {
		loc, end, hasEnd, ok := x.LookupSpan(q)
		want, wok := x.Lookup(q)
		if ok != wok || loc != want {
			t.Fatalf("seq %d: %v %v, Lookup %v %v", q, loc, ok, want, wok)
		}
		lastInBlock := q%maxBlock == 0 || q == n
		if ok && (hasEnd == lastInBlock || hasEnd && end != uint32((q+1)*100)) {
			t.Fatalf("seq %d: end %d %v", q, end, hasEnd)
		}
	}
}
