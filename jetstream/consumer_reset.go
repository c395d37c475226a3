package jetstream

import (
	"errors"
	"slices"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// Consumer reset (nats-server 2.14+, CONSUMER.RESET.<stream>.<consumer>).
// An empty body (or seq 0) moves the consumer back to its ack floor + 1:
// everything delivered but not acknowledged is forgotten and comes again
// as a first delivery. {"seq": N} moves it to stream sequence N, backwards
// or forwards, but only a consumer whose deliver policy is all,
// by_start_sequence (N not below opt_start_seq) or by_start_time (N not
// below the first message at opt_start_time) may name a sequence; others
// get 10204 "invalid reset: not allowed". Either way delivery restarts at
// the reset sequence with consumer sequences from 1, the delivered and ack
// floor pairs become {0, seq-1}, and the response is the consumer's info
// with reset_seq.
//
// Durability: a durable consumer's reset is a log operation of its own
// (consumerstate's rewind), flushed before the answer; a durable consumer
// of a replicated stream checkpoints its state into the meta group before
// the answer, so the next leader starts from the reset position.
//
// One difference from nats-server: nats-server serves the subject from
// the consumer's own subscription and leaves a request for a stream or
// consumer that does not exist unanswered (the client times out); jetwal
// answers it with 10059 or 10014.

// errResetNotAllowed and friends are the {err} of 10204, nats-server's words.
var (
	errResetNotAllowed     = errors.New("not allowed")
	errResetBelowStartSeq  = errors.New("below start seq")
	errResetBelowStartTime = errors.New("below start time")
)

// persistReset makes a reset durable before it is answered.
func (cm *consumerManager) persistReset(c *consumer) error {
	switch {
	case c.cs != nil:
		return c.cs.Flush()
	case c.s.rep != nil && c.cfg.Durable != "":
		return cm.js.confirmReplicated(c)
	}
	return nil
}

// reset moves the consumer to stream sequence seq (0: its ack floor + 1)
// and returns the sequence delivery restarts at.
func (c *consumer) reset(seq uint64) (uint64, error) {
	c.mu.Lock()
	var floor uint64
	c.withState(func(st *consumerstate.State) { floor = uint64(st.AckFloor.Stream) })
	if seq == 0 {
		seq = floor + 1
	} else if err := c.resetAllowed(seq); err != nil {
		c.mu.Unlock()
		return 0, err
	}
	seq = max(seq, 1)
	c.withState(func(st *consumerstate.State) { st.Rewind(consumerstate.StreamSeq(seq)) })
	clear(c.progress)
	clear(c.exhausted)
	c.rdq = c.rdq[:0]
	c.exhaustedRedelivered = 0
	c.dueAt = 0
	c.lastDlv, c.lastAck = time.Time{}, time.Time{}
	if c.cfg.DeliverPolicy == api.DeliverLastPerSubject {
		// The picks at or after the reset sequence come again.
		c.lps = slices.DeleteFunc(slices.Clone(c.lpsAll), func(q uint64) bool { return q < seq })
	}
	c.mu.Unlock()
	if seq > floor+1 && c.s.retention() == api.InterestRetention {
		// Skipped forward: the messages passed over are done for this
		// consumer, and go when no other consumer needs them.
		c.s.dropUnneeded(c.s.seqsBetween(floor+1, seq-1), c)
	}
	return seq, nil
}

// resetAllowed checks an explicit reset sequence against the consumer's
// deliver policy. Caller holds mu.
func (c *consumer) resetAllowed(seq uint64) error {
	switch c.cfg.DeliverPolicy {
	case api.DeliverAll:
		return nil
	case api.DeliverByStartSequence:
		if seq < c.cfg.OptStartSeq {
			return errResetBelowStartSeq
		}
		return nil
	case api.DeliverByStartTime:
		if c.cfg.OptStartTime != nil && seq < c.s.store.SeqForTime(*c.cfg.OptStartTime) {
			return errResetBelowStartTime
		}
		return nil
	}
	return errResetNotAllowed
}

// seqsBetween lists the sequences of the messages stored in [from, to].
func (s *stream) seqsBetween(from, to uint64) []uint64 {
	var seqs []uint64
	var m store.Msg
	for seq := from; seq <= to && s.store.LoadNext("", seq, &m) == nil && m.Seq <= to; seq = m.Seq + 1 {
		seqs = append(seqs, m.Seq)
	}
	return seqs
}
