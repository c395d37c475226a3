package jetstream

import (
	"errors"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// retire removes messages that consumer c finished with (acknowledged,
// terminated, delivered without acks, or past max deliver) when the
// stream's retention says they may go: on a work queue at once, under
// interest once every other consumer that wants the message is done too.
func (s *stream) retire(c *consumer, seqs []uint64) {
	s.cfgMu.RLock()
	retention := s.cfg.Retention
	s.cfgMu.RUnlock()
	if retention == api.LimitsRetention {
		return
	}
	var others []*consumer
	needSubject := false
	if retention == api.InterestRetention {
		for _, d := range s.cons.all() {
			if d != c {
				others = append(others, d)
				if d.filtered() {
					needSubject = true
				}
			}
		}
	}
	var m store.Msg
	for _, seq := range seqs {
		if len(others) > 0 {
			subj := ""
			if needSubject {
				if err := s.store.Load(seq, &m); err != nil {
					continue
				}
				subj = m.Subject
			}
			keep := false
			for _, d := range others {
				if d.needs(seq, subj, needSubject) {
					keep = true
					break
				}
			}
			if keep {
				continue
			}
		}
		if err := s.store.Delete(seq, false); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
			s.js.log.Error("retention delete", "stream", s.name, "seq", seq, "error", err)
		}
	}
}

// filtered reports whether the consumer has filter subjects.
func (c *consumer) filtered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.filters) > 0
}

// needs reports whether the consumer still has to process stream message
// seq (with subject subj when checkSubject).
func (c *consumer) needs(seq uint64, subj string, checkSubject bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if checkSubject && !c.matches(subj) {
		return false
	}
	need := true
	c.withState(func(st *consumerstate.State) {
		q := consumerstate.StreamSeq(seq)
		if q <= st.AckFloor.Stream {
			need = false
			return
		}
		if q <= st.Delivered.Stream {
			_, pending := st.Pending[q]
			need = pending
		}
	})
	return need
}
