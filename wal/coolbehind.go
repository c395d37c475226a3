package wal

import (
	"sync"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
)

// Cooling behind sequential readers.
//
// A record shorter than segment.CopyReadMin is read through its segment's
// mapping, and every page a read touches then counts in the process's
// resident set (as RssFile) until the kernel wants the memory back. One
// consumer reading a stream from its start would leave the whole stream
// resident: 300,000 messages of 1 KiB read by an ordered consumer left
// 327 MiB of file pages in the server's RSS, beside 16 MiB of heap.
//
// LoadNext is the sequential reader's call (consumers, mirrors, stream
// scans). When a record it reads through the mapping takes the reader into
// another coolChunk of a segment, that chunk becomes the most recently
// entered of the store's readChunks; past readBudget chunks, the least
// recently entered one is cooled (madvise MADV_DONTNEED: the pages stay in
// the page cache, and a later read faults them back in). Readers of one
// stream less than readBudget apart, such as several consumers at its
// tail, share the chunks they are in and fault nothing back; one reader
// alone keeps at most readBudget of file pages resident however much it
// reads. The cost is one lock per chunk entered, and a madvise per chunk
// read once the budget is full.
//
// Load (by sequence, in any order) neither enters nor cools chunks: a
// random reader's working set is the mapping, and dropping it would make
// reads fault.
const (
	coolShift  = 20
	coolChunk  = 1 << coolShift
	readBudget = 32 // chunks: 32 MiB
)

type chunkKey struct {
	seg   index.SegID
	chunk int64
}

// readChunks is the store's set of chunks entered by sequential readers,
// least recently entered first. It has its own lock: readers enter chunks
// holding the store's lock shared.
type readChunks struct {
	mu   sync.Mutex
	keys []chunkKey
}

// enteredLocked is called with the store's mu held (shared or exclusive)
// after a sequential read of the record at loc, at most size bytes long,
// through its segment's mapping.
func (s *Store) enteredLocked(loc index.Loc, size int) {
	off := int64(loc.Off)
	first, last := off>>coolShift, (off+int64(max(size, 1))-1)>>coolShift
	if first == last && off&(coolChunk-1) != 0 && off != segment.HeaderSize {
		return // within the chunk the reader entered before
	}
	k := chunkKey{seg: loc.Seg, chunk: last}
	rc := &s.readChunks
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, have := range rc.keys {
		if have == k {
			copy(rc.keys[i:], rc.keys[i+1:])
			rc.keys[len(rc.keys)-1] = k
			return
		}
	}
	if len(rc.keys) < readBudget {
		rc.keys = append(rc.keys, k)
		return
	}
	old := rc.keys[0]
	copy(rc.keys, rc.keys[1:])
	rc.keys[len(rc.keys)-1] = k
	// A segment removed since (purge, limits) is gone from segs: its
	// mapping went with it. mu held keeps the others mapped.
	if seg := s.segByID(old.seg); seg != nil {
		seg.CoolRange(old.chunk<<coolShift, coolChunk)
	}
}
