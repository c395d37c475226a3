package memstore

import (
	"errors"
	"fmt"
)

// errCheck is the sentinel Check wraps.
var errCheck = errors.New("memstore: inconsistent")

// Check verifies the store's internal invariants: the dense slice, the
// subject index and the counters agree with one another. It returns nil or
// an error describing the first inconsistency. It is meant for tests and
// takes the store's lock shared for a full scan.
func (s *Store) Check() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errCheck, fmt.Sprintf(format, args...))
	}
	if s.msgs == 0 {
		if s.ents.len() != 0 || len(s.subjects) != 0 || s.bytes != 0 {
			return fail("empty store holds %d slots, %d subjects, %d bytes", s.ents.len(), len(s.subjects), s.bytes)
		}
		if s.first != s.last+1 && (s.first != 0 || s.last != 0) {
			return fail("empty store first=%d last=%d", s.first, s.last)
		}
		return nil
	}
	if !s.ents.front().live() || !s.ents.back().live() {
		return fail("tombstone at an end of the slice")
	}
	if s.first != s.base || s.lastLive() > s.last {
		return fail("first=%d base=%d lastLive=%d last=%d", s.first, s.base, s.lastLive(), s.last)
	}
	var msgs, bytes uint64
	perSubj := make(map[*subjState]int)
	prevTs := s.ents.front().ts
	for i := 0; i < s.ents.len(); i++ {
		e := s.ents.at(i)
		seq := s.base + uint64(i)
		if e.ts < prevTs {
			return fail("time goes back at seq %d", seq)
		}
		prevTs = e.ts
		if !e.live() {
			continue
		}
		msgs++
		bytes += e.size()
		if s.subjects[e.subj.name] != e.subj {
			return fail("seq %d has unindexed subject %q", seq, e.subj.name)
		}
		k := perSubj[e.subj]
		if k >= len(e.subj.seqs) || e.subj.seqs[k] != seq {
			return fail("seq %d missing from index of %q", seq, e.subj.name)
		}
		perSubj[e.subj] = k + 1
	}
	if msgs != s.msgs || bytes != s.bytes {
		return fail("counted %d msgs %d bytes, state says %d and %d", msgs, bytes, s.msgs, s.bytes)
	}
	for name, ss := range s.subjects {
		if ss.name != name || perSubj[ss] != len(ss.seqs) || len(ss.seqs) == 0 {
			return fail("subject %q index holds %d sequences, %d live", name, len(ss.seqs), perSubj[ss])
		}
	}
	if s.limits.MaxMsgs > 0 && s.msgs > uint64(s.limits.MaxMsgs) {
		return fail("%d msgs over limit %d", s.msgs, s.limits.MaxMsgs)
	}
	if s.limits.MaxBytes > 0 && s.bytes > uint64(s.limits.MaxBytes) {
		return fail("%d bytes over limit %d", s.bytes, s.limits.MaxBytes)
	}
	if per := s.limits.MaxMsgsPerSubject; per > 0 {
		for name, ss := range s.subjects {
			if int64(len(ss.seqs)) > per {
				return fail("subject %q holds %d msgs over limit %d", name, len(ss.seqs), per)
			}
		}
	}
	return nil
}
