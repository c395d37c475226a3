package consumerstate

import "fmt"

// StreamSeq is a sequence number in the stream (the message's position).
type StreamSeq uint64

// ConsumerSeq is a consumer's delivery sequence: every delivery, first or
// redelivery, takes the next one.
type ConsumerSeq uint64

// SeqPair is a position in both sequence spaces.
type SeqPair struct {
	Consumer ConsumerSeq
	Stream   StreamSeq
}

// Pending is one delivered message that awaits an acknowledgement.
type Pending struct {
	// Consumer is the consumer sequence of the message's first delivery.
	// It does not change on redelivery, so pending entries ordered by
	// stream sequence are also ordered by consumer sequence.
	Consumer ConsumerSeq
	// Timestamp is the time of the last delivery, unix nanoseconds.
	Timestamp int64
	// NakAt is non-zero when a nak asked for redelivery: the message is due
	// again at this time (unix nanoseconds) rather than AckWait after
	// Timestamp. A redelivery clears it.
	NakAt int64
}

// State is a durable consumer's delivery and acknowledgement state.
//
// Change it only through its methods: they keep an internal ordering index
// and, inside a Consumer, record every change for the consumer's log. The
// exported fields are for reading. A State built by hand (or changed behind
// the methods' backs) is re-indexed on the next method call, but a Consumer
// cannot log such changes.
//
// A State is not safe for concurrent use; Consumer.Update serialises access.
// Copy one with Clone: a plain struct copy shares maps and index.
//
// Invariants (checked by Verify):
//   - AckFloor <= Delivered in both sequences;
//   - every pending entry lies above the floor and at or below Delivered,
//     in both sequences, and pending entries in stream order have strictly
//     increasing consumer sequences;
//   - with nothing pending, AckFloor == Delivered;
//   - Redelivered only names pending messages, each with a count >= 1.
//
// Terminated messages (Term) need no record of their own: they leave
// Pending, lie at or below Delivered.Stream so they are never delivered
// again, and count as acknowledged when the floor moves over them.
type State struct {
	// Delivered is the last delivery: the highest consumer sequence handed
	// out and the highest stream sequence ever delivered.
	Delivered SeqPair
	// AckFloor is the highest position at and below which everything is
	// acknowledged (or terminated, or was skipped by the consumer).
	AckFloor SeqPair
	// Pending maps each delivered, unacknowledged stream sequence to its
	// delivery. Empty under AckNone.
	Pending map[StreamSeq]Pending
	// Redelivered maps a pending stream sequence to its delivery count - 1;
	// only messages delivered more than once appear.
	Redelivered map[StreamSeq]uint64

	// order lists pending stream sequences in ascending order. Acked entries
	// stay until they reach the front (or a compaction), so order may hold
	// sequences no longer in Pending; live is the count that are.
	order    []StreamSeq
	orderBuf []StreamSeq // order's whole backing array: order is orderBuf[i:j]
	orderTmp []StreamSeq // scratch for rebuilding order
	headLive bool        // order[0] is known to be in Pending
	live     int
	indexed  bool
	// journal, when set by a Consumer, receives every change.
	journal *journal
}

// NumPending is the number of messages awaiting acknowledgement.
func (s *State) NumPending() int { return len(s.Pending) }

// DeliveryCount returns how many times the pending message sseq was
// delivered (0 if it is not pending).
func (s *State) DeliveryCount(sseq StreamSeq) uint64 {
	if _, ok := s.Pending[sseq]; !ok {
		return 0
	}
	return s.Redelivered[sseq] + 1
}

// ensureIndex rebuilds order when it does not describe Pending.
func (s *State) ensureIndex() {
	if s.indexed && s.live == len(s.Pending) {
		return
	}
	s.order, s.orderTmp = sortedSeqs(s, s.orderBuf[:cap(s.orderBuf)], s.orderTmp)
	s.orderBuf = s.order[:0]
	s.headLive = len(s.order) > 0
	s.live = len(s.Pending)
	s.indexed = true
}

// minPending returns the lowest pending stream sequence, dropping dead
// entries from the front of order.
func (s *State) minPending() (StreamSeq, bool) {
	if s.headLive && len(s.order) > 0 {
		return s.order[0], true
	}
	for len(s.order) > 0 {
		if _, ok := s.Pending[s.order[0]]; ok {
			s.headLive = true
			return s.order[0], true
		}
		s.order = s.order[1:]
	}
	s.headLive = false
	return 0, false
}

// compactOrder rebuilds order from Pending when dead entries outnumber
// live ones, which keeps order within 2×pending+64 entries at an amortized
// cost of O(1) per removal.
func (s *State) compactOrder() {
	if len(s.order) <= 2*s.live+64 {
		return
	}
	s.order, s.orderTmp = sortedSeqs(s, s.orderTmp, s.orderBuf[:cap(s.orderBuf)])
	s.orderBuf = s.order[:0]
	s.headLive = len(s.order) > 0
}

