package index

import (
	"math/bits"
	"sort"
)

// SegID names a segment within one store. Package wal assigns them.
type SegID uint32

// Loc is where a message's record starts.
type Loc struct {
	Seg SegID
	Off uint32
}

// A block is open while it can grow: offs holds one uint32 per entry. When a
// newer block starts, the block is packed if its offsets allow it (see
// pack.go). A block whose records are too large to pack keeps offs.
type block struct {
	seg  SegID
	base uint64
	n    int      // entries
	offs []uint32 // open or unpackable form; nil when packed
	anch []uint32 // packed: the offset of each group's first entry
	rel8 []uint8  // packed small: each entry's distance from the entry before
	rel  []uint16 // packed: each entry's offset minus its anchor
	// packed stride form (no arrays): entry i's offset is first+i*stride
	first, stride uint32
	del           []uint64 // deletion bitmap; nil until the first delete
	ndel          int
	// lo: every entry below it is deleted, so nextLive starts there
	// (markDeleted moves it past a deleted front; 0 is always true).
	lo int
	// mapped: anch and rel8 or rel point into a mapped checkpoint
	// (blockcodec.go), not the heap. They are never written.
	mapped bool
}

func (b *block) end() uint64 { return b.base + uint64(b.n) } // one past the last

func (b *block) deleted(i int) bool {
	return i>>6 < len(b.del) && b.del[i>>6]&(1<<(uint(i)&63)) != 0
}

func (b *block) markDeleted(i int) bool {
	if b.deleted(i) {
		return false
	}
	if b.del == nil {
		size := b.n
		if b.offs != nil {
			size = cap(b.offs)
		}
		b.del = make([]uint64, (size+63)/64)
	}
	for i>>6 >= len(b.del) {
		b.del = append(b.del, 0)
	}
	b.del[i>>6] |= 1 << (uint(i) & 63)
	b.ndel++
	if i == b.lo {
		b.lo = b.nextLive(i + 1)
	}
	return true
}

func (b *block) live() int { return b.n - b.ndel }

// nextLive returns the first live entry at or after i (0 <= i), or b.n if
// none. A stream at its limit deletes from the front, and finding its
// first message walked every deleted entry of the head block, one bit at a
// time; now it starts at lo and reads the bitmap a word at a time.
func (b *block) nextLive(i int) int {
	if b.ndel == 0 {
		return min(i, b.n)
	}
	for i = max(i, b.lo); i < b.n; {
		w := i >> 6
		if w >= len(b.del) {
			return i // past the bitmap: nothing there was deleted
		}
		if live := ^b.del[w] >> (uint(i) & 63); live != 0 {
			return min(i+bits.TrailingZeros64(live), b.n)
		}
		i = (w + 1) << 6
	}
	return b.n
}

// prevLive returns the last live entry at or before i (i < b.n), or -1 if
// none, a bitmap word at a time.
func (b *block) prevLive(i int) int {
	if b.ndel == 0 {
		return i
	}
	for i >= 0 {
		w := i >> 6
		if w >= len(b.del) {
			return i
		}
		if live := ^b.del[w] << (63 - uint(i)&63); live != 0 {
			return i - bits.LeadingZeros64(live)
		}
		i = w<<6 - 1
	}
	return -1
}

// countLive counts live entries with index >= i.
func (b *block) countLive(i int) int {
	if i >= b.n {
		return 0
	}
	n := b.n - i
	if b.ndel == 0 {
		return n
	}
	dead := 0
	for j := i; j < b.n; {
		if j&63 == 0 && j+64 <= b.n {
			if j>>6 < len(b.del) {
				dead += bits.OnesCount64(b.del[j>>6])
			}
			j += 64
			continue
		}
		if b.deleted(j) {
			dead++
		}
		j++
	}
	return n - dead
}

// Seqs maps sequences to locations. It is not safe for concurrent mutation;
// the store's lock guards it.
type Seqs struct {
	blocks []*block
	live   int
	dels   uint64 // sequences Delete deleted (Deletions)
}

// maxBlock bounds a block's length: appends then never copy a slice longer
// than this when it grows, and dead blocks at the head are freed in small
// steps. A segment's messages may span several blocks.
const maxBlock = 8192

// Add records seq at loc. seq must be greater than every sequence added
// before.
func (x *Seqs) Add(seq uint64, loc Loc) {
	if n := len(x.blocks); n > 0 {
		b := x.blocks[n-1]
		if b.offs != nil && b.seg == loc.Seg && b.end() == seq && b.n < maxBlock {
			b.offs = append(b.offs, loc.Off)
			b.n++
			x.live++
			return
		}
	}
	if n := len(x.blocks); n > 0 {
		x.blocks[n-1].pack()
	}
	x.blocks = append(x.blocks, &block{seg: loc.Seg, base: seq, n: 1, offs: append(make([]uint32, 0, 1024), loc.Off)})
	x.live++
}

