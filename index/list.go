package index

import (
	"encoding/binary"
	"sort"
)

const listBlock = 32 // entries per mark

// A full block of consecutive sequences (seq, seq+1, ... seq+31) keeps no
// bytes in buf: its varints are dropped when it completes, and a block with
// more than one entry and no bytes is read as a run. A stream with one
// subject so costs its subject list only the marks.

type listMark struct {
	seq uint64 // first entry of the block
	off uint32 // byte offset in buf of the block's second entry
}

// seqList is an append-only, increasing list of sequences.
type seqList struct {
	buf   []byte
	marks []listMark
	n     int
	last  uint64
}

func (l *seqList) add(seq uint64) {
	if l.n%listBlock == 0 {
		l.marks = append(l.marks, listMark{seq: seq, off: uint32(len(l.buf))})
	} else {
		l.buf = binary.AppendUvarint(l.buf, seq-l.last)
	}
	l.last = seq
	l.n++
	if l.n%listBlock == 0 {
		m := l.marks[len(l.marks)-1]
		if seq-m.seq == listBlock-1 && len(l.buf)-int(m.off) == listBlock-1 {
			l.buf = l.buf[:m.off] // a run: all deltas were 1
		}
	}
}

// entries is the number of entries in block i.
func (l *seqList) entries(i int) int { return min(listBlock, l.n-i*listBlock) }

// run reports whether block i is a run of consecutive sequences stored
// without bytes.
func (l *seqList) run(i int) bool {
	return l.blockEnd(i) == int(l.marks[i].off) && l.entries(i) > 1
}

func (l *seqList) blockEnd(i int) int {
	if i+1 < len(l.marks) {
		return int(l.marks[i+1].off)
	}
	return len(l.buf)
}

// decodeBlock appends the entries of block i to dst.
func (l *seqList) decodeBlock(i int, dst []uint64) []uint64 {
	cur := l.marks[i].seq
	dst = append(dst, cur)
	if l.run(i) {
		for k := 1; k < l.entries(i); k++ {
			dst = append(dst, cur+uint64(k))
		}
		return dst
	}
	p, end := int(l.marks[i].off), l.blockEnd(i)
	for p < end {
		d, k := binary.Uvarint(l.buf[p:])
		if k <= 0 {
			break
		}
		p += k
		cur += d
		dst = append(dst, cur)
	}
	return dst
}

// listIter walks a list forward from a starting sequence.
type listIter struct {
	l     *seqList
	block int
	p     int
	cur   uint64
	k     int // entries of the current block returned so far
	first bool
}

// from returns an iterator positioned before the first entry >= s.
func (l *seqList) from(s uint64) listIter {
	if l.n == 0 {
		return listIter{l: l, block: 0, p: 0, first: false}
	}
	i := sort.Search(len(l.marks), func(i int) bool { return l.marks[i].seq > s }) - 1
	if i < 0 {
		i = 0
	}
	return listIter{l: l, block: i, p: -1}
}

// next returns the next entry >= s (the caller filters; from only positions
// at the right block).
func (it *listIter) next() (uint64, bool) {
	l := it.l
	if it.block >= len(l.marks) {
		return 0, false
	}
	if it.p < 0 {
		it.p = int(l.marks[it.block].off)
		it.cur = l.marks[it.block].seq
		it.k = 1
		return it.cur, true
	}
	if l.run(it.block) {
		if it.k < l.entries(it.block) {
			it.k++
			it.cur++
			return it.cur, true
		}
	} else if it.p < l.blockEnd(it.block) {
		d, k := binary.Uvarint(l.buf[it.p:])
		if k <= 0 {
			return 0, false
		}
		it.p += k
		it.cur += d
		return it.cur, true
	}
	it.block++
	it.p = -1
	return it.next()
}

// rev walks the list backward from the last entry <= s, calling fn until it
// returns false.
func (l *seqList) rev(s uint64, fn func(seq uint64) bool) {
	if l.n == 0 {
		return
	}
	i := sort.Search(len(l.marks), func(i int) bool { return l.marks[i].seq > s }) - 1
	var tmp [listBlock]uint64
	for ; i >= 0; i-- {
		ents := l.decodeBlock(i, tmp[:0])
		for j := len(ents) - 1; j >= 0; j-- {
			if ents[j] > s {
				continue
			}
			if !fn(ents[j]) {
				return
			}
		}
	}
}

func (l *seqList) memBytes() int {
	return cap(l.buf) + cap(l.marks)*16 + 48
}
