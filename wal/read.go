package wal

import (
	"errors"
	"fmt"
	"math"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// readLocLocked decodes the record at loc into rec. mu must be held
// (shared or exclusive). needFlush reports that the record is still in the
// write buffer and the caller must flush under the exclusive lock.
func (s *Store) readLocLocked(loc index.Loc, rec *segment.Record) (needFlush bool, err error) {
	seg := s.segByID(loc.Seg)
	if seg == nil {
		return false, fmt.Errorf("wal: %s: index names missing segment %d: %w", s.dir, loc.Seg, store.ErrCorrupt)
	}
	if int64(loc.Off) >= seg.Flushed() {
		return true, nil
	}
	_, err = seg.ReadInto(int64(loc.Off), rec)
	return false, err
}

// loadInto copies the record of a live, visible sequence into m, flushing
// the write buffer first if the record is still in it. (It copies rather
// than hand the record to a callback: a record whose address goes to a
// function value escapes to the heap, one allocation per read.)
//
// seqRead marks a sequential reader's load (LoadNext): a small record read in
// order comes from a read-ahead window (see readahead.go).
func (s *Store) loadInto(seq uint64, m *store.Msg, seqRead bool) error {
	for attempt := 0; ; attempt++ {
		s.mu.RLock()
		if s.closed {
			s.mu.RUnlock()
			return store.ErrClosed
		}
		if seq > s.visible {
			s.mu.RUnlock()
			return store.ErrNotFound
		}
		needFlush, erased, err := s.loadLocked(seq, m, seqRead)
		s.mu.RUnlock()
		if erased {
			s.mu.Lock()
			s.removeLocked(seq)
			s.mu.Unlock()
			return store.ErrNotFound
		}
		if err != nil && errors.Is(err, store.ErrCorrupt) {
			return s.corruptRead(seq, err)
		}
		if !needFlush || attempt > 0 {
			if needFlush {
				return fmt.Errorf("wal: %s: sequence %d unreadable after flush: %w", s.dir, seq, store.ErrCorrupt)
			}
			return err
		}
		if err := s.flushForRead(); err != nil {
			return err
		}
	}
}

// loadLocked is loadInto's read under mu (held shared; the store open and
// seq visible): it copies seq's record into m, or reports that the record
// is still in the write buffer (needFlush) or was erased in place (erased),
// which loadInto handles with mu released.
func (s *Store) loadLocked(seq uint64, m *store.Msg, seqRead bool) (needFlush, erased bool, err error) {
	var rec segment.Record
	copied, filled, needFlush, err := s.readForLoadLocked(seq, m, seqRead, &rec)
	if err != nil || needFlush {
		return needFlush, false, err
	}
	switch {
	case rec.Seq != seq:
		return false, false, fmt.Errorf("wal: %s: index maps sequence %d to a record of sequence %d: %w", s.dir, seq, rec.Seq, store.ErrCorrupt)
	case rec.Flags&segment.FlagErased != 0:
		// Erased in place, its tombstone lost to a crash (or to
		// damage): the message was deleted, it is not data.
		return false, true, nil
	case filled:
		// m holds it already (a read-ahead window's copy).
	case copied:
		takeCopied(m, &rec)
	default:
		copyMsg(m, &rec)
	}
	return false, false, nil
}

// readForLoadLocked is readLocLocked for loadInto: a large record is
// read with pread into m.Data's array (copied reports it) rather than through
// the mapping, whose first touch of every page is a page fault (see
// segment.CopyReadMin). A sequential reader's (seqRead) small record read in
// order comes from a read-ahead window (readahead.go) and is copied into m
// at once (filled reports it; rec then carries only the sequence and
// flags). Either way the record is read under mu, so its segment cannot be
// closed or removed meanwhile.
func (s *Store) readForLoadLocked(seq uint64, m *store.Msg, seqRead bool, rec *segment.Record) (copied, filled, needFlush bool, err error) {
	loc, end, hasEnd, ok := s.idx.Seqs.LookupSpan(seq)
	if !ok {
		return false, false, false, store.ErrNotFound
	}
	seg := s.segByID(loc.Seg)
	if seg == nil || seg.Compressed() || int64(loc.Off) >= seg.Flushed() {
		needFlush, err = s.readLocLocked(loc, rec)
		return false, false, needFlush, err
	}
	var size int
	if hasEnd && end > loc.Off {
		size = int(end - loc.Off) // the next entry of the same block: no second search
	} else {
		size = s.recordSizeLocked(seq, loc, seg)
	}
	size = min(size, maxSizeEstimate)
	if size < segment.CopyReadMin {
		miss := aheadMapping
		if seqRead {
			var got uint64
			var flags uint16
			if got, flags, miss, err = s.readAheadLocked(seg, loc, size, m); miss == aheadRead {
				rec.Seq, rec.Flags = got, flags
				return false, true, false, err
			}
		}
		if miss == aheadMapping {
			// seg is known, open and flushed to loc: read it directly
			// rather than look it up and check it again through
			// readLocLocked.
			if seg.HasKey() {
				// A sealed record opens into m.Data's array, not a
				// new buffer per read: takeCopied then lays it out.
				var buf []byte
				_, buf, err = seg.ReadIntoBuf(int64(loc.Off), rec, m.Data[:0])
				m.Data = buf[:0]
				return err == nil, false, false, err
			}
			_, err = seg.ReadInto(int64(loc.Off), rec)
			return false, false, false, err
		}
		// Every window is being filled by another reader: pread this one
		// record rather than touch the mapping.
	}
	r, buf, err := seg.ReadAtCopy(int64(loc.Off), size, m.Data[:0])
	if err != nil {
		return false, false, false, err
	}
	*rec = r // a large record: one copy of the view is nothing beside its read
	// The record now sits in buf, which may be m.Data's array: m's payload
	// is gone either way, so m.Data is empty until takeCopied fills it.
	m.Data = buf[:0]
	return true, false, false, nil
}

// recordSizeLocked estimates the length of seq's record at loc for a
// block's last entry (readForLoadLocked has the others' from LookupSpan,
// with no second search) without touching the mapping where it can: records are appended in sequence order,
// so the next sequence's record in the same segment starts at or after this
// one's end, and the last message of a segment ends at or before the flushed
// end (only small non-message records can lie between). Otherwise (the next
// sequence deleted or skipped) it reads the length word from the mapping.
//
// The estimate can exceed the record by the non-message records (deletion
// tombstones, say) written between two appends, so it is capped at
// maxSizeEstimate: a record longer than that takes a second pread, and a
// small record followed by many tombstones reads at most that much.
func (s *Store) recordSizeLocked(seq uint64, loc index.Loc, seg *segment.Segment) int {
	next, ok := s.idx.Seqs.Lookup(seq + 1)
	switch {
	case ok && next.Seg == loc.Seg && next.Off > loc.Off:
		return int(next.Off - loc.Off)
	case ok && next.Seg != loc.Seg, !ok && seq == s.last:
		return int(seg.Flushed() - int64(loc.Off))
	}
	return seg.RecordLen(int64(loc.Off))
}

// maxSizeEstimate caps recordSizeLocked's estimate (see there). A larger
// record costs one more pread for its remainder (a microsecond or two
// against the tens a 256 KiB record takes to copy and check); a small
// record followed by a burst of tombstones (a work queue's acks, say)
// reads at most this much.
const maxSizeEstimate = 64 << 10

// takeCopied fills m from a record that ReadAtCopy read into m.Data's array:
// the subject and header are copied out, then the payload is moved to the
// front of the array (cheap: it was just read, so it is in cache; append
// moves overlapping bytes correctly). Keeping the array, rather than
// pointing m.Data into it, lets the next load reuse all of it: a fresh
// array per load costs page faults of its own.
func takeCopied(m *store.Msg, r *segment.Record) {
	data := r.Data
	r.Data = nil
	copyMsg(m, r)
	m.Data = append(m.Data[:0], data...)
}

func (s *Store) flushForRead() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	if s.werr != nil {
		return s.werr
	}
	if err := s.active.seg.Flush(); err != nil {
		return s.failLocked(err)
	}
	return nil
}

