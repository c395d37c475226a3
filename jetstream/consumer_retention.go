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
	switch s.retention() {
	case api.WorkQueueRetention:
		for _, seq := range seqs {
			s.deleteRetired(seq)
		}
	case api.InterestRetention:
		s.dropUnneeded(seqs, c)
	}
}

func (s *stream) retention() api.RetentionPolicy {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.Retention
}

// dropUnneeded deletes those of seqs that no consumer other than except
// still has to process.
func (s *stream) dropUnneeded(seqs []uint64, except *consumer) {
	var others []*consumer
	needSubject := false
	for _, d := range s.cons.all() {
		if d != except {
			others = append(others, d)
			if d.filtered() {
				needSubject = true
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
		s.deleteRetired(seq)
	}
}

func (s *stream) deleteRetired(seq uint64) {
	if err := s.store.Delete(seq, false); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
		s.env.log.Error("retention delete", "stream", s.name, "seq", seq, "error", err)
	}
}

// storedUnwanted is told of a new message that no consumer's filter
// matches. An interest stream does not keep such a message (nats-server
// does not store it); it is removed on the JetStream work queue, because
// the store's AppendDone callback, where this runs, must not delete.
func (s *stream) storedUnwanted(seq uint64) {
	if s.retention() != api.InterestRetention {
		return
	}
	cs := &s.cons
	cs.unwantedMu.Lock()
	cs.unwanted = append(cs.unwanted, seq)
	queue := !cs.unwantedQueued
	cs.unwantedQueued = true
	cs.unwantedMu.Unlock()
	if queue && !s.js.work.submit(s.removeUnwanted) {
		cs.unwantedMu.Lock()
		cs.unwanted, cs.unwantedQueued = nil, false
		cs.unwantedMu.Unlock()
	}
}

// removeUnwanted deletes the queued unwanted messages, unless a consumer
// created since wants them.
func (s *stream) removeUnwanted() {
	cs := &s.cons
	cs.unwantedMu.Lock()
	seqs := cs.unwanted
	cs.unwanted, cs.unwantedQueued = nil, false
	cs.unwantedMu.Unlock()
	s.dropUnneeded(seqs, nil)
}

// consumerGone is called when consumer c is deleted (not at shutdown): on
// an interest stream the messages after c's ack floor that no remaining
// consumer needs are removed, as nats-server does.
func (s *stream) consumerGone(c *consumer) {
	if s.retention() != api.InterestRetention {
		return
	}
	var floor uint64
	c.mu.Lock()
	c.withState(func(st *consumerstate.State) { floor = uint64(st.AckFloor.Stream) })
	c.mu.Unlock()
	others := s.cons.all()
	if len(others) == 0 {
		if _, err := s.store.Purge("", 0, 0); err != nil && !errors.Is(err, store.ErrClosed) {
			s.env.log.Error("retention purge", "stream", s.name, "error", err)
		}
		return
	}
	var m store.Msg
	var drop []uint64
	for seq := floor + 1; s.store.LoadNext("", seq, &m) == nil; seq = m.Seq + 1 {
		need := false
		for _, d := range others {
			if d.needs(m.Seq, m.Subject, true) {
				need = true
				break
			}
		}
		if !need {
			drop = append(drop, m.Seq)
		}
	}
	for _, seq := range drop {
		s.deleteRetired(seq)
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
