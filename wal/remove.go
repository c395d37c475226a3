package wal

import (
	"fmt"
	"time"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
)

// ranges coalesces increasing sequences into runs.
type ranges []deleteRange

func (r *ranges) add(seq uint64) {
	if n := len(*r); n > 0 {
		last := &(*r)[n-1]
		if last.first+last.count == seq {
			last.count++
			return
		}
	}
	*r = append(*r, deleteRange{first: seq, count: 1})
}

// removeLocked deletes one live message from the index and the accounting.
func (s *Store) removeLocked(seq uint64) (bool, error) {
	r, live, readable := s.dropLocked(seq)
	if !live || !readable {
		return live, nil
	}
	name := string(r.Subject)
	if r.Flags&segment.FlagErased != 0 {
		name = s.idx.Subj.SubjectOf(seq)
	}
	s.idx.Subj.Remove(name, seq, s.idx.Seqs.Live)
	return true, nil
}

// dropLocked removes seq, if it is live, from the sequence index and the
// accounting, and returns its record for the caller to update the subject
// index with. A damaged record (readable false) is still removed; its size
// and subject are unknown, so accounting drops the message only.
func (s *Store) dropLocked(seq uint64) (r segment.Record, live, readable bool) {
	loc, ok := s.idx.Seqs.Lookup(seq)
	if !ok {
		return r, false, false
	}
	r, err := s.recordAnyLocked(loc)
	s.idx.Seqs.Delete(seq)
	s.msgs--
	s.dirty = true
	if err != nil {
		return r, true, false
	}
	s.bytes -= min(s.bytes, store.FileRecordSizeLen(len(r.Subject), len(r.Header), len(r.Data)))
	return r, true, true
}

// evictLocked removes a message because a limit said so; its tombstone is
// written with the next flush (recovery re-applies limits meanwhile).
func (s *Store) evictLocked(seq uint64) {
	if ok, _ := s.removeLocked(seq); ok {
		s.tombLocked(seq)
	}
}

// tombLocked queues a tombstone for an evicted message.
func (s *Store) tombLocked(seq uint64) {
	r := ranges(s.tombs)
	r.add(seq)
	s.tombs = r
	s.armSyncLocked()
}

// persistRemovalLocked writes tombstones for explicitly removed ranges and
// makes them durable under the sync policy.
func (s *Store) persistRemovalLocked(rs ranges) ([]waiter, error) {
	if err := s.writeTombsLocked(); err != nil {
		return nil, s.failLocked(err)
	}
	for _, r := range rs {
		if err := s.appendTombLocked(r.first, r.count); err != nil {
			return nil, s.failLocked(err)
		}
	}
	var ws []waiter
	if s.opts.Sync == SyncAlways {
		var err error
		if ws, err = s.syncLocked(); err != nil {
			return nil, err
		}
	} else {
		// The removal is answered once its tombstones are the operating
		// system's, as appends are; that write releases pending appends too.
		if err := s.active.seg.Flush(); err != nil {
			return nil, s.failLocked(err)
		}
		ws = s.takeWaitersLocked(s.last)
	}
	// Only now that the tombstones are durable may segments they emptied
	// go: removed first, a crash would leave the segments after them
	// with their messages and no tombstone, half a purge.
	s.dropDeadLocked()
	return ws, nil
}

// dropDeadLocked removes segments at the head that hold no live message.
// Only a prefix of segments is ever removed: tombstones refer to sequences
// in their own or older segments, so removing from the head never drops a
// tombstone whose target is still on disk.
func (s *Store) dropDeadLocked() {
	if s.batch.active {
		// Not while an atomic batch is written: a crash may drop the
		// batch, and with it the tombstones that emptied these segments
		// (batch.go). AppendBatch drops them once the batch is durable.
		s.batch.dropDead = true
		return
	}
	s.idx.Seqs.DropDead()
	n := 0
	for n < len(s.segs)-1 && s.segs[n] != s.active && !s.idx.Seqs.HasSeg(s.segs[n].id) && !s.isSealing(s.segs[n]) {
		n++
	}
	if n == 0 {
		return
	}
	for _, e := range s.segs[:n] {
		if s.busy[e] > 0 {
			s.deferred = append(s.deferred, e)
			s.fs.Remove(e.seg.Path())
			continue
		}
		e.seg.Remove()
	}
	s.segs = append(s.segs[:0], s.segs[n:]...)
	s.fs.SyncDir(s.dir)
	s.dirty = true
}

func (s *Store) checkOpen() error {
	if s.closed {
		return store.ErrClosed
	}
	if s.werr != nil {
		return s.werr
	}
	return nil
}

