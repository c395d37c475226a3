package index

import (
	"bytes"
	"unsafe"
)

// Placement records where a checkpoint encoder wrote each packed block's
// arrays (anchors, then distances), so that once the checkpoint is durable
// the blocks can be read from a mapping of it instead of the heap. It keeps
// the arrays it saw, which never change once a block is packed (pack.go
// makes new ones; Move swaps them for others): Check reads them, not the
// blocks, and so needs no lock.
type Placement struct {
	blocks []*block
	at     []int64
	anch   [][]byte // each block's anchors as encoded
	dist   [][]byte // and its distances
}

// add records that the encoder wrote bl's arrays at offset at.
func (p *Placement) add(bl *block, at int64) {
	p.blocks = append(p.blocks, bl)
	p.at = append(p.at, at)
	p.anch = append(p.anch, u32Bytes(bl.anch))
	p.dist = append(p.dist, bl.distBytes())
}

// Check reports whether b, a mapping of the checkpoint p describes, holds
// every placed block's arrays exactly where p says, aligned so that they
// can be read in place. It reads b and the arrays p kept, never the blocks,
// so the caller may run it without the store's lock: reading a mapping
// just written faults its pages in, which for a large index takes
// milliseconds that readers and appenders need not wait.
func (p *Placement) Check(b []byte) bool {
	if p == nil || !littleEndian {
		return false
	}
	for i := range p.blocks {
		a, d, ok := placed(b, p.at[i], len(p.anch[i]), len(p.dist[i]))
		if !ok || !bytes.Equal(a, p.anch[i]) || !bytes.Equal(d, p.dist[i]) {
			return false
		}
	}
	return true
}

// Move makes the packed blocks that p placed read their arrays from b,
// which Check accepted, instead of where they are now (the heap, or the
// mapping of an older checkpoint). A block whose arrays are no longer the
// ones encoded (none should be: only Move changes packed arrays) makes it
// change nothing and report false. The caller holds the store's write
// lock: no reader is inside a block.
//
// After a true return no block refers to an older mapping (every packed
// block is encoded in every checkpoint), so the caller may unmap it.
func (x *Seqs) Move(p *Placement, b []byte) bool {
	if p == nil || !littleEndian {
		return false
	}
	for i, bl := range p.blocks {
		if !same(u32Bytes(bl.anch), p.anch[i]) || !same(bl.distBytes(), p.dist[i]) {
			return false
		}
	}
	for i, bl := range p.blocks {
		a, d, _ := placed(b, p.at[i], len(p.anch[i]), len(p.dist[i]))
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

// Repoint is Check then Move, for a caller that holds the write lock
// throughout.
func (x *Seqs) Repoint(p *Placement, b []byte) bool { return p.Check(b) && x.Move(p, b) }

// same reports whether a and b are the same bytes in memory, not only
// equal ones.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// placed returns the bytes of b holding a block's na bytes of anchors and
// nd bytes of distances if they were written at offset at.
func placed(b []byte, at int64, na, nd int) (anch, dist []byte, ok bool) {
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
