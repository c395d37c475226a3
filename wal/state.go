package wal

import (
	"time"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/store"
)

// tsLocked returns the timestamp of a live sequence (0 if unreadable).
func (s *Store) tsLocked(seq uint64) int64 {
	loc, ok := s.idx.Seqs.Lookup(seq)
	if !ok {
		return 0
	}
	r, err := s.recordAnyLocked(loc)
	if err != nil {
		return 0
	}
	return r.Time
}

func (s *Store) stateLocked(withDeleted bool) store.State {
	var st store.State
	st.LastSeq = s.visible
	inflight := uint64(0)
	if s.visible < s.last {
		inflight = uint64(s.idx.Seqs.CountFrom(s.visible + 1))
	}
	st.Msgs = s.msgs - min(s.msgs, inflight)
	st.Bytes = s.bytes - min(s.bytes, s.pendB)
	st.NumSubjects = s.idx.Subj.Len()
	if s.visTS != 0 {
		st.LastTime = time.Unix(0, s.visTS).UTC()
	}
	if first, ok := s.idx.Seqs.First(); ok && first <= s.visible {
		st.FirstSeq = first
		st.FirstTime = time.Unix(0, s.tsLocked(first)).UTC()
		st.NumDeleted = int(st.LastSeq - st.FirstSeq + 1 - st.Msgs)
		if withDeleted && st.NumDeleted > 0 {
			last, _ := s.idx.Seqs.Last()
			s.idx.Seqs.Deleted(func(q uint64) bool {
				if q > st.LastSeq || len(st.Deleted) == store.MaxDeletedList {
					return false // ascending: the rest are past either bound too
				}
				st.Deleted = append(st.Deleted, q)
				return true
			})
			// Sequences after the last live message up to LastSeq.
			for q := last + 1; q <= st.LastSeq && len(st.Deleted) < store.MaxDeletedList; q++ {
				st.Deleted = append(st.Deleted, q)
			}
		}
	} else {
		st.FirstSeq = max(s.visible+1, s.floor)
		if s.visible == 0 && s.floor == 0 {
			st.FirstSeq = 0 // a store that never held a message, as JetStream reports it
		}
		st.Msgs, st.Bytes = 0, 0
	}
	if s.lost != nil {
		l := *s.lost
		st.Lost = &l
	}
	return st
}

// State returns a snapshot of the store's contents.
func (s *Store) State() store.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stateLocked(false)
}

// StateWithDeleted is State with the interior deleted sequences listed.
func (s *Store) StateWithDeleted() store.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stateLocked(true)
}

// SubjectsState summarises subjects matching filter.
func (s *Store) SubjectsState(filter string) map[string]store.SubjectState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]store.SubjectState)
	if checkFilter(filter) != nil {
		return out
	}
	s.idx.Subj.Each(filter, func(name string, info index.SubjectInfo) {
		if info.First > s.visible {
			return
		}
		out[name] = store.SubjectState{Msgs: info.Msgs, First: info.First, Last: min(info.Last, s.visible)}
	})
	return out
}

// NumPending counts messages >= start matching filter.
func (s *Store) NumPending(start uint64, filter string, lastPerSubject bool) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if start == 0 {
		start = 1
	}
	if start > s.visible || checkFilter(filter) != nil {
		return 0
	}
	if (filter == "" || filter == ">") && !lastPerSubject {
		n := uint64(s.idx.Seqs.CountFrom(start))
		if s.visible < s.last {
			n -= min(n, uint64(s.idx.Seqs.CountFrom(s.visible+1)))
		}
		return n
	}
	if !lastPerSubject {
		return s.pendingLocked(filter, start) // pending.go
	}
	p := s.idx.Subj.PlanSubjects(filter)
	return p.CountSubjectsIn(start, s.visible, s.visibleLive)
}

// SeqForTime returns the first sequence stored at or after t.
func (s *Store) SeqForTime(t time.Time) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	target := t.UnixNano()
	lo, ok := s.idx.Seqs.First()
	if !ok || lo > s.visible {
		return s.visible + 1
	}
	// Smallest m in [lo, visible+1] whose next live message is at or after
	// target; timestamps never decrease with sequence.
	hi := s.visible + 1
	for lo < hi {
		mid := lo + (hi-lo)/2
		q, ok := s.idx.Seqs.Next(mid)
		if !ok || q > s.visible || s.tsLocked(q) >= target {
			hi = mid
		} else {
			lo = q + 1
		}
	}
	if q, ok := s.idx.Seqs.Next(lo); ok && q <= s.visible {
		return q
	}
	return s.visible + 1
}