// Delete removes one message; erase also overwrites its bytes.
func (s *Store) Delete(seq uint64, erase bool) error {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return err
	}
	loc, ok := s.idx.Seqs.Lookup(seq)
	if !ok || seq > s.visible {
		s.mu.Unlock()
		return fmt.Errorf("wal: delete %d: %w", seq, store.ErrNotFound)
	}
	s.removeLocked(seq)
	if erase {
		// Overwrite after the index let go of the record (its subject was
		// read first). Compressed sealed segments are read-only: there the
		// tombstone alone hides the message.
		if seg := s.segByID(loc.Seg); seg != nil && !seg.Compressed() {
			s.dropWindowsLocked(loc.Seg) // no copy of the record outlives it
			if err := seg.Erase(int64(loc.Off)); err != nil {
				err = s.failLocked(err)
				s.mu.Unlock()
				return err
			}
		}
	}
	ws, err := s.persistRemovalLocked(ranges{{first: seq, count: 1}})
	s.unlockNotify(ws, nil)
	return err
}

// Purge removes messages matching filter below upTo, keeping the newest keep.
func (s *Store) Purge(filter string, upTo, keep uint64) (uint64, error) {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	if err := checkFilter(filter); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	if filter == ">" {
		filter = ""
	}
	limit := s.visible
	if upTo > 0 {
		limit = min(limit, upTo-1)
	}
	var rs ranges
	var n uint64
	fast := false
	switch {
	case filter == "" && keep == 0 && limit >= s.visible && s.visible == s.last:
		n, fast = s.purgeAllLocked(&rs), true
	case filter == "" && keep == 0:
		n, fast = s.keepAboveLocked(limit, &rs)
	case filter == "":
		if cut := s.keepCutLocked(limit, keep); cut > 0 {
			n, fast = s.keepAboveLocked(cut, &rs)
		}
	}
	var err error
	if !fast && keep > 0 {
		limit, err = s.keepMatchCutLocked(filter, limit, keep)
	}
	if !fast && err == nil && limit > 0 {
		var m uint64
		m, err = s.purgeMatchesLocked(filter, limit, &rs)
		n += m
		if cerr := s.checkOpen(); cerr != nil {
			// Closed or failed while the pruner yielded: nothing to
			// write the tombstones to.
			s.mu.Unlock()
			return n, cerr
		}
	}
	ws, perr := s.persistRemovalLocked(rs)
	s.scheduleAgeLocked()
	s.unlockNotify(ws, nil)
	if err == nil {
		err = perr
	}
	return n, err
}

// keepMatchCutLocked is the cut of a purge of filter's messages at or
// below limit that keeps the last keep of them: the sequence of the match
// before them, 0 when there are no more than keep. The matches are counted
// from the subject index, and walked only to the cut, from whichever end
// is nearer: never listed.
func (s *Store) keepMatchCutLocked(filter string, limit, keep uint64) (uint64, error) {
	var total uint64
	if filter == "" {
		total = uint64(s.idx.Seqs.CountFrom(1) - s.idx.Seqs.CountFrom(limit+1))
	} else {
		p := s.idx.Subj.PlanSubjects(filter)
		live := s.idx.Seqs.Live
		total = p.CountFrom(1, live) - p.CountFrom(limit+1, live)
	}
	if total <= keep {
		return 0, nil
	}
	p := s.idx.Subj.PlanFor(filter)
	var q uint64
	var ok bool
	var err error
	if total-keep <= keep {
		for i := total - keep; i > 0; i-- {
			if q, ok, err = s.nextInPlanLocked(p, filter, q+1, limit); err != nil || !ok {
				// Fewer than counted: an unreadable subject (err) or an
				// index that disagrees with itself; no further than found.
				return q, err
			}
		}
		return q, nil
	}
	q = limit + 1
	for i := keep + 1; i > 0; i-- {
		if q, ok, err = s.prevInPlanLocked(p, filter, q-1); err != nil || !ok {
			return 0, err
		}
	}
	return q, nil
}

