package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func reseal(c []byte) []byte {
	end := len(c) - 8
	binary.LittleEndian.PutUint64(c[end:], xxhash.Sum64(c[:end]))
	return c
}

// exerciseSeqs calls every read of the index around each block's edges and
// a few other points, and appends and deletes after it, so that a decoded
// index that is inconsistent panics here rather than in a store. It
// returns what it finds inconsistent without panicking.
func exerciseSeqs(x *Seqs, rng *rand.Rand) string {
	points := []uint64{0, 1, ^uint64(0), ^uint64(0) - 1, 1 << 63}
	for _, b := range x.blocks {
		points = append(points, b.base-1, b.base, b.base+1, b.end()-1, b.end(), b.end()+1, b.base+uint64(rng.IntN(b.n)))
	}
	for _, p := range points {
		x.Lookup(p)
		x.LookupSpan(p)
		x.Next(p)
		x.Prev(p)
		x.CountFrom(p)
	}
	x.First()
	x.Last()
	x.Len()
	x.MemBytes()
	for _, b := range x.blocks {
		x.SegLive(b.seg)
		x.EachInSeg(b.seg, func(uint64, uint32) {})
	}
	for _, p := range points[:len(points)/2] {
		x.Delete(p)
	}
	x.DropDead()
	for _, b := range x.blocks {
		if bitsSet(b.del) != b.ndel {
			// An entry appended (or counted) at a marked index past n
			// would be deleted while Len counts it.
			return fmt.Sprintf("block at %d: %d deletion bits, %d within its %d entries", b.base, bitsSet(b.del), b.ndel, b.n)
		}
	}
	if x.Len() != x.CountFrom(0) {
		return fmt.Sprintf("Len %d, CountFrom(0) %d", x.Len(), x.CountFrom(0))
	}
	if n := len(x.blocks); n > 0 && x.blocks[n-1].end() < ^uint64(0)-10 {
		next := x.blocks[n-1].end()
		x.Add(next, Loc{Seg: 1, Off: 1})
		x.Add(next+1, Loc{Seg: 1, Off: 2})
		for _, q := range []uint64{next, next + 1} {
			if _, ok := x.Lookup(q); !ok {
				return fmt.Sprintf("%d not found just after its Add", q)
			}
		}
	}
	Encode(&Index{Seqs: *x, Subj: NewSubjects()}, nil)
	return ""
}

// TestCheckpointBlockPastSeqSpace: a block whose base plus its count passes
// 2^64 is refused. Its end wrapped to a small number, so the next block
// could start below the one before, blocks were no longer in order, and
// CountFrom's search then landed before a block far below seq and indexed
// its deletion bitmap at a negative entry (a panic, not an error).
// checkHostile judges the decoding of damaged checkpoint case i: refused
// with ErrCorrupt (reported true), or decoded to an index that every read,
// delete and append survives without a panic or an inconsistency.
func checkHostile(t *testing.T, i int, y *Index, err error, rng *rand.Rand) (refused bool) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("case %d: error without ErrCorrupt: %v", i, err)
		}
		return true
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("case %d: decoded, then panicked: %v", i, r)
		}
	}()
	if bad := exerciseSeqs(&y.Seqs, rng); bad != "" {
		t.Fatalf("case %d: decoded to an inconsistent index: %s", i, bad)
	}
	return false
}

func TestCheckpointBlockPastSeqSpace(t *testing.T) {
	stride := func(base uint64, n int) *block {
		return &block{seg: 1, base: base, n: n, first: 32, stride: 100}
	}
	open := &block{seg: 1, base: 1, n: 5, offs: append(make([]uint32, 0, 1024), 10, 20, 30, 40, 50)}
	open.markDeleted(2)
	x := &Index{Subj: NewSubjects()}
	x.Seqs.blocks = []*block{
		stride(10, 5),
		stride(100, 5),
		stride(1<<63+100, 10),
		stride(^uint64(0), 2), // 2^64-1 and, past it, 0: its end wraps to 1
		open,                  // from 1 again, after the "end" before it
	}
	x.Seqs.live = 10 + 5 + 5 + 2 + 4
	enc := Encode(x, nil)
	for _, decode := range []func(string, []byte) (*Index, []byte, error){Decode, DecodeInPlace} {
		y, _, err := decode("wrap", alignedCopy(enc))
		if !errors.Is(err, ErrCorrupt) {
			y.Seqs.CountFrom(1<<63 + 105)
			t.Fatalf("decoded a block past 2^64: err %v", err)
		}
	}
}

