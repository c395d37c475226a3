package memstore

import (
	"sort"
	"time"

	"github.com/jetwal/jetwal/store"
)

// State returns a snapshot of the store's counters. After Close it returns
// the zero State.
func (s *Store) State() store.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stateLocked()
}

// StateWithDeleted is State with Deleted listing, in ascending order, the
// sequences between FirstSeq and LastSeq that hold no message (the lowest
// store.MaxDeletedList of them).
func (s *Store) StateWithDeleted() store.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.stateLocked()
	if st.NumDeleted == 0 {
		return st
	}
	st.Deleted = make([]uint64, 0, min(st.NumDeleted, store.MaxDeletedList))
	for i := 0; i < s.ents.len() && len(st.Deleted) < store.MaxDeletedList; i++ {
		if !s.ents.at(i).live() {
			st.Deleted = append(st.Deleted, s.base+uint64(i))
		}
	}
	for seq := s.lastLive() + 1; seq <= s.last && len(st.Deleted) < store.MaxDeletedList; seq++ {
		st.Deleted = append(st.Deleted, seq)
	}
	return st
}

func (s *Store) stateLocked() store.State {
	if s.closed {
		return store.State{}
	}
	st := store.State{
		Msgs:        s.msgs,
		Bytes:       s.bytes,
		FirstSeq:    s.first,
		LastSeq:     s.last,
		NumSubjects: len(s.subjects),
	}
	if s.msgs > 0 {
		st.FirstTime = time.Unix(0, s.ents.front().ts).UTC()
		st.NumDeleted = int(s.last - s.first + 1 - s.msgs)
	}
	if s.lastTs != 0 {
		st.LastTime = time.Unix(0, s.lastTs).UTC()
	}
	return st
}

// SubjectsState summarises the subjects matching filter ("" or ">" for
// all). An invalid filter matches nothing.
func (s *Store) SubjectsState(filter string) map[string]store.SubjectState {
	out := make(map[string]store.SubjectState)
	kind, err := parseFilter(filter)
	if err != nil {
		return out
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return out
	}
	add := func(ss *subjState) {
		out[ss.name] = store.SubjectState{Msgs: uint64(len(ss.seqs)), First: ss.firstSeq(), Last: ss.lastSeq()}
	}
	list, all := s.subjectsFor(kind, filter)
	if all {
		for _, ss := range s.subjects {
			add(ss)
		}
		return out
	}
	for _, ss := range list {
		add(ss)
	}
	return out
}

// NumPending counts messages with sequence >= start matching filter; with
// lastPerSubject it counts the matching subjects whose newest message is at
// or after start. An invalid filter matches nothing.
func (s *Store) NumPending(start uint64, filter string, lastPerSubject bool) uint64 {
	kind, err := parseFilter(filter)
	if err != nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.msgs == 0 {
		return 0
	}
	start = max(start, s.first)
	if start > s.lastLive() {
		return 0
	}
	list, all := s.subjectsFor(kind, filter)
	if all {
		if !lastPerSubject {
			return s.countLive(start, s.lastLive())
		}
		var n uint64
		for _, ss := range s.subjects {
			if ss.lastSeq() >= start {
				n++
			}
		}
		return n
	}
	var n uint64
	for _, ss := range list {
		switch {
		case lastPerSubject:
			if ss.lastSeq() >= start {
				n++
			}
		default:
			n += ss.countFrom(start)
		}
	}
	return n
}

// SeqForTime returns the first sequence stored at or after t, or LastSeq+1
// if every message is older.
func (s *Store) SeqForTime(t time.Time) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0
	}
	if s.msgs == 0 {
		return s.last + 1
	}
	if !t.After(time.Unix(0, s.ents.front().ts)) {
		return s.first
	}
	if t.After(time.Unix(0, s.ents.back().ts)) {
		return s.last + 1
	}
	// t lies between two stored times, so UnixNano is exact. Tombstones
	// keep their times, so the ring is sorted by ts throughout.
	tn := t.UnixNano()
	i := sort.Search(s.ents.len(), func(i int) bool { return s.ents.at(i).ts >= tn })
	for !s.ents.at(i).live() {
		i++
	}
	return s.base + uint64(i)
}
