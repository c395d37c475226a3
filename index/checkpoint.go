package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/store"
)

// Checkpoint format constants (part of the on-disk format).
const (
	CheckpointMagic   = "JWIX"
	CheckpointVersion = 3 // 1 and 2 still decode
	checkpointHead    = 16
)

// ErrCorrupt is the engine's corruption sentinel.
var ErrCorrupt = store.ErrCorrupt

// Encode serialises the index with an opaque trailer owned by the store.
func Encode(x *Index, trailer []byte) []byte {
	b := bytes.NewBuffer(make([]byte, 0, encodedSize(x, trailer, false)))
	EncodeTo(b, x, trailer) // a bytes.Buffer does not fail
	return b.Bytes()
}

// encodedSize is the exact length of Encode's result, so that Encode fills
// one buffer instead of regrowing one as large as the index (4 bytes per
// message) several times.
func encodedSize(x *Index, trailer []byte, sealed bool) int {
	n := checkpointHead + 4
	for _, bl := range x.Seqs.blocks {
		n += bl.blockSize() // blockcodec.go
	}
	if sealed {
		n += sealedSectionSize(x.Subj.encodedSize()) // sealsubj.go
	} else {
		n += x.Subj.encodedSize() // subjcodec.go
	}
	return n + 4 + len(trailer) + 8
}

type reader struct {
	b       []byte
	p       int
	err     error
	inPlace int // arrays read in place (alias.go)
}

var errShort = errors.New("truncated")

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || r.p+n > len(r.b) {
		r.err = errShort
		return nil
	}
	v := r.b[r.p : r.p+n]
	r.p += n
	return v
}
func (r *reader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}
func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}
func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// count reads a length and checks that at least n*unit bytes remain, so a
// damaged count cannot make Decode allocate wildly. The product is taken
// in 64 bits, so that it cannot wrap where int is 32.
func (r *reader) count(unit int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(unit) > uint64(len(r.b)-r.p) {
		r.err = fmt.Errorf("count %d exceeds remaining %d bytes", n, len(r.b)-r.p)
		return 0
	}
	return int(n)
}

// Decode parses a checkpoint. Any damage yields an error wrapping ErrCorrupt.
// The index copies what it keeps from b.
func Decode(file string, b []byte) (*Index, []byte, error) { return decode(file, b, false, nil) }

// DecodeOpen is Decode for an encrypted store's checkpoint: its subject
// section must be sealed and open with o (sealsubj.go). A nil o checks
// the structure only: a sealed section is skipped, its subjects left out.
func DecodeOpen(file string, b []byte, o Opener) (*Index, []byte, error) {
	return decode(file, b, false, o)
}

// DecodeInPlaceOpen is DecodeInPlace with DecodeOpen's opener.
func DecodeInPlaceOpen(file string, b []byte, o Opener) (*Index, []byte, error) {
	return decode(file, b, true, o)
}

// DecodeInPlace is Decode for a checkpoint whose bytes stay mapped and
// unchanged for as long as the returned index lives: packed blocks of the
// sequence index refer to b instead of copying it (blockcodec.go), so they
// cost page cache, not heap, and only what readers touch is resident.
func DecodeInPlace(file string, b []byte) (*Index, []byte, error) { return decode(file, b, true, nil) }

