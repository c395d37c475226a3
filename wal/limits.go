package wal

import (
	"strings"

	"github.com/jetwal/jetwal/store"
)

// Limit evictions and visibility. An append that a limit makes room for
// (max messages per subject, or max messages or bytes with discard old)
// evicts the old message only once the new one is visible: a reader
// looking up the subject's last message (a KV get) sees the old value or
// the new one, never neither. Until then the evicted message stays
// readable, and counts over the limit by what is in flight.

// pendingTrim is an append whose evictions wait for its visibility.
type pendingTrim struct {
	seq  uint64
	subj string
}

// setLimitsLocked makes l the store's limits and derives what an append
// checks from them.
func (s *Store) setLimitsLocked(l store.Limits) {
	s.limits = l
	s.evicts = l.MaxMsgsPerSubject > 0 || (l.Discard == store.DiscardOld && (l.MaxMsgs > 0 || l.MaxBytes > 0))
	s.admits = l.MaxMsgSize > 0 || l.MaxBytes > 0 || l.Discard == store.DiscardNew
}

// evictsOnAppend reports whether the limits can evict on an append.
func (s *Store) evictsOnAppend() bool { return s.evicts }

// limitAfterAppendLocked applies the limits for an append of subj at seq:
// now if it is visible already, else when it becomes visible.
func (s *Store) limitAfterAppendLocked(seq uint64, subj string) {
	if !s.evictsOnAppend() {
		return
	}
	if seq <= s.visible {
		s.enforceLimitsLocked(subj)
		return
	}
	// Only a per-subject limit needs the subject (a copy: the caller's
	// may live in a buffer it reuses). One set later by UpdateLimits
	// trims every subject then, in-flight messages counted.
	t := pendingTrim{seq: seq}
	if s.limits.MaxMsgsPerSubject > 0 {
		t.subj = strings.Clone(subj)
	}
	s.trims = append(s.trims, t)
}

// applyTrimsLocked applies the evictions of appends that became visible.
// What is still in flight counts on top of each limit: it is not visible,
// and it will apply its own evictions when it is.
func (s *Store) applyTrimsLocked() {
	i := 0
	for i < len(s.trims) && s.trims[i].seq <= s.visible {
		i++
	}
	if i == 0 {
		return
	}
	var inflight map[string]uint64
	if len(s.trims) > i && s.limits.MaxMsgsPerSubject > 0 {
		inflight = make(map[string]uint64)
		for _, p := range s.trims[i:] {
			inflight[p.subj]++
		}
	}
	l := s.limits
	for _, p := range s.trims[:i] {
		if l.MaxMsgsPerSubject > 0 {
			s.trimSubjectLocked(p.subj, uint64(l.MaxMsgsPerSubject)+inflight[p.subj])
		}
	}
	if l.Discard == store.DiscardOld {
		pend := s.last - s.visible
		p := s.newPruner()
		for l.MaxMsgs > 0 && s.msgs > uint64(l.MaxMsgs)+pend {
			if !s.evictFirstLocked(p) {
				break
			}
		}
		for l.MaxBytes > 0 && s.bytes > uint64(l.MaxBytes)+s.pendB {
			if !s.evictFirstLocked(p) {
				break
			}
		}
		p.finishLocked()
	}
	if len(s.tombs) > 0 {
		s.dropDeadLocked()
	}
	n := copy(s.trims, s.trims[i:])
	clear(s.trims[n:])
	s.trims = s.trims[:n]
}
