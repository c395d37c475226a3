package memstore

import (
	"time"

	"github.com/jetwal/jetwal/store"
)

// UpdateLimits applies new limits at once, dropping the oldest messages the
// new MaxMsgsPerSubject, MaxMsgs, MaxBytes or MaxAge no longer allow
// (whatever the discard policy: DiscardNew only governs new messages).
func (s *Store) UpdateLimits(l store.Limits) error {
	if err := validate(l); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	s.limits = l
	if l.MaxMsgsPerSubject > 0 {
		max := int(l.MaxMsgsPerSubject)
		// Collect first: removing may delete map entries.
		var over []*subjState
		for _, ss := range s.subjects {
			if len(ss.seqs) > max {
				over = append(over, ss)
			}
		}
		for _, ss := range over {
			for len(ss.seqs) > max {
				s.removeSeq(ss.firstSeq(), false)
			}
		}
	}
	s.enforceCounts(nil)
	// The armed timer may belong to an older MaxAge.
	if s.ageTimer != nil {
		s.ageTimer.Stop()
	}
	s.ageArmed = false
	s.expireLocked()
	s.armAgeTimer()
	return nil
}

// enforceCounts drops oldest messages until the count limits hold: first
// the per-subject limit for ss (the subject just appended to, or nil), then
// MaxMsgs and MaxBytes. Caller holds s.mu exclusively.
func (s *Store) enforceCounts(ss *subjState) {
	l := &s.limits
	if ss != nil && l.MaxMsgsPerSubject > 0 {
		for int64(len(ss.seqs)) > l.MaxMsgsPerSubject {
			s.removeSeq(ss.firstSeq(), false)
		}
	}
	if l.MaxMsgs > 0 {
		for s.msgs > uint64(l.MaxMsgs) {
			s.removeSeq(s.first, false)
		}
	}
	if l.MaxBytes > 0 {
		for s.bytes > uint64(l.MaxBytes) {
			s.removeSeq(s.first, false)
		}
	}
}

// armAgeTimer schedules expiry of the oldest message if MaxAge is set and
// no expiry is scheduled yet. Caller holds s.mu exclusively.
func (s *Store) armAgeTimer() {
	if s.limits.MaxAge <= 0 || s.msgs == 0 || s.ageArmed || s.closed {
		return
	}
	d := time.Duration(s.ents.front().ts+int64(s.limits.MaxAge)-time.Now().UnixNano()) + time.Millisecond
	if d < time.Millisecond {
		d = time.Millisecond
	}
	if s.ageTimer == nil {
		s.ageTimer = time.AfterFunc(d, s.expireTick)
	} else {
		s.ageTimer.Reset(d)
	}
	s.ageArmed = true
}

// expireTick is the age timer's callback.
func (s *Store) expireTick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ageArmed = false
	if s.closed {
		return
	}
	s.expireLocked()
	s.armAgeTimer()
}

// expireLocked removes messages older than MaxAge. Caller holds s.mu
// exclusively.
func (s *Store) expireLocked() {
	if s.limits.MaxAge <= 0 {
		return
	}
	cutoff := time.Now().UnixNano() - int64(s.limits.MaxAge)
	for s.msgs > 0 && s.ents.front().ts <= cutoff {
		s.removeSeq(s.first, false)
	}
}