// find returns the block holding seq and its index in it; when no block
// holds seq, the index of the first block after it (len(blocks) if none).
//
// Blocks fill to maxBlock consecutive sequences before the next starts, so
// the block holding seq is usually (seq - first base) / maxBlock. A segment
// roll leaves a short block (the guess then falls a little short) and a
// compaction jump or DropDead leaves a gap (the guess may overshoot), so a
// wrong guess is corrected by a few steps either way, then by a binary
// search of the side it lies on. Every path checks the block it returns.
func (x *Seqs) find(seq uint64) (int, int, bool) {
	bs := x.blocks
	lo, hi := 0, len(bs) // the answer is the first block in [lo, hi] ending after seq
	if len(bs) == 0 || seq < bs[0].base {
		return 0, 0, false
	}
	g := (seq - bs[0].base) / maxBlock
	if g >= uint64(len(bs)) {
		g = uint64(len(bs) - 1)
	}
	i := int(g)
	for step := 0; step < guessSteps; step++ {
		b := bs[i]
		switch {
		case seq >= b.end():
			lo = i + 1
			if lo == hi {
				return hi, 0, false
			}
			i = lo
		case seq < b.base:
			hi = i
			if i == lo {
				return i, 0, false
			}
			i--
		default:
			return i, int(seq - b.base), true
		}
	}
	bi := lo + searchEnd(bs[lo:hi], seq)
	if bi == len(bs) || bs[bi].base > seq {
		return bi, 0, false
	}
	return bi, int(seq - bs[bi].base), true
}

// guessSteps bounds the blocks find visits one by one before it searches.
const guessSteps = 4

