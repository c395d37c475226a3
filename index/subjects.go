package index

import (
	"sync"

	"github.com/jetwal/jetwal/subject"
)

// SubjectInfo is the per-subject summary.
type SubjectInfo struct {
	Msgs  uint64
	First uint64 // lowest live sequence
	Last  uint64 // highest live sequence
}

// Subjects indexes sequences by subject. It is not safe for concurrent
// mutation; the store's lock guards it.
//
// A subject is an entry (subjtable.go) found through the hash table. A
// subject of one or two messages has no sequence list: its messages are
// First and Last. From the third message on it has a seqList (list.go),
// dropped again when it is back to two.
type Subjects struct {
	tab       table
	ents      chunks[entry]
	freeEnt   uint32 // 1 + head of the free entry list, 0 for none
	names     arena
	lists     chunks[seqList]
	freeList  uint32            // 1 + head of the free list list (linked through seqList.last)
	over      map[uint32]uint64 // count>>32 of subjects with 2^32 messages or more
	hashClear uint64            // bits cleared from hashes; 0 except in collision tests

	gen uint64 // bumped when the subject set changes
	// The entry Add touched last (streams often repeat a subject): its id,
	// and its address and name while no entry was created or deleted since
	// (creation may move the first chunk; arena bytes never change).
	lastID   uint32
	lastEnt  *entry
	lastName []byte

	// The match cache (match) is filled by readers, which share the
	// store's read lock with each other: it has a lock of its own.
	cacheMu  sync.Mutex
	cacheGen uint64
	cache    map[string][]uint32 // filter -> ids of matching subjects
}

// wideMatch is the number of matching subjects above which a filtered walk
// checks subjects sequence by sequence instead of merging lists.
const wideMatch = 64

// NewSubjects returns an empty subject index (the zero Subjects is one too).
func NewSubjects() *Subjects {
	return &Subjects{tab: table{slots: make([]uint32, 8), idBits: firstIDBits}}
}

// Add records that seq has subject name. Sequences must be added in
// increasing order per subject.
func (x *Subjects) Add(name string, seq uint64) {
	if x.IsLast(name) {
		x.addSeq(x.lastID-1, x.lastEnt, seq)
		return
	}
	addHashed(x, name, x.hashString(name), seq)
}

// AddBytes is Add for a subject held in a byte slice; it allocates only
// for a subject not seen before (and when a subject's list grows).
func (x *Subjects) AddBytes(name []byte, seq uint64) {
	if isLast(x, name) {
		x.addSeq(x.lastID-1, x.lastEnt, seq)
		return
	}
	addHashed(x, name, x.hashBytes(name), seq)
}

// addHashed is Add past the last-subject fast path, for a name whose hash
// is h: a known subject gets seq, a new one an entry (the table grows
// first when one more would pass its load limit).
func addHashed[T string | []byte](x *Subjects, name T, h, seq uint64) {
	id, slot, ok := find(x, name, h)
	if !ok {
		if x.tab.full() {
			x.grow()
			_, slot, _ = find(x, name, h)
		}
		x.insert(slot, h, putName(&x.names, name), seq)
		return
	}
	x.addSeq(id, x.ent(id), seq)
}

// insert creates the entry of a new subject (one message, seq) at slot.
func (x *Subjects) insert(slot int, h, ref uint64, seq uint64) uint32 {
	var id uint32
	if x.freeEnt != 0 {
		id = x.freeEnt - 1
		x.freeEnt = uint32(x.ent(id).first)
	} else {
		id = x.ents.grow()
	}
	*x.ent(id) = entry{first: seq, last: seq, name: ref, msgs: 1}
	x.widen(id)
	x.tab.slots[slot] = x.tab.tag(h) | (id + 1)
	x.tab.n++
	x.gen++
	x.touch(id)
	return id
}

// addSeq appends seq to an existing subject.
func (x *Subjects) addSeq(id uint32, e *entry, seq uint64) {
	switch n := x.count(id, e); {
	case n == 2:
		lid := x.newList()
		l := x.lists.at(lid)
		l.add(e.first)
		l.add(e.last)
		l.add(seq)
		e.list = lid + 1
	case n > 2:
		x.lists.at(e.list - 1).add(seq)
	}
	e.last = seq
	e.msgs++
	if e.msgs == 0 {
		x.overAdd(id, 1)
	}
	if x.lastID != id+1 {
		x.touch(id)
	}
}

// IsLast reports whether name is the subject Add recorded last (while no
// entry was created or deleted since): a cheap check that name is already
// in the index.
func (x *Subjects) IsLast(name string) bool { return isLast(x, name) }

// isLast is IsLast for a name in a string or a byte slice.
func isLast[T string | []byte](x *Subjects, name T) bool {
	return x.lastEnt != nil && string(x.lastName) == string(name)
}

// touch makes id the last-subject fast path's entry.
func (x *Subjects) touch(id uint32) {
	e := x.ent(id)
	x.lastID, x.lastEnt, x.lastName = id+1, e, x.nameOf(e)
}

// untouch empties the fast path (an entry was deleted or names moved).
func (x *Subjects) untouch() { x.lastID, x.lastEnt, x.lastName = 0, nil, nil }

// count is a subject's number of live messages.
func (x *Subjects) count(id uint32, e *entry) uint64 {
	if len(x.over) == 0 {
		return uint64(e.msgs)
	}
	return x.over[id]<<32 | uint64(e.msgs)
}

func (x *Subjects) overAdd(id uint32, d int64) {
	if x.over == nil {
		x.over = make(map[uint32]uint64)
	}
	v := uint64(int64(x.over[id]) + d)
	if v == 0 {
		delete(x.over, id)
		return
	}
	x.over[id] = v
}

