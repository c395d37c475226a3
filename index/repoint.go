package index

import (
	"bytes"
	"unsafe"
)

// Placement records where a checkpoint encoder wrote each packed block's
// arrays (anchors, then distances), so that once the checkpoint is durable
// the blocks can be read from a mapping of it instead of the heap.
type Placement struct {
	blocks []*block
	at     []int64
}

// Repoint makes the packed blocks that p placed read their arrays from b,
// a mapping of the checkpoint p describes, instead of where they are now
// (the heap, or the mapping of an older checkpoint). It first checks that
// b holds every one of them exactly; if any differs, or the machine cannot
// read them in place, it changes nothing and reports false. The caller
// holds the store's write lock: no reader is inside a block.
//
// After a true return no block refers to an older mapping (every packed
// block is encoded in every checkpoint), so the caller may unmap it.
func (x *Seqs) Repoint(p *Placement, b []byte) bool {
	if p == nil || !littleEndian {
		return false
	}
	for i, bl := range p.blocks {
		a, d, ok := bl.placed(b, p.at[i])
		if !ok || !bytes.Equal(a, u32Bytes(bl.anch)) || !bytes.Equal(d, bl.distBytes()) {
			return false
		}
	}
	for i, bl := range p.blocks {
		a, d, _ := bl.placed(b, p.at[i])
		bl.anch = unsafe.Slice((*uint32)(unsafe.Pointer(&a[0])), len(bl.anch))
		if bl.rel8 != nil {
			bl.rel8 = d[:len(d):len(d)]
		} else {
			bl.rel = unsafe.Slice((*uint16)(unsafe.Pointer(&d[0])), len(bl.rel))
		}
		bl.mapped = true
	}
	return true
}

// placed returns the bytes of b holding the block's anchors and distances
// if it was written at offset at.
func (bl *block) placed(b []byte, at int64) (anch, dist []byte, ok bool) {
	na := 4 * len(bl.anch)
	nd := len(bl.rel8)
	if bl.rel8 == nil {
		nd = 2 * len(bl.rel)
	}
	if na == 0 || nd == 0 || at < 0 || at+int64(na+nd) > int64(len(b)) {
		return nil, nil, false
	}
	anch, dist = b[at:at+int64(na)], b[at+int64(na):at+int64(na+nd)]
	return anch, dist, aligned(anch, 4) && aligned(dist, 2)
}

// distBytes views the block's distances as their little-endian bytes.
func (bl *block) distBytes() []byte {
	if bl.rel8 != nil {
		return bl.rel8
	}
	if len(bl.rel) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&bl.rel[0])), 2*len(bl.rel))
}

func u32Bytes(v []uint32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}