// searchEnd returns the first of bs that ends after seq, or len(bs). (A
// loop rather than sort.Search: the closure costs a call per step.)
func searchEnd(bs []*block, seq uint64) int {
	lo, hi := 0, len(bs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bs[m].end() > seq {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// Lookup returns the location of a live sequence.
func (x *Seqs) Lookup(seq uint64) (Loc, bool) {
	bi, i, ok := x.find(seq)
	if !ok {
		return Loc{}, false
	}
	b := x.blocks[bi]
	if b.deleted(i) {
		return Loc{}, false
	}
	return Loc{Seg: b.seg, Off: b.off(i)}, true
}

// LookupSpan is Lookup that also bounds the record's length where it can
// without another search: end is the offset of the entry after seq in the
// same block (live or deleted, its record follows seq's in the segment),
// and hasEnd is false for a block's last entry.
func (x *Seqs) LookupSpan(seq uint64) (loc Loc, end uint32, hasEnd, ok bool) {
	bi, i, ok := x.find(seq)
	if !ok {
		return Loc{}, 0, false, false
	}
	b := x.blocks[bi]
	if b.deleted(i) {
		return Loc{}, 0, false, false
	}
	loc = Loc{Seg: b.seg, Off: b.off(i)}
	if i+1 < b.n {
		return loc, b.off(i + 1), true, true
	}
	return loc, 0, false, true
}

// Live reports whether seq is stored and not deleted.
func (x *Seqs) Live(seq uint64) bool {
	_, ok := x.Lookup(seq)
	return ok
}

// Delete marks seq deleted. It reports whether it was live.
func (x *Seqs) Delete(seq uint64) bool {
	bi, i, ok := x.find(seq)
	if !ok {
		return false
	}
	if x.blocks[bi].markDeleted(i) {
		x.live--
		x.dels++
		return true
	}
	return false
}

// Deletions counts the sequences Delete has deleted: a reader that kept a
// count over the index can tell whether anything left it since.
func (x *Seqs) Deletions() uint64 { return x.dels }

// Len is the number of live sequences.
func (x *Seqs) Len() int { return x.live }

// First returns the lowest live sequence.
func (x *Seqs) First() (uint64, bool) { return x.Next(0) }

// Last returns the highest live sequence.
func (x *Seqs) Last() (uint64, bool) { return x.Prev(^uint64(0)) }

// Next returns the lowest live sequence >= seq.
func (x *Seqs) Next(seq uint64) (uint64, bool) {
	bi := sort.Search(len(x.blocks), func(i int) bool { return x.blocks[i].end() > seq })
	for ; bi < len(x.blocks); bi++ {
		b := x.blocks[bi]
		if b.live() == 0 {
			continue
		}
		i := 0
		if seq > b.base {
			i = int(seq - b.base)
		}
		if i = b.nextLive(i); i < b.n {
			return b.base + uint64(i), true
		}
	}
	return 0, false
}

// Prev returns the highest live sequence <= seq.
func (x *Seqs) Prev(seq uint64) (uint64, bool) {
	bi := sort.Search(len(x.blocks), func(i int) bool { return x.blocks[i].base > seq }) - 1
	for ; bi >= 0; bi-- {
		b := x.blocks[bi]
		if b.live() == 0 {
			continue
		}
		i := b.n - 1
		if seq < b.end()-1 {
			i = int(seq - b.base)
		}
		if i = b.prevLive(i); i >= 0 {
			return b.base + uint64(i), true
		}
	}
	return 0, false
}

// CountFrom counts live sequences >= seq.
func (x *Seqs) CountFrom(seq uint64) int {
	bi := sort.Search(len(x.blocks), func(i int) bool { return x.blocks[i].end() > seq })
	n := 0
	for ; bi < len(x.blocks); bi++ {
		b := x.blocks[bi]
		if seq > b.base {
			n += b.countLive(int(seq - b.base))
		} else {
			n += b.live()
		}
	}
	return n
}

// Deleted calls fn for every deleted sequence between the first and last
// live ones, in order, until fn returns false. (A gap between blocks can
// be of any length: a caller that wants a bounded list stops early.)
func (x *Seqs) Deleted(fn func(seq uint64) bool) {
	first, ok := x.First()
	if !ok {
		return
	}
	last, _ := x.Last()
	prevEnd := first
	for _, b := range x.blocks {
		if b.end() <= first || b.base > last {
			continue
		}
		for s := max(prevEnd, first); s < b.base && s < last; s++ {
			if !fn(s) { // gap between blocks (a compacted jump)
				return
			}
		}
		for i := range b.n {
			s := b.base + uint64(i)
			if s > first && s < last && b.deleted(i) && !fn(s) {
				return
			}
		}
		prevEnd = b.end()
	}
}

// DropDead removes blocks without live entries (except the newest, which
// appends extend) and returns the segments no remaining block refers to.
func (x *Seqs) DropDead() []SegID {
	keep := x.blocks[:0]
	var dropped []SegID
	for _, b := range x.blocks {
		if b.live() == 0 && b != x.blocks[len(x.blocks)-1] {
			dropped = append(dropped, b.seg)
			continue
		}
		keep = append(keep, b)
	}
	for i := len(keep); i < len(x.blocks); i++ {
		x.blocks[i] = nil
	}
	x.blocks = keep
	// A segment is free only if no remaining block uses it.
	out := dropped[:0]
	for _, s := range dropped {
		used := false
		for _, b := range x.blocks {
			if b.seg == s {
				used = true
				break
			}
		}
		if !used && (len(out) == 0 || out[len(out)-1] != s) {
			out = append(out, s)
		}
	}
	return out
}

// SegLive reports the live count of each segment, for deciding which
// segments can be removed.
func (x *Seqs) SegLive(seg SegID) int {
	n := 0
	for _, b := range x.blocks {
		if b.seg == seg {
			n += b.live()
		}
	}
	return n
}

// MemBytes estimates the heap the index uses.
func (x *Seqs) MemBytes() int {
	n := cap(x.blocks) * 8
	for _, b := range x.blocks {
		n += 160 + cap(b.offs)*4 + cap(b.del)*8
		if !b.mapped {
			n += cap(b.anch)*4 + cap(b.rel8) + cap(b.rel)*2
		}
	}
	return n
}

// HasSeg reports whether any block points into seg.
func (x *Seqs) HasSeg(seg SegID) bool {
	for _, b := range x.blocks {
		if b.seg == seg {
			return true
		}
	}
	return false
}

// RemapSegs rewrites segment ids (after a restart renumbers segments). It
// reports false if fn does not know an id.
func (x *Seqs) RemapSegs(fn func(SegID) (SegID, bool)) bool {
	for _, b := range x.blocks {
		id, ok := fn(b.seg)
		if !ok {
			return false
		}
		b.seg = id
	}
	return true
}

// EachInSeg calls fn for every live sequence stored in seg.
func (x *Seqs) EachInSeg(seg SegID, fn func(seq uint64, off uint32)) {
	for _, b := range x.blocks {
		if b.seg != seg {
			continue
		}
		for i := range b.n {
			if !b.deleted(i) {
				fn(b.base+uint64(i), b.off(i))
			}
		}
	}
}
