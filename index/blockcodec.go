package index

import (
	"fmt"
	"math/bits"
)

// The sequence section of a checkpoint (doc.go draws the versions).
//
// Version 1 wrote every block as one uint32 offset per entry, whatever its
// form in memory: 4 bytes per message on disk, and a restart packed every
// block again. Version 2 writes each block in its in-memory form, so a
// checkpoint costs what the index costs (1.125 bytes per message for small
// records), a restart does not repack, and a packed block can be read in
// place from a mapped checkpoint (alias.go): its offsets then stay in the
// page cache instead of the heap, and only the blocks a reader touches
// become resident. Version 3 adds the stride form (pack.go), which has no
// array at all; an older jetwal refuses a version 3 checkpoint and
// rebuilds its index from the segments.

// Block forms in a version 2 or 3 checkpoint.
const (
	formOffsets = 0 // n uint32 offsets
	formSmall   = 1 // ceil(n/32) uint32 anchors, 32 bytes of distances per anchor
	formWide    = 2 // ceil(n/16) uint32 anchors, n uint16 distances, padded to 4 bytes
	formStride  = 3 // uint32 first offset, uint32 distance between entries (version 3)
)

// form reports how a block is written, and the lengths of its arrays.
func (b *block) form() int {
	switch {
	case b.offs != nil:
		return formOffsets
	case b.rel8 != nil:
		return formSmall
	case b.rel != nil:
		return formWide
	default:
		return formStride
	}
}

// blockSize is the length of a block in a version 2 or 3 checkpoint. Every
// block's length is a multiple of 4, so its uint32 arrays stay 4-byte
// aligned within the checkpoint.
func (b *block) blockSize() int {
	n := 4 + 8 + 4 + 4 // seg, base, n, form
	switch b.form() {
	case formOffsets:
		n += 4 * b.n
	case formSmall:
		n += 4*len(b.anch) + len(b.rel8)
	case formWide:
		n += 4*len(b.anch) + roundUp4(2*len(b.rel))
	case formStride:
		n += 8
	}
	return n + 4 + 8*len(b.del)
}

func roundUp4(n int) int { return (n + 3) &^ 3 }

func (e *encoder) block(b *block) {
	e.u32(uint32(b.seg))
	e.u64(b.base)
	e.u32(uint32(b.n))
	f := b.form()
	e.u32(uint32(f))
	if (f == formSmall || f == formWide) && e.place != nil {
		e.place.add(b, e.at())
	}
	switch f {
	case formOffsets:
		for i := range b.n {
			e.u32(b.offs[i])
		}
	case formSmall:
		for _, a := range b.anch {
			e.u32(a)
		}
		e.bytes(b.rel8)
	case formWide:
		for _, a := range b.anch {
			e.u32(a)
		}
		for _, d := range b.rel {
			e.u16(d)
		}
		if len(b.rel)%2 == 1 {
			e.u16(0)
		}
	case formStride:
		e.u32(b.first)
		e.u32(b.stride)
	}
	e.u32(uint32(len(b.del)))
	for _, w := range b.del {
		e.u64(w)
	}
}

// decodeBlock reads one version 2 or 3 block. With alias set, a packed block's
// arrays point into r's bytes, which the caller keeps mapped and unchanged
// for as long as the index lives; the open (last) block is always copied,
// since appends extend it.
func (r *reader) decodeBlock(version byte, last, alias bool) (*block, error) {
	b := &block{seg: SegID(r.u32()), base: r.u64()}
	// Not r.count: a stride block holds up to maxBlock entries in 8 bytes,
	// so n cannot be checked against the bytes left; maxBlock bounds it.
	b.n = int(r.u32())
	f := r.u32()
	if r.err != nil {
		return nil, nil
	}
	if b.n == 0 {
		return nil, errBlock("empty block")
	}
	if b.n > maxBlock {
		return nil, errBlock(fmt.Sprintf("block of %d entries, more than %d", b.n, maxBlock))
	}
	switch f {
	case formOffsets:
		raw := r.take(4 * b.n)
		if r.err != nil {
			return nil, nil
		}
		if last {
			b.offs = make([]uint32, b.n, max(b.n, 1024))
		} else {
			b.offs = make([]uint32, b.n)
		}
		copyU32s(b.offs, raw)
	case formSmall, formWide:
		if last {
			return nil, errBlock("the newest block is packed")
		}
		before := r.inPlace
		every := smallEvery
		if f == formWide {
			every = packEvery
		}
		na := (b.n + every - 1) / every
		b.anch = r.u32s(na, alias)
		if f == formSmall {
			b.rel8 = r.bytesAt(na*smallEvery, alias)
		} else {
			b.rel = r.u16s(b.n, alias)
			if b.n%2 == 1 {
				r.take(2)
			}
		}
		if r.err != nil {
			return nil, nil
		}
		if err := b.checkPacked(); err != nil {
			return nil, err
		}
		b.mapped = r.inPlace != before
	case formStride:
		if version < 3 {
			return nil, errBlock("stride block in a version 2 checkpoint")
		}
		if last {
			return nil, errBlock("the newest block is packed")
		}
		b.first, b.stride = r.u32(), r.u32()
		if r.err != nil {
			return nil, nil
		}
		if (b.n > 1 && b.stride == 0) || uint64(b.first)+uint64(b.n-1)*uint64(b.stride) > 1<<32-1 {
			return nil, errBlock("stride block's offsets do not ascend within 32 bits")
		}
	default:
		return nil, errBlock("unknown block form")
	}
	r.deletions(b)
	// (An open block's bitmap covers its capacity, so it may be longer
	// than n entries; no bit past them may be set.)
	if bitsSet(b.del) != b.ndel {
		return nil, errBlock("deletion bitmap marks entries past the block")
	}
	return b, nil
}

// deletions reads a block's deletion bitmap (both versions) and counts
// its deleted entries.
func (r *reader) deletions(b *block) {
	nw := r.count(8)
	if nw == 0 {
		return
	}
	b.del = make([]uint64, nw)
	for j := range b.del {
		b.del[j] = r.u64()
	}
	for j := range b.n {
		if b.deleted(j) {
			b.ndel++
		}
	}
	b.lo = b.nextLive(0) // past a deleted front, as markDeleted keeps it
}

// checkPacked rejects a packed block whose distances could not have come
// from pack: a damaged but checksummed checkpoint must not produce
// offsets out of order.
func (b *block) checkPacked() error {
	if b.rel8 != nil {
		for g := 0; g < len(b.anch); g++ {
			if b.rel8[g*smallEvery] != 0 {
				return errBlock("packed group does not start at its anchor")
			}
		}
		return nil
	}
	for g := 0; g < len(b.anch); g++ {
		if b.rel[g*packEvery] != 0 {
			return errBlock("packed group does not start at its anchor")
		}
	}
	return nil
}

func bitsSet(ws []uint64) int {
	n := 0
	for _, w := range ws {
		n += bits.OnesCount64(w)
	}
	return n
}

type errBlock string

func (e errBlock) Error() string { return string(e) }