// purgeMatchesLocked removes filter's live messages at or below limit,
// walking them in order and yielding the lock every pruneChunk of them; it
// adds what it removed to rs. Appends while it yields land above limit.
// Each subject it touches loses all its live messages up to limit, which
// is the pruner's condition. The walk reads the subject index while the
// pruner's batch is open: only the subjects' lists (unchanged until
// finishLocked) past the last removal, and liveness from the sequence
// index, which the removals update at once. It stops at the first subject
// it cannot read (a wide filter reads them from the records), keeping what
// it removed before.
func (s *Store) purgeMatchesLocked(filter string, limit uint64, rs *ranges) (uint64, error) {
	p := s.newPruner()
	plan := s.idx.Subj.PlanFor(filter)
	var n, q uint64
	for i := 0; ; i++ {
		next, ok, err := s.nextInPlanLocked(plan, filter, q+1, limit)
		if err != nil || !ok {
			p.finishLocked()
			return n, err
		}
		q = next
		if i > 0 && i%pruneChunk == 0 {
			if err := p.yieldLocked(); err != nil {
				return n, err
			}
			plan = s.idx.Subj.PlanFor(filter) // subjects came and went
		}
		if p.removeLocked(q) {
			rs.add(q)
			n++
		}
	}
}

// purgeAllLocked empties the store at once.
func (s *Store) purgeAllLocked(rs *ranges) uint64 {
	n := s.msgs
	first, ok := s.idx.Seqs.First()
	if ok {
		*rs = append(*rs, deleteRange{first: first, count: s.last - first + 1})
	}
	s.idx = index.New()
	s.msgs, s.bytes = 0, 0
	s.dirty = true
	return n
}

// Compact removes every message below seq.
func (s *Store) Compact(seq uint64) (uint64, error) {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	if seq == 0 {
		s.mu.Unlock()
		return 0, fmt.Errorf("wal: compact to 0: %w", store.ErrInvalidSequence)
	}
	var rs ranges
	var n uint64
	s.floor = max(s.floor, seq)
	if seq > s.last {
		// Everything goes, and the next sequence becomes seq.
		n = s.purgeAllLocked(&rs)
		if len(rs) == 0 {
			rs = ranges{{first: seq - 1, count: 1}}
		} else {
			rs[0].count = seq - rs[0].first
		}
		if seq-1 > s.last {
			s.last = seq - 1
			s.visible = max(s.visible, s.last)
			s.applyTrimsLocked()
		}
	} else if removed, fast := s.keepAboveLocked(seq-1, &rs); fast {
		n = removed
	} else {
		p := s.newPruner()
		for q, ok := s.idx.Seqs.Next(1); ok && q < seq; q, ok = s.idx.Seqs.Next(q + 1) {
			if n > 0 && n%pruneChunk == 0 {
				if err := p.yieldLocked(); err != nil {
					s.mu.Unlock()
					return n, err
				}
			}
			p.removeLocked(q)
			rs.add(q)
			n++
		}
		p.finishLocked()
	}
	ws, err := s.persistRemovalLocked(rs)
	s.scheduleAgeLocked()
	s.unlockNotify(ws, nil)
	return n, err
}

// Truncate removes every message above seq. Sequences above seq are not
// handed out again: the next append still gets the old last sequence + 1.
func (s *Store) Truncate(seq uint64) error {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return err
	}
	var rs ranges
	p := s.newPruner()
	for q, ok := s.idx.Seqs.Next(seq + 1); ok; q, ok = s.idx.Seqs.Next(q + 1) {
		p.removeLocked(q)
		rs.add(q)
	}
	p.finishLocked()
	ws, err := s.persistRemovalLocked(rs)
	s.unlockNotify(ws, nil)
	return err
}

// checkDiscardNewLocked refuses a message that a DiscardNew limit forbids.
func (s *Store) checkDiscardNewLocked(subj string, size uint64, hdrData int) error {
	if !s.admits {
		return nil // no limit that refuses a message
	}
	l := &s.limits
	if l.MaxMsgSize > 0 && hdrData > int(l.MaxMsgSize) {
		return fmt.Errorf("%w: %d bytes > %d", store.ErrMaxMsgSize, hdrData, l.MaxMsgSize)
	}
	if l.MaxBytes > 0 && size > uint64(l.MaxBytes) {
		return fmt.Errorf("%w: message of %d bytes is larger than the stream", store.ErrMaxBytes, size)
	}
	if l.Discard != store.DiscardNew {
		return nil
	}
	// With a per-subject limit that drops the subject's oldest message, the
	// new message makes room for itself first (as JetStream orders it).
	msgs, bytes := s.msgs, s.bytes
	if l.MaxMsgsPerSubject > 0 {
		if info, ok := s.idx.Subj.Get(subj); ok && info.Msgs+1 > uint64(l.MaxMsgsPerSubject) {
			if l.DiscardNewPerSubject {
				return store.ErrMaxMsgsPerSubj
			}
			// Appends in flight on the subject have not evicted theirs yet.
			msgs -= min(msgs, info.Msgs+1-uint64(l.MaxMsgsPerSubject))
			if loc, ok := s.idx.Seqs.Lookup(info.First); ok {
				if r, err := s.recordAnyLocked(loc); err == nil {
					bytes -= min(bytes, store.FileRecordSizeLen(len(r.Subject), len(r.Header), len(r.Data)))
				}
			}
		}
	}
	if l.MaxMsgs > 0 && msgs+1 > uint64(l.MaxMsgs) {
		return store.ErrMaxMsgs
	}
	if l.MaxBytes > 0 && bytes+size > uint64(l.MaxBytes) {
		return store.ErrMaxBytes
	}
	return nil
}