func (x *Subjects) newList() uint32 {
	if x.freeList != 0 {
		lid := x.freeList - 1
		l := x.lists.at(lid)
		x.freeList = uint32(l.last)
		*l = seqList{}
		return lid
	}
	return x.lists.grow()
}

// dropList frees a subject's list (it is back to two messages).
func (x *Subjects) dropList(e *entry) {
	lid := e.list - 1
	*x.lists.at(lid) = seqList{last: uint64(x.freeList)}
	x.freeList = lid + 1
	e.list = 0
}

// lookup finds a subject's entry by name.
func (x *Subjects) lookup(name string) (uint32, int, bool) {
	return find(x, name, x.hashString(name))
}

// Remove records that seq (of subject name) was deleted. live reports whether
// a sequence is still stored; it is used to move First and Last.
func (x *Subjects) Remove(name string, seq uint64, live func(uint64) bool) {
	x.RemoveSpan(name, 1, seq, seq, live) // subjspan.go
}

// deleteEntry removes a subject whose last message went.
func (x *Subjects) deleteEntry(id uint32, slot int) {
	e := x.ent(id)
	if e.list != 0 {
		x.dropList(e)
	}
	x.names.free(e.name)
	x.unslot(slot)
	*e = entry{name: freeName, first: uint64(x.freeEnt)}
	x.freeEnt = id + 1
	delete(x.over, id)
	x.gen++
	x.untouch()
	if x.names.needsCompact() {
		x.compactNames()
	}
}

func rebuildList(l *seqList, first uint64, live func(uint64) bool) {
	var nl seqList
	it := l.from(first)
	for {
		q, ok := it.next()
		if !ok {
			break
		}
		if q >= first && live(q) {
			nl.add(q)
		}
	}
	*l = nl
}

func (x *Subjects) info(id uint32) SubjectInfo {
	e := x.ent(id)
	return SubjectInfo{Msgs: x.count(id, e), First: e.first, Last: e.last}
}

// Get returns a subject's summary.
func (x *Subjects) Get(name string) (SubjectInfo, bool) {
	id, _, ok := x.lookup(name)
	if !ok {
		return SubjectInfo{}, false
	}
	return x.info(id), true
}

// Len is the number of subjects with live messages.
func (x *Subjects) Len() int { return x.tab.n }

// each calls fn with the id of every subject.
func (x *Subjects) each(fn func(id uint32)) {
	for id := uint32(0); int(id) < x.ents.n; id++ {
		if x.ent(id).name != freeName {
			fn(id)
		}
	}
}

// Each calls fn for every subject matching filter ("" or ">" match all).
func (x *Subjects) Each(filter string, fn func(name string, info SubjectInfo)) {
	if filter == "" || filter == ">" {
		x.each(func(id uint32) { fn(string(x.nameOf(x.ent(id))), x.info(id)) })
		return
	}
	for _, id := range x.match(filter) {
		fn(string(x.nameOf(x.ent(id))), x.info(id))
	}
}

// match resolves a filter to its subjects, cached until the set changes.
func (x *Subjects) match(filter string) []uint32 {
	if subject.IsLiteral(filter) {
		if id, _, ok := x.lookup(filter); ok {
			return []uint32{id}
		}
		return nil
	}
	// Readers run this concurrently (under the store's read lock, which
	// keeps the subject set, and gen, still): only the cache needs cacheMu.
	// Two readers missing the same filter both scan; the second stores the
	// same result again.
	x.cacheMu.Lock()
	if x.cacheGen != x.gen || x.cache == nil {
		x.cache = make(map[string][]uint32)
		x.cacheGen = x.gen
	}
	m, ok := x.cache[filter]
	x.cacheMu.Unlock()
	if ok {
		return m
	}
	// A name without the filter's literal prefix cannot match: a
	// comparison of a few bytes instead of a walk over the tokens.
	prefix := subject.LiteralPrefix(filter)
	x.each(func(id uint32) {
		name := x.nameOf(x.ent(id))
		if len(name) >= len(prefix) && string(name[:len(prefix)]) == prefix && subject.Match(filter, string(name)) {
			m = append(m, id)
		}
	})
	x.cacheMu.Lock()
	if len(x.cache) > 256 {
		clear(x.cache)
	}
	x.cache[filter] = m
	x.cacheMu.Unlock()
	return m
}

// MemBytes is the heap the subject index holds: entries, hash table, name
// arena (names and page tails), lists. The match cache is not counted.
func (x *Subjects) MemBytes() int {
	n := x.ents.capBytes(32) + cap(x.tab.slots)*4 + x.names.capBytes() + x.lists.capBytes(64)
	x.each(func(id uint32) {
		if e := x.ent(id); e.list != 0 {
			l := x.lists.at(e.list - 1)
			n += cap(l.buf) + cap(l.marks)*16
		}
	})
	return n + len(x.over)*16
}

// NameBytes is the total length of the subject names (counted by MemBytes
// within the arena), for reporting overhead per subject apart from names.
func (x *Subjects) NameBytes() int { return x.names.live }

// SubjectOf finds the subject whose list holds seq (slow: for records whose
// subject bytes were erased).
func (x *Subjects) SubjectOf(seq uint64) string {
	found := ""
	x.each(func(id uint32) {
		e := x.ent(id)
		if found == "" && seq >= e.first && seq <= e.last && x.holds(e, seq) {
			found = string(x.nameOf(e))
		}
	})
	return found
}

// holds reports whether a subject's list (or First/Last) has seq.
func (x *Subjects) holds(e *entry, seq uint64) bool {
	if e.list == 0 {
		return seq == e.first || seq == e.last
	}
	return x.lists.at(e.list - 1).has(seq)
}
