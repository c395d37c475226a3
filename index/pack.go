package index

import "encoding/binary"

// A block that can no longer grow is packed, in the first of these forms its
// offsets allow:
//
//   - stride: every entry lies the same distance after the one before it
//     (records of one size, nothing else between them in the segment):
//     the first offset and that distance, no array at all, so a lookup
//     touches no memory beyond the block itself.
//   - small: one uint32 anchor (the offset of the group's first entry) per
//     smallEvery entries, and one byte per entry: its distance from the
//     entry before it (0 for a group's first entry). An offset is its anchor
//     plus the sum of at most smallEvery-1 bytes, read as words: 1.125 bytes
//     per message while consecutive messages lie under 256 bytes apart.
//   - wide: one anchor per packEvery entries and a uint16 distance from the
//     anchor per entry: 2.25 bytes per message while a group spans under
//     64 KiB (records under about 4 KiB on average).
//
// Otherwise the block keeps one uint32 per entry.

// packEvery entries share an anchor in the wide form, smallEvery in the
// small form. smallEvery must be a multiple of 8: sumBytes reads a group's
// distances as 8-byte words.
const (
	packEvery  = 16
	smallEvery = 32
)

func (b *block) off(i int) uint32 {
	switch {
	case b.offs != nil:
		return b.offs[i]
	case b.rel8 != nil:
		g := i &^ (smallEvery - 1)
		return b.anch[i/smallEvery] + sumBytes(b.rel8[g:g+smallEvery], i-g)
	case b.rel != nil:
		return b.anch[i/packEvery] + uint32(b.rel[i])
	default:
		return b.first + uint32(i)*b.stride
	}
}

// sumBytes returns g[0] + ... + g[k], k < len(g) <= 32, for g a whole
// number of 8-byte words. Each word's bytes are added in pairs into four
// 16-bit lanes (at most 4 words x 510 per lane), then the lanes into the
// top 16 bits with one multiply (at most 8160: no carry out).
func sumBytes(g []byte, k int) uint32 {
	const pairs = 0x00ff00ff00ff00ff
	w := k >> 3 // the word holding byte k
	var lanes uint64
	for j := 0; j < w; j++ {
		x := binary.LittleEndian.Uint64(g[8*j:])
		lanes += x&pairs + (x>>8)&pairs
	}
	x := binary.LittleEndian.Uint64(g[8*w:]) & (^uint64(0) >> (56 - 8*(k&7)))
	lanes += x&pairs + (x>>8)&pairs
	return uint32((lanes * 0x0001000100010001) >> 48)
}

// pack converts a block that will not grow to a packed form, or trims its
// spare capacity if its offsets do not fit one.
func (b *block) pack() {
	if b.offs == nil {
		return
	}
	if b.packFrom(b.offs) {
		b.offs = nil
		return
	}
	if cap(b.offs) > len(b.offs) {
		b.offs = append([]uint32(nil), b.offs...)
	}
}

// packFrom sets the packed form of offs, which must ascend, and reports
// whether one fits. It leaves b untouched when none does.
func (b *block) packFrom(offs []uint32) bool {
	if first, stride, ok := packStride(offs); ok {
		b.first, b.stride = first, stride
		return true
	}
	if anch, rel8, ok := packSmall(offs); ok {
		b.anch, b.rel8 = anch, rel8
		return true
	}
	if anch, rel, ok := packWide(offs); ok {
		b.anch, b.rel = anch, rel
		return true
	}
	return false
}

func anchors(offs []uint32, every int) []uint32 {
	anch := make([]uint32, (len(offs)+every-1)/every)
	for i := range anch {
		anch[i] = offs[i*every]
	}
	return anch
}

// packStride finds the stride form's first offset and distance.
func packStride(offs []uint32) (first, stride uint32, ok bool) {
	if len(offs) == 0 {
		return 0, 0, false
	}
	if len(offs) > 1 {
		stride = offs[1] - offs[0]
		if offs[1] <= offs[0] {
			return 0, 0, false
		}
	}
	for i := 2; i < len(offs); i++ {
		if offs[i]-offs[i-1] != stride || offs[i] <= offs[i-1] {
			return 0, 0, false
		}
	}
	return offs[0], stride, true
}

// packSmall builds the one-byte form; rel8 is padded with zeros to whole
// groups so that sumBytes can read a full group.
func packSmall(offs []uint32) ([]uint32, []uint8, bool) {
	for i := 1; i < len(offs); i++ {
		if i%smallEvery != 0 && (offs[i] < offs[i-1] || offs[i]-offs[i-1] > 0xff) {
			return nil, nil, false
		}
	}
	anch := anchors(offs, smallEvery)
	rel8 := make([]uint8, len(anch)*smallEvery)
	for i := 1; i < len(offs); i++ {
		if i%smallEvery != 0 {
			rel8[i] = uint8(offs[i] - offs[i-1])
		}
	}
	return anch, rel8, true
}

// packWide builds the uint16 form.
func packWide(offs []uint32) ([]uint32, []uint16, bool) {
	anch := anchors(offs, packEvery)
	rel := make([]uint16, len(offs))
	for i, o := range offs {
		a := anch[i/packEvery]
		if o < a || o-a > 0xffff {
			return nil, nil, false
		}
		rel[i] = uint16(o - a)
	}
	return anch, rel, true
}
