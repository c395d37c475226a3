package jetstream

import "github.com/jetwal/jetwal/consumerstate"

// Messages past max_deliver, as nats-server treats them. When a message is
// due for a redelivery beyond max_deliver (found as a delivery is being
// made), the consumer sets it aside: it is never delivered again and no
// longer counts in num_ack_pending or against max_ack_pending, but it is
// not acknowledged, so the ack floor stays below it, num_redelivered still
// counts it, and retention keeps it in a work queue or interest stream.
// Once an ack leaves nothing else pending, the set-aside messages are
// terminated and the floor moves up to the delivered sequence, as
// nats-server's consumer store does then (exhaustedDone). A late ack of
// such a message is taken as any ack.
//
// exhausted is memory only: after a restart such a message is pending
// again until it is found due once more, its delivery count at
// max_deliver, and set aside again.

// exhaust sets aside the pending message seq. Caller holds mu.
func (c *consumer) exhaust(seq consumerstate.StreamSeq) {
	if c.exhausted == nil {
		c.exhausted = make(map[consumerstate.StreamSeq]bool)
	}
	c.exhausted[seq] = true
}

// ackPending is the number of pending messages awaiting an ack, without
// the exhausted ones; those that left pending since (acked, purged) are
// forgotten here. Caller holds mu.
func (c *consumer) ackPending(st *consumerstate.State) int {
	n := st.NumPending()
	for seq := range c.exhausted {
		if _, ok := st.Pending[seq]; ok {
			n--
		} else {
			delete(c.exhausted, seq)
		}
	}
	return n
}

// exhaustedDone terminates the set-aside messages once nothing else is
// pending, which moves the ack floor to the delivered sequence. Those that
// were redelivered stay counted in num_redelivered, as nats-server keeps
// them. Caller holds mu.
func (c *consumer) exhaustedDone(st *consumerstate.State) {
	if len(c.exhausted) == 0 || c.ackPending(st) > 0 {
		return
	}
	for seq := range c.exhausted {
		if st.Redelivered[seq] > 0 {
			c.exhaustedRedelivered++
		}
		st.Term(seq)
		delete(c.exhausted, seq)
	}
}
