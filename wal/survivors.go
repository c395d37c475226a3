package wal

import (
	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
)

// A removal of every message at or below a cut (a compaction, a purge of
// everything or of everything below a sequence, a purge keeping the last
// few) learns each removed message's subject from its record, one read
// per message (pruner). When the messages above the cut are fewer than
// the ones below it, reading those instead and building a fresh index
// from them reaches the same state for less: purging a stream of
// millions while a publisher's last appends wait for their commit reads
// those few appends, not the millions.
//
// Survivors are read under one hold of the lock, so only up to
// pruneChunk of them: as long as one chunk of a pruner's removal.

// keepAboveLocked removes every live message at or below cut by rebuilding
// the index from the live messages above it. It reports ok false, having
// changed nothing, when that would read more records than removing the
// others one by one, when there are more than pruneChunk survivors, or
// when a survivor cannot be read or was erased in place (the pruner
// handles both). On ok it returns the number removed and adds the removed
// range to rs.
func (s *Store) keepAboveLocked(cut uint64, rs *ranges) (n uint64, ok bool) {
	first, has := s.idx.Seqs.First()
	if !has || first > cut {
		return 0, false
	}
	kept := uint64(s.idx.Seqs.CountFrom(cut + 1))
	removed := uint64(s.idx.Seqs.Len()) - kept
	if kept > pruneChunk || kept >= removed {
		return 0, false
	}
	idx := index.New()
	var bytes uint64
	for q, live := s.idx.Seqs.Next(cut + 1); live; q, live = s.idx.Seqs.Next(q + 1) {
		loc, _ := s.idx.Seqs.Lookup(q)
		r, err := s.recordAnyLocked(loc)
		if err != nil || r.Flags&segment.FlagErased != 0 || r.Seq != q {
			return 0, false
		}
		idx.AddBytes(q, loc, r.Subject)
		bytes += store.FileRecordSizeLen(len(r.Subject), len(r.Header), len(r.Data))
	}
	if s.testRebuilt != nil {
		s.testRebuilt(int(kept))
	}
	*rs = append(*rs, deleteRange{first: first, count: cut - first + 1})
	s.idx = idx
	s.msgs = kept
	s.bytes = bytes
	s.dirty = true
	return removed, true
}

// keepCutLocked is the cut of a purge keeping the last keep live messages
// at or below limit: the sequence of the one before them. It is 0 when
// there are no more than keep, and past pruneChunk, where so many
// survivors are the pruner's to handle anyway.
func (s *Store) keepCutLocked(limit, keep uint64) uint64 {
	if keep > pruneChunk {
		return 0
	}
	q, live := s.idx.Seqs.Prev(limit)
	for i := uint64(0); i < keep && live; i++ {
		q, live = s.idx.Seqs.Prev(q - 1)
	}
	if !live {
		return 0
	}
	return q
}