// TestCheckpointHostileBlocks: checkpoints of a mixed index (every block
// form, stride ones included) with a field of the sequence section set to
// a hostile value and the checksum recomputed either decode to an index
// that every read, delete and append survives, or fail with ErrCorrupt.
func TestCheckpointHostileBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x, _, _ := buildMixed(t, rng)
	enc := Encode(x, nil)
	// The start of every block, to aim at its fields.
	var starts []int
	p := checkpointHead + 4
	for _, bl := range x.Seqs.blocks {
		starts = append(starts, p)
		p += bl.blockSize()
	}
	seqEnd := p
	values := []uint32{0, 1, 2, 3, 4, 7, 63, 64, 65, maxBlock - 1, maxBlock, maxBlock + 1, 1 << 16, 1<<31 - 1, 1 << 31, ^uint32(0), ^uint32(0) - 1}
	refused := 0
	for i := range 4000 {
		c := append([]byte(nil), enc...)
		for range 1 + rng.IntN(2) {
			b := starts[rng.IntN(len(starts))]
			switch rng.IntN(4) {
			case 0: // a header field: seg, base (two words), n, form
				at := b + 4*rng.IntN(5)
				binary.LittleEndian.PutUint32(c[at:], values[rng.IntN(len(values))])
			case 1: // base near the top of the sequence space
				binary.LittleEndian.PutUint64(c[b+4:], ^uint64(0)-uint64(rng.IntN(3*maxBlock)))
			case 2: // a word in the block's body (first, stride, arrays, bitmap)
				at := b + 20 + 4*rng.IntN(8)
				if at+4 <= seqEnd {
					binary.LittleEndian.PutUint32(c[at:], values[rng.IntN(len(values))])
				}
			default: // a bit anywhere in the sequence section
				at := checkpointHead + rng.IntN(seqEnd-checkpointHead)
				c[at] ^= 1 << rng.IntN(8)
			}
		}
		reseal(c)
		decode := Decode
		if i%2 == 1 {
			decode = DecodeInPlace
		}
		y, _, err := decode("hostile", alignedCopy(c))
		if checkHostile(t, i, y, err, rng) {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no damaged checkpoint was refused")
	}
}

// TestCheckpointV1LongBlock: jetwal before sequence blocks were capped at
// maxBlock entries wrote a segment's messages as one block in its version 1
// checkpoints. Such a block used to decode (and pack, often into the stride
// form), but the version 3 checkpoint written from it was then refused at
// the next restart (a block of more than maxBlock entries), which scanned
// every segment. A version 1 checkpoint must either be refused itself or
// round-trip through the current version; it is refused (so the restart
// scans the segments once and rebuilds blocks of maxBlock), and a block of
// exactly maxBlock entries still decodes and round-trips.
func TestCheckpointV1LongBlock(t *testing.T) {
	x := New()
	long := &block{seg: 1, base: 1, n: maxBlock + 1000, offs: make([]uint32, maxBlock+1000)}
	for i := range long.offs {
		long.offs[i] = uint32(32 + 170*i)
	}
	long.markDeleted(maxBlock) // a deletion past the cap
	open := &block{seg: 2, base: maxBlock + 1001, n: 2, offs: append(make([]uint32, 0, 1024), 32, 200)}
	x.Seqs.blocks = []*block{long, open}
	x.Seqs.live = long.live() + open.live()
	y, _, err := Decode("v1", checkpointV1(x))
	if err == nil {
		if _, _, err := Decode("v3", Encode(y, nil)); err != nil {
			t.Fatalf("a version 1 checkpoint decoded, but the checkpoint written from it is refused: %v", err)
		}
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a version 1 block of %d entries: %v, want ErrCorrupt", long.n, err)
	}
	// A deletion bit past a block is refused too: in the open block an
	// entry appended at that index would be deleted while Len counts it.
	long.n, long.offs = maxBlock, long.offs[:maxBlock] // its deletion at maxBlock is now past it
	open.base = maxBlock + 1
	x.Seqs.live = long.live() + open.live()
	if _, _, err := Decode("v1", checkpointV1(x)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a version 1 deletion bit past its block: %v, want ErrCorrupt", err)
	}
	open.markDeleted(5)
	open.ndel = 0
	long.del = nil
	x.Seqs.live = long.live() + open.live()
	if _, _, err := Decode("v1", checkpointV1(x)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a version 1 deletion bit past the open block: %v, want ErrCorrupt", err)
	}
	open.del = nil
	// At the cap it is fine, and becomes a stride block.
	x.Seqs.live = long.live() + open.live()
	y, _, err = Decode("v1", checkpointV1(x))
	if err != nil {
		t.Fatal(err)
	}
	if y.Seqs.blocks[0].form() != formStride || y.Seqs.Len() != maxBlock+2 {
		t.Fatalf("form %d, %d live", y.Seqs.blocks[0].form(), y.Seqs.Len())
	}
	if _, _, err := Decode("v3", Encode(y, nil)); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointV1Hostile: TestCheckpointHostileBlocks for version 1
// checkpoints (one offset per entry, packed on decode, stride included):
// words and bits of the sequence section changed, the checksum
// recomputed; each is refused with ErrCorrupt or decodes to an index
// that every read, delete and append survives.
func TestCheckpointV1Hostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	x, _, _ := buildMixed(t, rng)
	enc := checkpointV1(x)
	seqEnd := checkpointHead + len(seqSectionV1(x))
	openDel := 8 * len(x.Seqs.blocks[len(x.Seqs.blocks)-1].del)
	if openDel == 0 {
		t.Fatal("the open block has no deletion bitmap")
	}
	values := []uint32{0, 1, 2, 63, 64, maxBlock, maxBlock + 1, 1 << 31, ^uint32(0)}
	refused := 0
	for i := range 1500 {
		c := append([]byte(nil), enc...)
		for range 1 + rng.IntN(2) {
			at := checkpointHead + 4*rng.IntN((seqEnd-checkpointHead)/4)
			switch rng.IntN(3) {
			case 0:
				binary.LittleEndian.PutUint32(c[at:], values[rng.IntN(len(values))])
			case 1:
				c[at+rng.IntN(4)] ^= 1 << rng.IntN(8)
			default: // a bit of the open block's deletion bitmap
				c[seqEnd-1-rng.IntN(openDel)] ^= 1 << rng.IntN(8)
			}
		}
		reseal(c)
		y, _, err := Decode("hostile-v1", c)
		if checkHostile(t, i, y, err, rng) {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no damaged checkpoint was refused")
	}
}
