package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// buildMixed returns an index whose sealed blocks take every form: small
// records (the one-byte form), medium ones (the uint16 form), large ones
// (plain offsets), records of one size (the stride form), deletes in
// sealed and open blocks, and an open block at the end.
// It returns the index, the live sequences' locations and the highest
// sequence added (live or not).
func buildMixed(t *testing.T, rng *rand.Rand) (*Index, map[uint64]Loc, uint64) {
	t.Helper()
	x := New()
	want := map[uint64]Loc{}
	seq := uint64(1)
	for seg := SegID(1); seg <= 8; seg++ {
		var step uint32
		switch seg % 4 {
		case 0:
			step = 150 // small
		case 1:
			step = 3000 // wide
		case 2:
			step = 70000 // plain offsets
		default:
			step = 4 // stride: one size, no jitter below
		}
		off := uint32(64)
		for range 1 + rng.IntN(3*maxBlock/2) {
			x.Add(seq, Loc{Seg: seg, Off: off}, fmt.Sprintf("s.%d", seq%5))
			want[seq] = Loc{Seg: seg, Off: off}
			seq++
			off += step - uint32(rng.IntN(int(step/4)))
		}
	}
	for q := range want {
		if rng.IntN(10) == 0 {
			x.Seqs.Delete(q)
			delete(want, q)
		}
	}
	return x, want, seq - 1
}

func checkLocs(t *testing.T, x *Index, want map[uint64]Loc, last uint64) {
	t.Helper()
	for q := uint64(0); q <= last+1; q++ {
		loc, ok := x.Seqs.Lookup(q)
		w, live := want[q]
		if ok != live || loc != w {
			t.Fatalf("seq %d: got %+v %v, want %+v %v", q, loc, ok, w, live)
		}
	}
	if x.Seqs.Len() != len(want) {
		t.Fatalf("len %d want %d", x.Seqs.Len(), len(want))
	}
}

// alignedCopy copies b into a buffer whose first byte is 8-byte aligned,
// as a mapping's is.
func alignedCopy(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8)
	out := unsafeBytes(words)[:len(b)]
	copy(out, b)
	return out
}

func TestCheckpointV2InPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, want, last := buildMixed(t, rng)
	b := alignedCopy(Encode(x, []byte("t")))
	if b[4] != CheckpointVersion {
		t.Fatalf("version %d", b[4])
	}
	y, tr, err := DecodeInPlace("ckpt", b)
	if err != nil {
		t.Fatal(err)
	}
	if string(tr) != "t" {
		t.Fatalf("trailer %q", tr)
	}
	checkLocs(t, y, want, last)

	// The packed blocks refer to b; the open one and plain-offset ones do not.
	mapped, forms := 0, map[int]int{}
	for i, bl := range y.Seqs.blocks {
		forms[bl.form()]++
		if bl.mapped {
			mapped++
			if !within(b, bl.anch) {
				t.Fatalf("block %d marked mapped but its anchors are elsewhere", i)
			}
		}
		if i == len(y.Seqs.blocks)-1 && (bl.offs == nil || bl.mapped) {
			t.Fatal("the newest block must be open and on the heap")
		}
	}
	if mapped == 0 || forms[formSmall] == 0 || forms[formWide] == 0 || forms[formOffsets] < 2 {
		t.Fatalf("forms %v, %d mapped: the test does not cover every form", forms, mapped)
	}
	if y.Seqs.MemBytes() >= x.Seqs.MemBytes() {
		t.Fatalf("in-place index counts %d heap bytes, the original %d", y.Seqs.MemBytes(), x.Seqs.MemBytes())
	}

	// Deleting in a mapped block touches only the heap bitmap: the
	// checkpoint's bytes stay as they were.
	before := append([]byte(nil), b...)
	for q := range want {
		if rng.IntN(4) == 0 {
			y.Seqs.Delete(q)
			delete(want, q)
		}
	}
	for i := range 3 * maxBlock {
		q := last + 1 + uint64(i)
		y.Seqs.Add(q, Loc{Seg: 9, Off: uint32(64 + 200*i)})
		want[q] = Loc{Seg: 9, Off: uint32(64 + 200*i)}
	}
	last += 3 * maxBlock
	if !bytes.Equal(b, before) {
		t.Fatal("mutating the index wrote into the checkpoint it was read from")
	}
	checkLocs(t, y, want, last)

	// A copying decode of the re-encoded index agrees, and re-encoding an
	// in-place index gives the same bytes as a copied one.
	c := Encode(y, nil)
	z, _, err := Decode("ckpt2", c)
	if err != nil {
		t.Fatal(err)
	}
	checkLocs(t, z, want, last)
	if !bytes.Equal(Encode(z, nil), c) {
		t.Fatal("re-encoding a decoded index changed its bytes")
	}
}