// pushOrder appends a newly pending sequence to order. When order has run
// into the end of its backing array it moves back to the start if at least
// half the array is free, else to a new array twice its length: amortized
// one copied entry per push, and no allocation in a steady state.
func (s *State) pushOrder(sseq StreamSeq) {
	if len(s.order) == 0 {
		s.headLive = true
	}
	if len(s.order) == cap(s.order) {
		if len(s.order) >= cap(s.orderBuf)/2 {
			s.orderBuf = make([]StreamSeq, 0, 2*len(s.order)+16)
		}
		s.order = s.orderBuf[:copy(s.orderBuf[:cap(s.orderBuf)], s.order)]
	}
	s.order = append(s.order, sseq)
}

// Deliver records a delivery of stream message sseq made at time ts (unix
// nanoseconds) and returns the consumer sequence assigned to it, which is
// Delivered.Consumer+1.
//
// dcount is the delivery count including this one. dcount == 1 is a first
// delivery: sseq must lie above Delivered.Stream, and the message becomes
// pending. dcount > 1 is a redelivery of a pending message: its timestamp
// is updated, any nak is cleared, and its redelivery count becomes dcount-1
// (never lowered). Anything else returns an error wrapping
// ErrInvalidDelivery and changes nothing.
//
// Use DeliverNoAck for consumers with AckNone.
func (s *State) Deliver(sseq StreamSeq, dcount uint64, ts int64) (ConsumerSeq, error) {
	s.ensureIndex()
	cseq := s.Delivered.Consumer + 1
	switch {
	case dcount == 0:
		return 0, fmt.Errorf("deliver stream seq %d: delivery count 0: %w", sseq, ErrInvalidDelivery)
	case dcount == 1:
		if sseq <= s.Delivered.Stream {
			return 0, fmt.Errorf("first delivery of stream seq %d at or below delivered stream seq %d: %w",
				sseq, s.Delivered.Stream, ErrInvalidDelivery)
		}
		if s.Pending == nil {
			s.Pending = make(map[StreamSeq]Pending)
		}
		s.Pending[sseq] = Pending{Consumer: cseq, Timestamp: ts}
		s.pushOrder(sseq)
		s.live++
		s.Delivered = SeqPair{Consumer: cseq, Stream: sseq}
	default:
		p, ok := s.Pending[sseq]
		if !ok {
			return 0, fmt.Errorf("redelivery %d of stream seq %d, which is not pending: %w",
				dcount, sseq, ErrInvalidDelivery)
		}
		p.Timestamp = ts
		p.NakAt = 0
		s.Pending[sseq] = p
		if s.Redelivered == nil {
			s.Redelivered = make(map[StreamSeq]uint64)
		}
		if s.Redelivered[sseq] < dcount-1 {
			s.Redelivered[sseq] = dcount - 1
		}
		s.Delivered.Consumer = cseq
	}
	if s.journal != nil {
		s.journal.deliver(sseq, dcount, ts)
	}
	return cseq, nil
}

// DeliverNoAck records a delivery for a consumer that expects no acks
// (AckNone): Delivered and AckFloor both move to the new position. sseq
// must lie above Delivered.Stream and nothing may be pending.
func (s *State) DeliverNoAck(sseq StreamSeq) (ConsumerSeq, error) {
	if sseq <= s.Delivered.Stream {
		return 0, fmt.Errorf("no-ack delivery of stream seq %d at or below delivered stream seq %d: %w",
			sseq, s.Delivered.Stream, ErrInvalidDelivery)
	}
	if len(s.Pending) > 0 {
		return 0, fmt.Errorf("no-ack delivery of stream seq %d with %d messages pending: %w",
			sseq, len(s.Pending), ErrInvalidDelivery)
	}
	cseq := s.Delivered.Consumer + 1
	s.Delivered = SeqPair{Consumer: cseq, Stream: sseq}
	s.AckFloor = s.Delivered
	if s.journal != nil {
		s.journal.seqOp(opDeliverNoAck, uint64(sseq))
	}
	return cseq, nil
}

// Ack acknowledges the pending message sseq and reports whether it was
// pending. When it was the lowest pending message the ack floor advances to
// just below the next pending message, or to Delivered if none is left.
func (s *State) Ack(sseq StreamSeq) bool {
	if !s.remove(sseq) {
		return false
	}
	if s.journal != nil {
		s.journal.seqOp(opAck, uint64(sseq))
	}
	return true
}

// Term terminates the pending message sseq: it is never redelivered and
// counts as acknowledged for the ack floor. It reports whether sseq was
// pending.
func (s *State) Term(sseq StreamSeq) bool {
	if !s.remove(sseq) {
		return false
	}
	if s.journal != nil {
		s.journal.seqOp(opTerm, uint64(sseq))
	}
	return true
}

