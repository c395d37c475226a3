package index

import (
	"github.com/cespare/xxhash/v2"
)

// The subject table: fixed-size entries in chunks, an open-addressing hash
// table of uint32 entry ids keyed by a 64-bit hash of the name, and the
// names' bytes in an arena of pages. See doc.go for the costs.

// entry is one subject's summary. Entries live in chunks and are named by
// id; a pointer to one is valid only until the next entry is created (the
// first chunk grows by append).
type entry struct {
	first, last uint64
	name        uint64 // nameRef: page, offset in page and length; freeName if unused
	msgs        uint32 // low 32 bits of the message count (Subjects.over holds the rest)
	list        uint32 // 1 + id of the sequence list, 0 for none (subjects of <= 2 messages)
}

// freeName marks an unused entry; its first field then links the free list.
const freeName = ^uint64(0)

const (
	chunkShift = 10
	chunkLen   = 1 << chunkShift

	pageSize = 64 << 10 // arena page; a longer name gets a page of its own
	pageBits = 24       // nameRef: page(24) | offset(16) | length(24)
	lenBits  = 24
	offBits  = 16
	// maxName is the longest subject the table stores whole (16 MiB).
	maxName = 1<<lenBits - 1
)

// chunks is a slice of T grown a chunk at a time, so growth never copies
// more than one chunk (the first, which grows by append from small).
type chunks[T any] struct {
	c [][]T
	n int
}

func (c *chunks[T]) at(i uint32) *T { return &c.c[i>>chunkShift][i&(chunkLen-1)] }

// grow appends a zero T and returns its index.
func (c *chunks[T]) grow() uint32 {
	var zero T
	last := len(c.c) - 1
	switch {
	case last < 0:
		c.c = append(c.c, make([]T, 0, 8))
		last = 0
	case len(c.c[last]) == chunkLen:
		c.c = append(c.c, make([]T, 0, chunkLen))
		last++
	}
	c.c[last] = append(c.c[last], zero)
	c.n++
	return uint32(c.n - 1)
}

// capBytes is the heap the chunks hold, given the size of one T.
func (c *chunks[T]) capBytes(size int) int {
	n := cap(c.c) * 24
	for _, ch := range c.c {
		n += cap(ch) * size
	}
	return n
}

// arena holds subject names back to back in pages. Bytes are never changed
// once written; deleted names are garbage until compact.
type arena struct {
	pages   [][]byte
	live    int // bytes of names in use
	garbage int // bytes of deleted names and page tails left unused
}

func nameRef(page, off, n int) uint64 {
	return uint64(page)<<(offBits+lenBits) | uint64(off)<<lenBits | uint64(n)
}

func refLen(ref uint64) int { return int(ref & (1<<lenBits - 1)) }

func (a *arena) get(ref uint64) []byte {
	p := ref >> (offBits + lenBits)
	off := int(ref>>lenBits) & (1<<offBits - 1)
	return a.pages[p][off : off+refLen(ref)]
}

// room returns the page to append n bytes to, opening a new one if needed.
// No page but one holding a single long name passes pageSize, so offsets
// fit 16 bits.
func (a *arena) room(n int) int {
	last := len(a.pages) - 1
	if last >= 0 && len(a.pages[last])+n <= pageSize {
		if p := a.pages[last]; len(p)+n > cap(p) { // the first page grows to pageSize
			a.pages[last] = append(make([]byte, 0, min(pageSize, max(2*cap(p), len(p)+n))), p...)
		}
		return last
	}
	if last >= 0 {
		a.garbage += max(0, pageSize-len(a.pages[last]))
	}
	switch {
	case n > pageSize:
		a.pages = append(a.pages, make([]byte, 0, n))
	case last < 0:
		a.pages = append(a.pages, make([]byte, 0, max(n, 256)))
	default:
		a.pages = append(a.pages, make([]byte, 0, pageSize))
	}
	return len(a.pages) - 1
}

// putName copies a name into the arena and returns its reference.
func putName[T string | []byte](a *arena, name T) uint64 {
	p := a.room(len(name))
	off := len(a.pages[p])
	a.pages[p] = append(a.pages[p], name...)
	a.live += len(name)
	return nameRef(p, off, len(name))
}