func within(b []byte, v []uint32) bool {
	if len(v) == 0 {
		return false
	}
	start := uintptrOf(b)
	p := uintptrOfU32(v)
	return p >= start && p < start+uintptr(len(b))
}

// seqSectionV1 is the sequence section of a version 1 checkpoint (one
// uint32 per entry), as jetwal wrote it before version 2.
func seqSectionV1(x *Index) []byte {
	var body []byte
	le := binary.LittleEndian
	body = le.AppendUint32(body, uint32(len(x.Seqs.blocks)))
	for _, bl := range x.Seqs.blocks {
		body = le.AppendUint32(body, uint32(bl.seg))
		body = le.AppendUint64(body, bl.base)
		body = le.AppendUint32(body, uint32(bl.n))
		for i := range bl.n {
			body = le.AppendUint32(body, bl.off(i))
		}
		body = le.AppendUint32(body, uint32(len(bl.del)))
		for _, w := range bl.del {
			body = le.AppendUint64(body, w)
		}
	}
	return body
}

func TestCheckpointV1StillDecodes(t *testing.T) {
	x, want, last := buildMixed(t, rand.New(rand.NewPCG(3, 4)))
	for _, inPlace := range []bool{false, true} {
		b := alignedCopy(checkpointV1(x)) // subjcodec_test.go
		var y *Index
		var err error
		if inPlace {
			y, _, err = DecodeInPlace("v1", b)
		} else {
			y, _, err = Decode("v1", b)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkLocs(t, y, want, last)
		for _, bl := range y.Seqs.blocks {
			if bl.mapped {
				t.Fatal("a version 1 block cannot be read in place")
			}
		}
		// Rewritten in the current version, it is the same index.
		if !bytes.Equal(Encode(y, nil), Encode(x, nil)) {
			t.Fatal("v1 -> current changed the index")
		}
	}
}

// TestCheckpointV2StillDecodes: a version 2 checkpoint (the current layout
// without stride blocks) decodes, copied and in place; a stride block in
// one is refused, since version 2 has no such form.
func TestCheckpointV2StillDecodes(t *testing.T) {
	asV2 := func(b []byte) []byte {
		c := append([]byte(nil), b...)
		c[4] = 2
		end := len(c) - 8
		binary.LittleEndian.PutUint64(c[end:], xxhash.Sum64(c[:end]))
		return alignedCopy(c)
	}
	x, want, last := buildMixed(t, rand.New(rand.NewPCG(3, 4)))
	var stride []SegID
	for _, bl := range x.Seqs.blocks {
		if bl.form() == formStride {
			stride = append(stride, bl.seg)
		}
	}
	if len(stride) == 0 {
		t.Fatal("buildMixed made no stride block")
	}
	for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
		if _, _, err := decode("v2", asV2(Encode(x, nil))); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("stride block in version 2: %v", err)
		}
	}
	// Without stride blocks: what version 2 wrote.
	for _, bl := range x.Seqs.blocks {
		if bl.form() == formStride {
			offs := make([]uint32, bl.n)
			for i := range offs {
				offs[i] = bl.off(i)
			}
			bl.offs = offs
		}
	}
	for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
		y, _, err := decode("v2", asV2(Encode(x, nil)))
		if err != nil {
			t.Fatal(err)
		}
		checkLocs(t, y, want, last)
	}
}

// TestCheckpointV2Damage: a block section damaged in ways the checksum
// cannot see (the checksum recomputed) is refused, never misread.
func TestCheckpointV2Damage(t *testing.T) {
	x, _, _ := buildMixed(t, rand.New(rand.NewPCG(5, 6)))
	b := Encode(x, nil)
	reseal := func(c []byte) []byte {
		end := len(c) - 8
		binary.LittleEndian.PutUint64(c[end:], xxhash.Sum64(c[:end]))
		return c
	}
	// The first block starts at 20: seg, base, n, form.
	cases := map[string]func(c []byte){
		"unknown form":     func(c []byte) { binary.LittleEndian.PutUint32(c[36:], 7) },
		"empty block":      func(c []byte) { binary.LittleEndian.PutUint32(c[32:], 0) },
		"huge count":       func(c []byte) { binary.LittleEndian.PutUint32(c[32:], 1<<30) },
		"group not at its": func(c []byte) { packedGroupStart(x, c)[0] = 9 },
		// first + (n-1)·stride past 32 bits
		"stride overflow": func(c []byte) { binary.LittleEndian.PutUint32(blockOfForm(x, c, formStride)[24:], 1<<31) },
		"stride zero":     func(c []byte) { binary.LittleEndian.PutUint32(blockOfForm(x, c, formStride)[24:], 0) },
	}
	for name, damage := range cases {
		c := append([]byte(nil), b...)
		damage(c)
		for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
			if _, _, err := decode("f", alignedCopy(reseal(c))); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
}

// packedGroupStart returns c from the first distance of the first block
// packed with anchors on.
func packedGroupStart(x *Index, c []byte) []byte {
	p := checkpointHead + 4
	for _, bl := range x.Seqs.blocks {
		if f := bl.form(); f == formSmall || f == formWide {
			return c[p+20+4*len(bl.anch):]
		}
		p += bl.blockSize()
	}
	panic("no packed block")
}

// blockOfForm returns c from the first block of form f on.
func blockOfForm(x *Index, c []byte, f int) []byte {
	p := checkpointHead + 4
	for _, bl := range x.Seqs.blocks {
		if bl.form() == f {
			return c[p:]
		}
		p += bl.blockSize()
	}
	panic(fmt.Sprintf("no block of form %d", f))
}

func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), 8*len(w))
}

