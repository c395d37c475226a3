package index

import (
	"encoding/binary"
	"math"
	"sort"
)

const listBlock = 32 // most entries of a mark that keeps varints

// A list is a sequence of marks. A mark either keeps varints (at most
// listBlock entries: its first sequence, then n-1 uvarint deltas in buf) or
// is a run: n > 1 consecutive sequences seq, seq+1, ... seq+n-1 and no bytes
// in buf. A block of listBlock consecutive sequences drops its varints when
// it completes and becomes a run; a sequence that continues the last run
// extends it (up to 2^32-1 entries, then a new mark starts), so two runs
// continue each other only when the first is full. A
// subject that owns a stretch of the stream so costs one 16-byte mark per
// stretch, whatever its length.

type listMark struct {
	seq uint64 // first entry of the mark
	off uint32 // byte offset in buf of the mark's second entry
	n   uint32 // entries (a run: any number up to 2^32-1; else <= listBlock)
}

// seqList is an append-only, increasing list of sequences.
type seqList struct {
	buf   []byte
	marks []listMark
	n     int // entries in all marks
	last  uint64
}

func (l *seqList) add(seq uint64) {
	k := len(l.marks) - 1
	switch {
	case k < 0:
		l.marks = append(l.marks, listMark{seq: seq, off: uint32(len(l.buf)), n: 1})
	case l.run(k) && seq == l.last+1 && l.marks[k].n < math.MaxUint32:
		l.marks[k].n++
	case !l.run(k) && l.marks[k].n < listBlock:
		l.buf = binary.AppendUvarint(l.buf, seq-l.last)
		m := &l.marks[k]
		m.n++
		if m.n == listBlock && seq-m.seq == listBlock-1 && len(l.buf)-int(m.off) == listBlock-1 {
			// A run: all deltas were 1. It cannot continue a run before
			// it: a sequence continuing a run extends that run instead.
			l.buf = l.buf[:m.off]
		}
	default:
		l.marks = append(l.marks, listMark{seq: seq, off: uint32(len(l.buf)), n: 1})
	}
	l.last = seq
	l.n++
}

// entries is the number of entries in mark i.
func (l *seqList) entries(i int) int { return int(l.marks[i].n) }

// run reports whether mark i is a run of consecutive sequences stored
// without bytes.
func (l *seqList) run(i int) bool {
	return l.marks[i].n > 1 && l.blockEnd(i) == int(l.marks[i].off)
}

func (l *seqList) blockEnd(i int) int {
	if i+1 < len(l.marks) {
		return int(l.marks[i+1].off)
	}
	return len(l.buf)
}

// decodeBlock appends the entries of mark i, which is not a run, to dst.
func (l *seqList) decodeBlock(i int, dst []uint64) []uint64 {
	cur := l.marks[i].seq
	dst = append(dst, cur)
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
	k     int // entries of the current mark returned so far
}

// from returns an iterator positioned before the first entry >= s, or
// before an entry of the mark holding it (the caller filters). Inside a
// run it starts at s itself, so a long run is not walked.
func (l *seqList) from(s uint64) listIter {
	if l.n == 0 {
		return listIter{l: l}
	}
	i := sort.Search(len(l.marks), func(i int) bool { return l.marks[i].seq > s }) - 1
	if i < 0 {
		return listIter{l: l, block: 0, p: -1}
	}
	m := l.marks[i]
	if l.run(i) {
		if d := s - m.seq; d < uint64(m.n) && d > 0 {
			// Positioned as if m.seq..s-1 were returned.
			return listIter{l: l, block: i, p: int(m.off), cur: s - 1, k: int(d)}
		}
	}
	return listIter{l: l, block: i, p: -1}
}

// next returns the next entry (the caller filters entries below the start).
func (it *listIter) next() (uint64, bool) {
	l := it.l
	for it.block < len(l.marks) {
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
	}
	return 0, false
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
		if l.run(i) {
			m := l.marks[i]
			for q := min(s, m.seq+uint64(m.n)-1); ; q-- {
				if !fn(q) {
					return
				}
				if q == m.seq {
					break
				}
			}
			continue
		}
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