func (a *arena) free(ref uint64) {
	a.live -= refLen(ref)
	a.garbage += refLen(ref)
}

func (a *arena) capBytes() int {
	n := cap(a.pages) * 24
	for _, p := range a.pages {
		n += cap(p)
	}
	return n
}

// needsCompact reports whether more than half the arena is garbage (and the
// arena is more than a page, so small ones are left alone).
func (a *arena) needsCompact() bool {
	return a.garbage > a.live && a.live+a.garbage > pageSize
}

// table is the hash table: linear probing, at most 3/4 full, deletion by
// backward shift (no tombstones). A slot is 0 when empty, else 1 + entry id
// in its low idBits bits and, above them, the top bits of the name's hash
// (a tag), so that most probes that miss are told apart without reading the
// entry. idBits widens as entries are added (the tags then shrink).
type table struct {
	slots  []uint32
	n      int
	idBits uint8
}

const firstIDBits = 12

func (t *table) idMask() uint32 { return uint32(1)<<t.idBits - 1 }

// tag is the part of a slot that h determines.
func (t *table) tag(h uint64) uint32 { return uint32(h>>32) &^ t.idMask() }

// id is the entry id a full slot names.
func (t *table) id(s uint32) uint32 { return s&t.idMask() - 1 }

// widen makes room for entry ids up to id, rewriting the slots' tags in
// place (positions depend on the low bits of the hash only).
func (x *Subjects) widen(id uint32) {
	t := &x.tab
	if t.idBits == 0 {
		t.idBits = firstIDBits
	}
	if uint64(id)+1 <= uint64(t.idMask()) {
		return
	}
	old := t.idMask()
	for uint64(id)+1 > uint64(t.idMask()) && t.idBits < 32 {
		t.idBits = min(32, t.idBits+4)
	}
	for i, s := range t.slots {
		if s != 0 {
			ref := s & old
			t.slots[i] = t.tag(x.hashBytes(x.nameOf(x.ent(ref-1)))) | ref
		}
	}
}

// hashClear clears bits of every hash; tests set it to force collisions.
func (x *Subjects) hashString(s string) uint64 { return xxhash.Sum64String(s) &^ x.hashClear }
func (x *Subjects) hashBytes(b []byte) uint64  { return xxhash.Sum64(b) &^ x.hashClear }

func (x *Subjects) ent(id uint32) *entry { return x.ents.at(id) }

func (x *Subjects) nameOf(e *entry) []byte { return x.names.get(e.name) }

// find returns the id of name, or the empty slot where it would go; h is
// name's hash.
func find[T string | []byte](x *Subjects, name T, h uint64) (id uint32, slot int, ok bool) {
	t := &x.tab
	mask := len(t.slots) - 1
	if mask < 0 { // a zero Subjects: no table yet
		return 0, 0, false
	}
	tag, idm := t.tag(h), t.idMask()
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, i, false
		}
		if s&^idm != tag {
			continue
		}
		e := x.ent(s&idm - 1)
		if refLen(e.name) == len(name) && string(x.nameOf(e)) == string(name) {
			return s&idm - 1, i, true
		}
	}
}

// full reports whether one more entry would pass the load limit.
func (t *table) full() bool { return (t.n+1)*4 > len(t.slots)*3 }

// grow doubles the table and re-places every entry.
func (x *Subjects) grow() {
	old := x.tab.slots
	x.tab.slots = make([]uint32, max(8, 2*len(old)))
	mask := len(x.tab.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(x.hashBytes(x.nameOf(x.ent(x.tab.id(s))))) & mask
		for x.tab.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.tab.slots[i] = s
	}
}

// unslot empties slot i, shifting back the entries that probed past it.
func (x *Subjects) unslot(i int) {
	t := &x.tab
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j] != 0; j = (j + 1) & mask {
		home := int(x.hashBytes(x.nameOf(x.ent(t.id(t.slots[j]))))) & mask
		// Move slot j to i unless its home lies cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = 0
	t.n--
}

// compactNames rewrites the arena with only the names in use.
func (x *Subjects) compactNames() {
	var a arena
	for id := uint32(0); int(id) < x.ents.n; id++ {
		e := x.ent(id)
		if e.name != freeName {
			e.name = putName(&a, x.nameOf(e))
		}
	}
	x.names = a
}