// enforceLimitsLocked evicts what the limits no longer allow after an
// append of subj ("" checks every subject, after a limit change).
func (s *Store) enforceLimitsLocked(subj string) {
	l := s.limits
	if l.MaxMsgsPerSubject > 0 {
		if subj != "" {
			s.trimSubjectLocked(subj, uint64(l.MaxMsgsPerSubject))
		} else {
			var names []string
			s.idx.Subj.Each("", func(name string, info index.SubjectInfo) {
				if info.Msgs > uint64(l.MaxMsgsPerSubject) {
					names = append(names, name)
				}
			})
			for _, n := range names {
				s.trimSubjectLocked(n, uint64(l.MaxMsgsPerSubject))
			}
		}
	}
	if l.Discard == store.DiscardOld || subj == "" {
		p := s.newPruner()
		for l.MaxMsgs > 0 && s.msgs > uint64(l.MaxMsgs) {
			if !s.evictFirstLocked(p) {
				break
			}
		}
		for l.MaxBytes > 0 && s.bytes > uint64(l.MaxBytes) {
			if !s.evictFirstLocked(p) {
				break
			}
		}
		p.finishLocked()
	}
	if len(s.tombs) > 0 {
		s.dropDeadLocked()
	}
}

func (s *Store) trimSubjectLocked(subj string, max uint64) {
	for {
		info, ok := s.idx.Subj.Get(subj)
		if !ok || info.Msgs <= max {
			return
		}
		s.evictLocked(info.First)
	}
}

// evictFirstLocked evicts the oldest message through p.
func (s *Store) evictFirstLocked(p *pruner) bool {
	q, ok := s.idx.Seqs.First()
	if !ok {
		return false
	}
	if p.removeLocked(q) {
		s.tombLocked(q)
	}
	return true
}

// UpdateLimits applies new limits.
func (s *Store) UpdateLimits(l store.Limits) error {
	s.mu.Lock()
	if err := s.checkOpen(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.setLimitsLocked(l)
	s.enforceLimitsLocked("")
	s.expireLocked()
	var ws []waiter
	var err error
	// Write the evictions now: a later limit increase must not let a
	// restart resurrect them.
	if len(s.tombs) > 0 {
		ws, err = s.syncLocked()
	}
	s.scheduleAgeLocked()
	s.unlockNotify(ws, nil)
	return err
}

// scheduleAgeLocked arms the MaxAge timer for the oldest message.
func (s *Store) scheduleAgeLocked() {
	if s.limits.MaxAge <= 0 || s.closed {
		return
	}
	q, ok := s.idx.Seqs.First()
	if !ok {
		return
	}
	loc, _ := s.idx.Seqs.Lookup(q)
	r, err := s.recordAnyLocked(loc)
	if err != nil {
		return
	}
	wait := time.Until(time.Unix(0, r.Time).Add(s.limits.MaxAge))
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	if s.ageT == nil {
		s.ageT = time.AfterFunc(wait, s.onAge)
	} else {
		s.ageT.Reset(wait)
	}
}

func (s *Store) onAge() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.expireLocked()
	s.scheduleAgeLocked()
	s.mu.Unlock()
}

// expireLocked evicts messages older than MaxAge.
func (s *Store) expireLocked() {
	if s.limits.MaxAge <= 0 {
		return
	}
	cutoff := s.nowNano() - int64(s.limits.MaxAge)
	p := s.newPruner()
	for {
		q, ok := s.idx.Seqs.First()
		if !ok {
			break
		}
		loc, _ := s.idx.Seqs.Lookup(q)
		r, err := s.recordAnyLocked(loc)
		if err == nil && r.Time > cutoff {
			break
		}
		if p.removeLocked(q) {
			s.tombLocked(q)
		}
	}
	p.finishLocked()
	if len(s.tombs) > 0 {
		s.dropDeadLocked()
	}
}

func (s *Store) isSealing(e *segEntry) bool {
	for _, x := range s.sealing {
		if x == e {
			return true
		}
	}
	return false
}
