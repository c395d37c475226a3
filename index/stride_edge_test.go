package index

import (
	"bytes"
	"testing"
)

// Edge cases of the stride form, each checked live, after a copied and an
// in-place decode, and after a placed encode and Repoint.

// strideVariants returns x itself and its round trips.
func strideVariants(t *testing.T, x *Seqs) map[string]*Seqs {
	t.Helper()
	out := map[string]*Seqs{"live": x}
	full := &Index{Seqs: *x, Subj: NewSubjects()}
	enc := Encode(full, nil)
	for name, decode := range map[string]func(string, []byte) (*Index, []byte, error){"decoded": Decode, "in place": DecodeInPlace} {
		y, _, err := decode("edge", alignedCopy(enc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = &y.Seqs
	}
	rp := &Index{Seqs: *x, Subj: NewSubjects()}
	rp.Seqs.blocks = append([]*block(nil), x.blocks...) // Repoint changes blocks: copy them
	for i, b := range rp.Seqs.blocks {
		c := *b
		rp.Seqs.blocks[i] = &c
	}
	var buf bytes.Buffer
	_, place, err := EncodeToPlaced(&buf, rp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rp.Seqs.Repoint(place, alignedCopy(buf.Bytes())) && littleEndian {
		t.Fatal("Repoint refused its own encoding")
	}
	out["repointed"] = &rp.Seqs
	return out
}

type spanWant struct {
	seq    uint64
	ok     bool
	off    uint32
	hasEnd bool
	end    uint32
}

func checkSpans(t *testing.T, name string, x *Seqs, seg SegID, want []spanWant) {
	t.Helper()
	for _, w := range want {
		loc, end, hasEnd, ok := x.LookupSpan(w.seq)
		if ok != w.ok || ok && (loc != Loc{Seg: seg, Off: w.off} || hasEnd != w.hasEnd || hasEnd && end != w.end) {
			t.Fatalf("%s: LookupSpan(%d) = %v %d %v %v, want %+v", name, w.seq, loc, end, hasEnd, ok, w)
		}
		if l, lok := x.Lookup(w.seq); lok != ok || l != loc {
			t.Fatalf("%s: Lookup(%d) = %v %v, LookupSpan %v %v", name, w.seq, l, lok, loc, ok)
		}
	}
}

// TestStrideTinyBlocks: blocks of one and two entries (cut short by a
// segment change) take the stride form (one entry: distance 0) and keep
// their locations; LookupSpan has no next entry for a block's last, even
// when the next sequence follows in the next block.
func TestStrideTinyBlocks(t *testing.T) {
	var x Seqs
	x.Add(1, Loc{Seg: 1, Off: 500})   // block of one
	x.Add(2, Loc{Seg: 2, Off: 32})    // block of two
	x.Add(3, Loc{Seg: 2, Off: 99})    //
	x.Add(4, Loc{Seg: 3, Off: 7})     // block of one, then a gap
	x.Add(10, Loc{Seg: 3, Off: 1000}) // the open block
	x.Add(11, Loc{Seg: 3, Off: 1100})
	for i, f := range []int{formStride, formStride, formStride, formOffsets} {
		if x.blocks[i].form() != f {
			t.Fatalf("block %d in form %d, want %d", i, x.blocks[i].form(), f)
		}
	}
	if b := x.blocks[0]; b.stride != 0 || b.first != 500 {
		t.Fatalf("block of one: first %d stride %d", b.first, b.stride)
	}
	for name, y := range strideVariants(t, &x) {
		checkSpans(t, name, y, 1, []spanWant{{seq: 0}, {seq: 1, ok: true, off: 500}})
		checkSpans(t, name, y, 2, []spanWant{{seq: 2, ok: true, off: 32, hasEnd: true, end: 99}, {seq: 3, ok: true, off: 99}})
		checkSpans(t, name, y, 3, []spanWant{{seq: 4, ok: true, off: 7}, {seq: 5}, {seq: 9}, {seq: 10, ok: true, off: 1000, hasEnd: true, end: 1100}, {seq: 11, ok: true, off: 1100}, {seq: 12}})
	}
	// Delete the single entries and the first of the pair: the blocks of
	// one are dead and dropped, the pair's second entry stays.
	for _, q := range []uint64{1, 2, 4} {
		if !x.Delete(q) || x.Delete(q) {
			t.Fatalf("Delete(%d) twice", q)
		}
	}
	for name, y := range strideVariants(t, &x) {
		if f, _ := y.First(); f != 3 {
			t.Fatalf("%s: First %d", name, f)
		}
		if y.Len() != 3 || y.CountFrom(0) != 3 || y.CountFrom(4) != 2 {
			t.Fatalf("%s: Len %d CountFrom(0) %d CountFrom(4) %d", name, y.Len(), y.CountFrom(0), y.CountFrom(4))
		}
		// 2's record still lies before 3's: its span is still known but 2
		// itself is not found.
		checkSpans(t, name, y, 2, []spanWant{{seq: 2}, {seq: 3, ok: true, off: 99}})
		if dropped := y.DropDead(); len(dropped) != 1 || dropped[0] != 1 {
			t.Fatalf("%s: DropDead freed %v, want segment 1 only (3 holds the open block)", name, dropped)
		}
		if len(y.blocks) != 2 || y.HasSeg(1) || !y.HasSeg(2) || y.SegLive(3) != 2 {
			t.Fatalf("%s: %d blocks after DropDead", name, len(y.blocks))
		}
	}
}

// TestStrideMaxBlockBoundary: a run of one size longer than maxBlock fills
// a stride block of exactly maxBlock entries; the next entry opens a new
// block in the same segment. LookupSpan at the full block's last entry
// reports no next offset (the next entry is in another block), and the
// next block's first entry reads its own.
func TestStrideMaxBlockBoundary(t *testing.T) {
	var x Seqs
	const step = 128
	off := func(q uint64) uint32 { return uint32(64 + (q-1)*step) }
	for q := uint64(1); q <= 2*maxBlock+1; q++ {
		x.Add(q, Loc{Seg: 1, Off: off(q)})
	}
	if len(x.blocks) != 3 || x.blocks[0].n != maxBlock || x.blocks[1].n != maxBlock || x.blocks[2].n != 1 {
		t.Fatalf("blocks %d, first two of %d and %d", len(x.blocks), x.blocks[0].n, x.blocks[1].n)
	}
	if x.blocks[0].form() != formStride || x.blocks[1].form() != formStride {
		t.Fatal("full blocks of one size are not in the stride form")
	}
	// Delete each block's first and last entry, and the neighbours of the
	// boundary's.
	for _, q := range []uint64{1, maxBlock, maxBlock + 1, 2 * maxBlock, 2*maxBlock + 1} {
		x.Delete(q)
	}
	for name, y := range strideVariants(t, &x) {
		checkSpans(t, name, y, 1, []spanWant{
			{seq: 1},
			{seq: 2, ok: true, off: off(2), hasEnd: true, end: off(3)},
			{seq: maxBlock - 1, ok: true, off: off(maxBlock - 1), hasEnd: true, end: off(maxBlock)}, // next deleted: still its offset
			{seq: maxBlock},
			{seq: maxBlock + 1},
			{seq: maxBlock + 2, ok: true, off: off(maxBlock + 2), hasEnd: true, end: off(maxBlock + 3)},
			{seq: 2*maxBlock - 1, ok: true, off: off(2*maxBlock - 1), hasEnd: true, end: off(2 * maxBlock)},
			{seq: 2 * maxBlock},
			{seq: 2*maxBlock + 1},
		})
		if f, _ := y.First(); f != 2 {
			t.Fatalf("%s: First %d", name, f)
		}
		if l, _ := y.Last(); l != 2*maxBlock-1 {
			t.Fatalf("%s: Last %d", name, l)
		}
		if q, _ := y.Next(maxBlock - 1 + 1); q != maxBlock+2 {
			t.Fatalf("%s: Next past the boundary %d", name, q)
		}
		if q, _ := y.Prev(maxBlock + 1); q != maxBlock-1 {
			t.Fatalf("%s: Prev before the boundary %d", name, q)
		}
		if n := y.CountFrom(maxBlock); n != maxBlock-2 {
			t.Fatalf("%s: CountFrom(%d) = %d", name, maxBlock, n)
		}
		var del []uint64
		y.Deleted(func(q uint64) bool { del = append(del, q); return true })
		if len(del) != 2 || del[0] != maxBlock || del[1] != maxBlock+1 {
			t.Fatalf("%s: Deleted %v", name, del)
		}
	}
	// One more after the full block: the open block of one extends.
	x.Add(2*maxBlock+2, Loc{Seg: 1, Off: off(2*maxBlock + 2)})
	if len(x.blocks) != 3 || x.blocks[2].n != 2 {
		t.Fatalf("the open block did not extend: %d blocks", len(x.blocks))
	}
	checkSpans(t, "extended", &x, 1, []spanWant{{seq: 2*maxBlock + 2, ok: true, off: off(2*maxBlock + 2)}})
}

// TestStrideBrokenRun: one record of another size anywhere in a block
// (its first distance, the middle, its last) keeps the block out of the
// stride form, and every offset stays exact; so do runs that do not
// ascend (equal or falling offsets), which pack never takes as a stride.
func TestStrideBrokenRun(t *testing.T) {
	const n = 100
	cases := map[string]func(i int) uint32{
		"first distance": func(i int) uint32 { return uint32(32 + 50*i + min(i, 1)) },
		"middle":         func(i int) uint32 { return uint32(32 + 50*i + min(max(i-n/2, 0), 1)*3) },
		"last distance":  func(i int) uint32 { return uint32(32 + 50*i + min(max(i-(n-2), 0), 1)*7) },
		"equal offsets":  func(i int) uint32 { return 1000 },
		"falling":        func(i int) uint32 { return uint32(100000 - 50*i) },
		"two equal":      func(i int) uint32 { return uint32(32 + 50*i - min(max(i-9, 0), 1)*50) }, // entries 9 and 10 coincide: distance 0 once
	}
	for name, offAt := range cases {
		var x Seqs
		for i := range n {
			x.Add(uint64(i+1), Loc{Seg: 1, Off: offAt(i)})
		}
		x.Add(n+1, Loc{Seg: 2, Off: 0}) // seal the block
		if x.blocks[0].form() == formStride {
			t.Fatalf("%s: packed as a stride", name)
		}
		for vname, y := range strideVariants(t, &x) {
			for i := range n {
				loc, end, hasEnd, ok := y.LookupSpan(uint64(i + 1))
				if !ok || loc.Off != offAt(i) || hasEnd != (i < n-1) || hasEnd && end != offAt(i+1) {
					t.Fatalf("%s %s: entry %d: %v %d %v %v, want offset %d", name, vname, i, loc, end, hasEnd, ok, offAt(i))
				}
			}
		}
	}
	// The same run with no odd record is a stride.
	var x Seqs
	for i := range n {
		x.Add(uint64(i+1), Loc{Seg: 1, Off: uint32(32 + 50*i)})
	}
	x.Add(n+1, Loc{Seg: 2, Off: 0})
	if b := x.blocks[0]; b.form() != formStride || b.first != 32 || b.stride != 50 {
		t.Fatalf("uniform run: form %d first %d stride %d", b.form(), b.first, b.stride)
	}
}

// TestStrideLastOffsetAtTop: a stride block whose last entry lies at the
// top of the 32-bit offset space keeps it exactly and round-trips.
func TestStrideLastOffsetAtTop(t *testing.T) {
	var x Seqs
	const n = 1000
	stride := uint32((1<<32 - 1 - 10) / (n - 1))
	first := uint32(1<<32-1) - (n-1)*stride
	for i := range uint32(n) {
		x.Add(uint64(i+1), Loc{Seg: 1, Off: first + i*stride})
	}
	x.Add(n+1, Loc{Seg: 2, Off: 0})
	if x.blocks[0].form() != formStride {
		t.Fatalf("form %d", x.blocks[0].form())
	}
	for name, y := range strideVariants(t, &x) {
		if loc, ok := y.Lookup(n); !ok || loc.Off != 1<<32-1 {
			t.Fatalf("%s: last entry at %v %v", name, loc, ok)
		}
		if _, end, hasEnd, _ := y.LookupSpan(n - 1); !hasEnd || end != 1<<32-1 {
			t.Fatalf("%s: span of the entry before the last: %d %v", name, end, hasEnd)
		}
	}
}

// TestRepointStrideBlocks: EncodeToPlaced places no stride block (it has
// no array to map), so an index of stride blocks and an open block
// repoints with nothing to move and keeps reading from the heap, and in a
// mixed index the stride blocks stay as they were while the others move.
// Deletes after the move, and a second checkpoint and Repoint, still find
// every entry.
func TestRepointStrideBlocks(t *testing.T) {
	x := New()
	for q := uint64(1); q <= 3*maxBlock+7; q++ {
		x.Add(q, Loc{Seg: 1, Off: uint32(32 + (q-1)*200)}, "u")
	}
	var buf bytes.Buffer
	_, place, err := EncodeToPlaced(&buf, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(place.blocks) != 0 {
		t.Fatalf("%d stride blocks placed", len(place.blocks))
	}
	if !x.Seqs.Repoint(place, alignedCopy(buf.Bytes())) && littleEndian {
		t.Fatal("Repoint with nothing to move refused")
	}
	// Now a mixed index: stride, small (jittered sizes), stride again.
	y := New()
	want := map[uint64]Loc{}
	off := uint32(32)
	for q := uint64(1); q <= 3*maxBlock; q++ {
		y.Add(q, Loc{Seg: 1, Off: off}, "m")
		want[q] = Loc{Seg: 1, Off: off}
		off += 100
		if q > maxBlock && q <= 2*maxBlock {
			off += uint32(q % 7)
		}
	}
	y.Add(3*maxBlock+1, Loc{Seg: 2, Off: 32}, "m")
	want[3*maxBlock+1] = Loc{Seg: 2, Off: 32}
	forms := []int{y.Seqs.blocks[0].form(), y.Seqs.blocks[1].form(), y.Seqs.blocks[2].form()}
	if forms[0] != formStride || forms[1] != formSmall || forms[2] != formStride {
		t.Fatalf("forms %v", forms)
	}
	for round := range 2 {
		buf.Reset()
		if _, place, err = EncodeToPlaced(&buf, y, nil); err != nil {
			t.Fatal(err)
		}
		if len(place.blocks) != 1 || place.blocks[0] != y.Seqs.blocks[1] {
			t.Fatalf("round %d: placed %d blocks, want the small one", round, len(place.blocks))
		}
		if !y.Seqs.Repoint(place, alignedCopy(buf.Bytes())) {
			if littleEndian {
				t.Fatal("Repoint refused")
			}
		} else if y.Seqs.blocks[0].mapped || !y.Seqs.blocks[1].mapped || y.Seqs.blocks[2].mapped {
			t.Fatal("Repoint moved a stride block, or not the small one")
		}
		// Deletes at the stride blocks' edges and the boundaries.
		for _, q := range []uint64{1, maxBlock, maxBlock + 1, 2 * maxBlock, 2*maxBlock + 1, 3 * maxBlock} {
			if y.Seqs.Delete(q) {
				delete(want, q)
			}
		}
		checkLocs(t, y, want, 3*maxBlock+1)
		for q := range want {
			if _, end, hasEnd, _ := y.Seqs.LookupSpan(q); hasEnd {
				if next, ok := y.Seqs.blocks[(q-1)/maxBlock].offAt(q + 1); !ok || end != next {
					t.Fatalf("round %d: LookupSpan(%d) end %d, next entry at %d", round, q, end, next)
				}
			}
		}
	}
}

// offAt is the offset of seq in b, deleted or not.
func (b *block) offAt(seq uint64) (uint32, bool) {
	if seq < b.base || seq >= b.end() {
		return 0, false
	}
	return b.off(int(seq - b.base)), true
}