func copyMsg(m *store.Msg, r *segment.Record) {
	m.Seq = r.Seq
	m.Time = r.Time
	if string(r.Subject) != m.Subject {
		m.Subject = string(r.Subject)
	}
	if len(r.Header) == 0 {
		m.Header = m.Header[:0]
		if m.Header != nil && cap(m.Header) == 0 {
			m.Header = nil
		}
	} else {
		m.Header = append(m.Header[:0], r.Header...)
	}
	m.Data = append(m.Data[:0], r.Data...)
}

// Load reads message seq into m.
func (s *Store) Load(seq uint64, m *store.Msg) error {
	err := s.loadInto(seq, m, false)
	if err == store.ErrNotFound {
		return fmt.Errorf("wal: sequence %d: %w", seq, store.ErrNotFound)
	}
	return err
}

// LoadNext reads the first message >= start matching filter. The match and
// the read take one hold of mu (a consumer's every delivery comes through
// here); a record that needs a flush, was erased in place or reads corrupt
// goes through loadInto, which handles those with mu released.
func (s *Store) LoadNext(filter string, start uint64, m *store.Msg) error {
	if err := checkFilter(filter); err != nil {
		return err
	}
	if start == 0 {
		start = 1
	}
	for {
		s.mu.RLock()
		if s.closed {
			s.mu.RUnlock()
			return store.ErrClosed
		}
		seq, ok, err := s.nextMatchLocked(filter, start, s.visible)
		if err != nil || !ok {
			s.mu.RUnlock()
			if err == nil {
				err = store.ErrEOF
			}
			return err
		}
		needFlush, erased, err := s.loadLocked(seq, m, true)
		s.mu.RUnlock()
		if err == nil && !needFlush && !erased {
			return nil
		}
		if err = s.loadInto(seq, m, true); errors.Is(err, store.ErrNotFound) {
			start = seq + 1 // deleted in between, or lost to damage: go on
			continue
		}
		return err
	}
}

