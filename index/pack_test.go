package index

import (
	"math/rand"
	"testing"
)

// TestPackedBlocksKeepLocations fills blocks with records of mixed sizes
// (some too large to pack), deletes some, and checks every location before
// and after a checkpoint round trip, and that packing saved memory.
func TestPackedBlocksKeepLocations(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var x Seqs
	want := map[uint64]Loc{}
	var off uint32
	seg := SegID(1)
	seq := uint64(0)
	for i := 0; i < 5*maxBlock; i++ {
		seq++
		if i == 3*maxBlock+17 {
			seg++
			off = 0
		}
		x.Add(seq, Loc{Seg: seg, Off: off})
		want[seq] = Loc{Seg: seg, Off: off}
		size := uint32(40 + rng.Intn(200))
		if i >= maxBlock && i < 2*maxBlock && rng.Intn(8) == 0 {
			size = 70000 // this block cannot pack
		}
		off += size
	}
	for i := 0; i < 500; i++ {
		s := uint64(rng.Intn(int(seq))) + 1
		if x.Delete(s) {
			delete(want, s)
		}
	}
	check := func(what string, x *Seqs) {
		t.Helper()
		for s := uint64(1); s <= seq; s++ {
			got, ok := x.Lookup(s)
			w, live := want[s]
			if ok != live || got != w {
				t.Fatalf("%s: seq %d: got %v %v, want %v %v", what, s, got, ok, w, live)
			}
		}
		if x.Len() != len(want) {
			t.Fatalf("%s: Len %d, want %d", what, x.Len(), len(want))
		}
	}
	check("live", &x)
	packed, open := 0, 0
	for _, b := range x.blocks {
		if b.offs == nil {
			packed++
		} else {
			open++
		}
	}
	if packed < 3 || open != 2 { // the unpackable block and the newest
		t.Fatalf("packed %d open %d blocks; want >= 3 packed and 2 open", packed, open)
	}
	full := Index{Seqs: x, Subj: New().Subj}
	y, _, err := Decode("mem", Encode(&full, nil))
	if err != nil {
		t.Fatal(err)
	}
	check("decoded", &y.Seqs)
	for _, b := range y.Seqs.blocks {
		if b.offs == nil {
			if got := cap(b.anch)*4 + cap(b.rel)*2; float64(got) > 2.25*float64(b.n)+8 {
				t.Fatalf("packed block of %d entries uses %d bytes", b.n, got)
			}
		}
	}
	// The newest block stays open after decoding: appends extend it.
	n := len(y.Seqs.blocks)
	y.Seqs.Add(seq+1, Loc{Seg: seg, Off: off})
	if len(y.Seqs.blocks) != n {
		t.Fatalf("append after decode started a new block")
	}
}