func decode(file string, b []byte, alias bool, o Opener) (*Index, []byte, error) {
	bad := func(off int, why string) error {
		return fmt.Errorf("index checkpoint %s: offset %d: %s: %w", file, off, why, ErrCorrupt)
	}
	if len(b) < checkpointHead+8 || string(b[:4]) != CheckpointMagic {
		return nil, nil, bad(0, "bad magic or too short")
	}
	version := b[4]
	if version < 1 || version > CheckpointVersion {
		return nil, nil, bad(4, fmt.Sprintf("unsupported version %d", b[4]))
	}
	body := binary.LittleEndian.Uint64(b[8:])
	if body != uint64(len(b)-checkpointHead-8) {
		return nil, nil, bad(8, fmt.Sprintf("body length %d does not match file size %d", body, len(b)))
	}
	end := len(b) - 8
	if want, got := binary.LittleEndian.Uint64(b[end:]), xxhash.Sum64(b[:end]); want != got {
		return nil, nil, fmt.Errorf("index checkpoint %s: offset %d: checksum mismatch (stored %016x, computed %016x): %w", file, end, want, got, ErrCorrupt)
	}
	r := &reader{b: b[:end], p: checkpointHead}
	x := New()
	nb := r.count(20)
	var prevEnd uint64
	var scratch []uint32
	for i := 0; i < nb && r.err == nil; i++ {
		at := r.p
		var bl *block
		if version == 1 {
			bl, scratch = r.decodeBlockV1(i == nb-1, scratch)
		} else {
			var err error
			if bl, err = r.decodeBlock(version, i == nb-1, alias); err != nil {
				return nil, nil, bad(at, err.Error())
			}
		}
		if r.err != nil {
			break
		}
		// A version 1 block is held to what decodeBlock checks. Version 1
		// did not bound a block's length (jetwal before the cap wrote a
		// segment's messages as one block): such a block would be written
		// again in the current version and refused at the next restart, so
		// it is refused now (the segments are scanned once and the index
		// rebuilt in blocks of maxBlock). A deletion bit past the block
		// would mark an entry appended later deleted while Len counts it.
		if version == 1 && bl.n > maxBlock {
			return nil, nil, bad(at, fmt.Sprintf("block of %d entries, more than %d", bl.n, maxBlock))
		}
		if version == 1 && bitsSet(bl.del) != bl.ndel {
			return nil, nil, bad(at, "deletion bitmap marks entries past the block")
		}
		// A block whose end wraps past 2^64 would let the next start below
		// it: the searches assume blocks in order and would index a block
		// at seq minus a base far above it.
		if bl.end() < bl.base {
			return nil, nil, bad(at, fmt.Sprintf("block at %d of %d entries passes 2^64", bl.base, bl.n))
		}
		if bl.base < prevEnd {
			return nil, nil, bad(at, "blocks out of order")
		}
		prevEnd = bl.end()
		x.Seqs.blocks = append(x.Seqs.blocks, bl)
		x.Seqs.live += bl.live()
	}
	switch sealed := b[5]&flagSealedSubjects != 0; {
	case sealed:
		if err := x.Subj.decodeSealed(r, o); err != nil { // sealsubj.go
			return nil, nil, bad(r.p, err.Error())
		}
	case o != nil:
		// An encrypted store writes its subjects sealed: a clear section
		// here was not written by it.
		return nil, nil, bad(5, "subject section not sealed in an encrypted store's checkpoint")
	default:
		if err := x.Subj.decode(r, b[4]); err != nil { // subjcodec.go
			return nil, nil, bad(r.p, err.Error())
		}
	}
	trailer := append([]byte(nil), r.take(r.count(1))...)
	if r.err != nil {
		return nil, nil, bad(r.p, r.err.Error())
	}
	if r.p != end {
		return nil, nil, bad(r.p, "trailing bytes")
	}
	return x, trailer, nil
}

// decodeBlockV1 reads a block of a version 1 checkpoint: one uint32 offset
// per entry, packed here as pack would have (the newest block stays open).
func (r *reader) decodeBlockV1(last bool, scratch []uint32) (*block, []uint32) {
	bl := &block{seg: SegID(r.u32()), base: r.u64()}
	n := r.count(4)
	bl.n = n
	scratch = scratch[:0]
	for range n {
		scratch = append(scratch, r.u32())
	}
	if last {
		bl.offs = append(make([]uint32, 0, max(n, 1024)), scratch...)
	} else if !bl.packFrom(scratch) {
		bl.offs = append([]uint32(nil), scratch...)
	}
	r.deletions(bl) // blockcodec.go
	if r.err == nil && n == 0 {
		r.err = errBlock("empty block")
	}
	return bl, scratch
}
