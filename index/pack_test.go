package index

import (
	"math/rand"
	"testing"
)

// TestPackedBlocksKeepLocations fills blocks with records of mixed sizes
// (small ones, some too large to pack, some that need the wide form),
// deletes some, and checks every location before and after a checkpoint
// round trip, and that packing saved memory.
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
		if i >= 2*maxBlock && i < 3*maxBlock && rng.Intn(8) == 0 {
			size = 256 + uint32(rng.Intn(3000)) // this block packs wide
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
	small, wide, open := 0, 0, 0
	for _, b := range x.blocks {
		switch {
		case b.offs != nil:
			open++
		case b.rel8 != nil:
			small++
		case b.rel != nil:
			wide++
		default:
			t.Fatalf("a block of mixed sizes packed in the stride form")
		}
	}
	if small < 2 || wide != 1 || open != 2 { // the unpackable block and the newest
		t.Fatalf("%d small, %d wide, %d open blocks; want >= 2 small, 1 wide, 2 open", small, wide, open)
	}
	full := Index{Seqs: x, Subj: New().Subj}
	y, _, err := Decode("mem", Encode(&full, nil))
	if err != nil {
		t.Fatal(err)
	}
	check("decoded", &y.Seqs)
	for _, b := range y.Seqs.blocks {
		got := cap(b.anch)*4 + cap(b.rel)*2 + cap(b.rel8)
		switch {
		case b.rel8 != nil && float64(got) > 1.125*float64(b.n)+smallEvery+4:
			t.Fatalf("small packed block of %d entries uses %d bytes", b.n, got)
		case b.rel != nil && float64(got) > 2.25*float64(b.n)+4:
			t.Fatalf("wide packed block of %d entries uses %d bytes", b.n, got)
		}
	}
	// The newest block stays open after decoding: appends extend it.
	n := len(y.Seqs.blocks)
	y.Seqs.Add(seq+1, Loc{Seg: seg, Off: off})
	if len(y.Seqs.blocks) != n {
		t.Fatalf("append after decode started a new block")
	}
}

// TestSumBytes checks the word-wise sum of a group's distances against a
// plain loop, for every prefix length, with bytes at their extremes.
func TestSumBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 200; round++ {
		g := make([]byte, smallEvery)
		for i := range g {
			switch round % 3 {
			case 0:
				g[i] = 0xff
			case 1:
				g[i] = byte(rng.Intn(256))
			default:
				g[i] = byte(rng.Intn(2))
			}
		}
		want := uint32(0)
		for k := 0; k < smallEvery; k++ {
			want += uint32(g[k])
			if got := sumBytes(g, k); got != want {
				t.Fatalf("round %d: sum of %x[0..%d] = %d, want %d", round, g, k, got, want)
			}
		}
	}
}

// TestStrideForm: blocks of records of one size pack into the stride form,
// which keeps no array, and still locate every entry after deletes and a
// checkpoint round trip (copied and in place); a block whose distances
// differ anywhere does not.
func TestStrideForm(t *testing.T) {
	var x Seqs
	const step = 170
	for q := uint64(1); q <= 3*maxBlock+5; q++ {
		off := uint32(32 + (q-1)*step)
		if q == 2*maxBlock+100 {
			off++ // one record a byte larger: the third block is not stride
		}
		if q > 2*maxBlock+100 {
			off++
		}
		x.Add(q, Loc{Seg: 1, Off: off})
	}
	for q := uint64(5); q <= 3*maxBlock; q += 97 {
		x.Delete(q)
	}
	want := func(q uint64) (Loc, bool) {
		if q >= 5 && q <= 3*maxBlock && (q-5)%97 == 0 || q == 0 || q > 3*maxBlock+5 {
			return Loc{}, false
		}
		off := uint32(32 + (q-1)*step)
		if q >= 2*maxBlock+100 {
			off++
		}
		return Loc{Seg: 1, Off: off}, true
	}
	check := func(what string, x *Seqs) {
		t.Helper()
		for q := uint64(0); q <= 3*maxBlock+6; q++ {
			got, ok := x.Lookup(q)
			if w, live := want(q); ok != live || got != w {
				t.Fatalf("%s: seq %d: got %v %v, want %v %v", what, q, got, ok, w, live)
			}
		}
	}
	check("live", &x)
	forms := []int{x.blocks[0].form(), x.blocks[1].form(), x.blocks[2].form(), x.blocks[3].form()}
	if forms[0] != formStride || forms[1] != formStride || forms[2] != formSmall || forms[3] != formOffsets {
		t.Fatalf("block forms %v, want stride, stride, small, offsets", forms)
	}
	if b := x.blocks[0]; b.anch != nil || b.rel8 != nil || b.rel != nil || b.offs != nil {
		t.Fatalf("stride block keeps arrays: %+v", b)
	}
	full := Index{Seqs: x, Subj: New().Subj}
	enc := Encode(&full, nil)
	for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
		y, _, err := decode("mem", alignedCopy(enc))
		if err != nil {
			t.Fatal(err)
		}
		check("decoded", &y.Seqs)
		if y.Seqs.blocks[0].form() != formStride {
			t.Fatalf("decoded first block in form %d", y.Seqs.blocks[0].form())
		}
	}
}

// TestStrideOnlyCheckpoint: an index of nothing but stride blocks (one
// stream of records of one size) and a small open block round-trips. Its
// checkpoint is a few bytes per block, far fewer than the entries it
// describes, and decoding must not take that for truncation.
func TestStrideOnlyCheckpoint(t *testing.T) {
	x := New()
	const n = 50*maxBlock + 3
	for q := uint64(1); q <= n; q++ {
		x.Add(q, Loc{Seg: SegID(1 + q/(20*maxBlock)), Off: uint32(32 + (q%(20*maxBlock))*170)}, "growth.x")
	}
	enc := Encode(x, nil)
	if len(enc) > 64*50+4096 {
		t.Fatalf("checkpoint of %d stride entries is %d bytes", n, len(enc))
	}
	for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
		y, _, err := decode("mem", alignedCopy(enc))
		if err != nil {
			t.Fatal(err)
		}
		for q := uint64(1); q <= n; q++ {
			loc, ok := y.Seqs.Lookup(q)
			if want := (Loc{Seg: SegID(1 + q/(20*maxBlock)), Off: uint32(32 + (q%(20*maxBlock))*170)}); !ok || loc != want {
				t.Fatalf("seq %d: %v %v, want %v", q, loc, ok, want)
			}
		}
	}
}