// remove drops sseq from pending and moves the floor if it was the lowest.
func (s *State) remove(sseq StreamSeq) bool {
	s.ensureIndex()
	if _, ok := s.Pending[sseq]; !ok {
		return false
	}
	delete(s.Pending, sseq)
	delete(s.Redelivered, sseq)
	s.live--
	if len(s.order) > 0 && s.order[0] == sseq {
		s.headLive = false
	}
	if next, ok := s.minPending(); !ok || next > sseq {
		s.raiseFloor()
	}
	s.compactOrder()
	return true
}

// raiseFloor puts the floor just below the lowest pending message, or at
// Delivered when nothing is pending. The caller knows the floor may move.
func (s *State) raiseFloor() {
	next, ok := s.minPending()
	if !ok {
		s.AckFloor = s.Delivered
		return
	}
	s.AckFloor = SeqPair{Consumer: s.Pending[next].Consumer - 1, Stream: next - 1}
}

// AckAll acknowledges every pending message at or below sseq (AckAll
// policy) and returns how many there were.
func (s *State) AckAll(sseq StreamSeq) int {
	s.ensureIndex()
	n := 0
	s.headLive = false
	for len(s.order) > 0 && s.order[0] <= sseq {
		head := s.order[0]
		s.order = s.order[1:]
		if _, ok := s.Pending[head]; ok {
			delete(s.Pending, head)
			delete(s.Redelivered, head)
			s.live--
			n++
		}
	}
	if n == 0 {
		return 0
	}
	s.raiseFloor()
	if s.journal != nil {
		s.journal.seqOp(opAckAll, uint64(sseq))
	}
	return n
}

// Nak marks the pending message sseq for redelivery at time at (unix
// nanoseconds: now for an immediate nak, now plus the delay otherwise) and
// reports whether it was pending. at <= 0 is stored as 1, "due now". The
// message stays pending; the next Deliver of it clears the mark.
func (s *State) Nak(sseq StreamSeq, at int64) bool {
	p, ok := s.Pending[sseq]
	if !ok {
		return false
	}
	if at <= 0 {
		at = 1
	}
	p.NakAt = at
	s.Pending[sseq] = p
	if s.journal != nil {
		s.journal.nak(sseq, at)
	}
	return true
}

// Reset forgets all pending messages and restarts delivery at stream
// sequence start: Delivered.Stream and AckFloor.Stream become start-1 (0
// for start 0). Consumer sequences keep counting from where they were.
func (s *State) Reset(start StreamSeq) {
	s.restart(start)
	if s.journal != nil {
		s.journal.seqOp(opReset, uint64(start))
	}
}

// Rewind is Reset for a consumer reset (CONSUMER.RESET): delivery restarts
// at stream sequence start and consumer sequences restart too, so
// Delivered and AckFloor become {0, start-1}, as nats-server reports them.
func (s *State) Rewind(start StreamSeq) {
	s.restart(start)
	s.Delivered.Consumer = 0
	s.AckFloor = s.Delivered
	if s.journal != nil {
		s.journal.seqOp(opRewind, uint64(start))
	}
}

// restart forgets everything pending and sets Delivered.Stream and the ack
// floor to start-1, consumer sequences unchanged; unjournaled.
func (s *State) restart(start StreamSeq) {
	clear(s.Pending)
	clear(s.Redelivered)
	s.order = s.orderBuf[:0]
	s.headLive = false
	s.live = 0
	s.indexed = true
	s.Delivered.Stream = 0
	if start > 0 {
		s.Delivered.Stream = start - 1
	}
	s.AckFloor = s.Delivered
}

// Clone returns a deep copy of s that shares nothing with it and records
// no journal.
func (s *State) Clone() State {
	c := State{Delivered: s.Delivered, AckFloor: s.AckFloor}
	if s.Pending != nil {
		c.Pending = make(map[StreamSeq]Pending, len(s.Pending))
		for k, v := range s.Pending {
			c.Pending[k] = v
		}
	}
	if s.Redelivered != nil {
		c.Redelivered = make(map[StreamSeq]uint64, len(s.Redelivered))
		for k, v := range s.Redelivered {
			c.Redelivered[k] = v
		}
	}
	return c
}

// Equal reports whether s and o hold the same state (nil and empty maps are
// equal).
func (s *State) Equal(o *State) bool {
	if s.Delivered != o.Delivered || s.AckFloor != o.AckFloor ||
		len(s.Pending) != len(o.Pending) || len(s.Redelivered) != len(o.Redelivered) {
		return false
	}
	for k, v := range s.Pending {
		if w, ok := o.Pending[k]; !ok || w != v {
			return false
		}
	}
	for k, v := range s.Redelivered {
		if w, ok := o.Redelivered[k]; !ok || w != v {
			return false
		}
	}
	return true
}