// nextMatchLocked finds the first live sequence in [start, limit] matching
// filter.
func (s *Store) nextMatchLocked(filter string, start, limit uint64) (uint64, bool, error) {
	return s.nextInPlanLocked(s.idx.Subj.PlanFor(filter), filter, start, limit)
}

// nextInPlanLocked is nextMatchLocked with filter's plan at hand: a walk
// over many matches makes it once, not once per match.
func (s *Store) nextInPlanLocked(p index.Plan, filter string, start, limit uint64) (uint64, bool, error) {
	if start > limit {
		return 0, false, nil
	}
	switch {
	case p.Empty():
		return 0, false, nil
	case p.All:
		q, ok := s.idx.Seqs.Next(start)
		return q, ok && q <= limit, nil
	case p.Wide:
		for q, ok := s.idx.Seqs.Next(start); ok && q <= limit; q, ok = s.idx.Seqs.Next(q + 1) {
			subj, err := s.subjectLocked(q)
			if err != nil {
				return 0, false, err
			}
			if subject.Match(filter, subj) {
				return q, true, nil
			}
		}
		return 0, false, nil
	default:
		q, ok := p.NextIn(start, s.idx.Seqs.Live)
		return q, ok && q <= limit, nil
	}
}

// subjectLocked returns the subject of a live sequence, reading buffered
// records from the write buffer if needed.
func (s *Store) subjectLocked(seq uint64) (string, error) {
	loc, ok := s.idx.Seqs.Lookup(seq)
	if !ok {
		return "", store.ErrNotFound
	}
	r, err := s.recordAnyLocked(loc)
	if err != nil {
		return "", err
	}
	return string(r.Subject), nil
}

// recordAnyLocked reads a record wherever it is, including the write buffer.
func (s *Store) recordAnyLocked(loc index.Loc) (segment.Record, error) {
	seg := s.segByID(loc.Seg)
	if seg == nil {
		return segment.Record{}, fmt.Errorf("wal: %s: index names missing segment %d: %w", s.dir, loc.Seg, store.ErrCorrupt)
	}
	if int64(loc.Off) >= seg.Flushed() {
		return seg.ReadBuffered(int64(loc.Off))
	}
	r, _, err := seg.ReadAt(int64(loc.Off))
	return r, err
}

// LoadLast reads the last message matching filter.
func (s *Store) LoadLast(filter string, m *store.Msg) error {
	// No fixed bound: each attempt looks up to what is visible then, so a
	// message evicted by a newer one that became visible meanwhile makes
	// the next attempt find the newer one.
	err := s.LoadPrev(filter, math.MaxUint64, m)
	if errors.Is(err, store.ErrEOF) {
		return fmt.Errorf("wal: no message matching %q: %w", filter, store.ErrNotFound)
	}
	return err
}

// checkFilter validates a subject filter ("" means all).
func checkFilter(filter string) error {
	if filter != "" && !subject.ValidFilter(filter) {
		return fmt.Errorf("%w: filter %q", store.ErrInvalidSubject, filter)
	}
	return nil
}

// LoadPrev reads the last message <= seq matching filter.
func (s *Store) LoadPrev(filter string, seq uint64, m *store.Msg) error {
	if err := checkFilter(filter); err != nil {
		return err
	}
	for {
		q, err := s.prevMatch(filter, seq)
		if err != nil {
			return err
		}
		err = s.loadInto(q, m, false)
		if errors.Is(err, store.ErrNotFound) {
			// Removed since prevMatch found it (a limit evicted it, say):
			// look again; it will not be found a second time.
			continue
		}
		return err
	}
}

func (s *Store) prevMatch(filter string, seq uint64) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, store.ErrClosed
	}
	q, ok, err := s.prevInPlanLocked(s.idx.Subj.PlanFor(filter), filter, min(seq, s.visible))
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("wal: no message matching %q at or before %d: %w", filter, seq, store.ErrEOF)
	}
	return q, nil
}

// prevInPlanLocked returns the last live message at or before seq that
// matches filter, whose plan is p.
func (s *Store) prevInPlanLocked(p index.Plan, filter string, seq uint64) (uint64, bool, error) {
	var (
		q  uint64
		ok bool
	)
	switch {
	case p.Empty():
	case p.All:
		q, ok = s.idx.Seqs.Prev(seq)
	case p.Wide:
		for q, ok = s.idx.Seqs.Prev(seq); ok; q, ok = s.idx.Seqs.Prev(q - 1) {
			subj, err := s.subjectLocked(q)
			if err != nil {
				return 0, false, err
			}
			if subject.Match(filter, subj) {
				break
			}
			if q == 1 {
				ok = false
				break
			}
		}
	default:
		q, ok = p.PrevIn(seq, s.idx.Seqs.Live)
	}
	return q, ok && q != 0, nil
}