func uintptrOf(b []byte) uintptr      { return uintptr(unsafe.Pointer(&b[0])) }
func uintptrOfU32(v []uint32) uintptr { return uintptr(unsafe.Pointer(&v[0])) }

// TestRepoint: after EncodeToPlaced, the packed blocks read their arrays
// from the encoded bytes and still look up every sequence; bytes that do
// not hold a block exactly leave every block as it was.
func TestRepoint(t *testing.T) {
	x, want, last := buildMixed(t, rand.New(rand.NewPCG(7, 8)))
	var buf bytes.Buffer
	n, place, err := EncodeToPlaced(&buf, x, nil)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("encode: %d bytes, %v", n, err)
	}
	b := alignedCopy(buf.Bytes())

	bad := append([]byte(nil), b...)
	packedGroupStart(x, bad)[1] ^= 1 // a distance inside the first packed block
	bad = alignedCopy(bad)
	heap := x.Seqs.MemBytes()
	if x.Seqs.Repoint(place, bad) {
		t.Fatal("Repoint accepted bytes that differ from a block")
	}
	for _, bl := range x.Seqs.blocks {
		if bl.mapped {
			t.Fatal("a failed Repoint moved a block")
		}
	}
	if !x.Seqs.Repoint(place, b) {
		t.Fatal("Repoint refused the bytes it was encoded to")
	}
	moved := 0
	for _, bl := range x.Seqs.blocks {
		if bl.mapped {
			moved++
			if !within(b, bl.anch) {
				t.Fatal("a moved block's anchors are not in the checkpoint bytes")
			}
		}
	}
	if moved == 0 || x.Seqs.MemBytes() >= heap {
		t.Fatalf("%d blocks moved, heap %d -> %d", moved, heap, x.Seqs.MemBytes())
	}
	checkLocs(t, x, want, last)
	if !bytes.Equal(Encode(x, nil), buf.Bytes()) {
		t.Fatal("a repointed index encodes differently")
	}
}

// TestMoveRefusesMovedBlocks: Check reads only what the placement kept,
// so a store runs it without its lock; Move, under the lock, must then
// refuse a placement whose blocks no longer hold the arrays it saw (here
// they were moved to another checkpoint's bytes in between), and change
// nothing.
func TestMoveRefusesMovedBlocks(t *testing.T) {
	x, want, last := buildMixed(t, rand.New(rand.NewPCG(9, 10)))
	var b1, b2 bytes.Buffer
	_, p1, err := EncodeToPlaced(&b1, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, p2, err := EncodeToPlaced(&b2, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := alignedCopy(b1.Bytes()), alignedCopy(b2.Bytes())
	if !littleEndian { // blocks are read in place only on little-endian machines
		if p2.Check(m2) {
			t.Fatal("Check accepted bytes this machine cannot read in place")
		}
		return
	}
	if !p2.Check(m2) {
		t.Fatal("Check refused the bytes the placement was encoded to")
	}
	if !x.Seqs.Repoint(p1, m1) {
		t.Fatal("Repoint refused the bytes it was encoded to")
	}
	if !p2.Check(m2) {
		t.Fatal("Check depends on the blocks, not on what the placement kept")
	}
	if x.Seqs.Move(p2, m2) {
		t.Fatal("Move accepted blocks whose arrays changed after they were placed")
	}
	for _, bl := range x.Seqs.blocks {
		if bl.mapped && !within(m1, bl.anch) {
			t.Fatal("a refused Move moved a block")
		}
	}
	checkLocs(t, x, want, last)
}
