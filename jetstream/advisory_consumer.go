package jetstream

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
)

// Advisories about a consumer's messages: naks, terms, messages past
// max_deliver, and the sampled ack metric (sample_freq). They come from the
// ack path and the delivery rounds, so each consumer keeps its subjects
// ready: with no subscriber a nak or a term costs one interest lookup, and
// an ack nothing at all unless sample_freq is set.

// consumerEvents are the advisory subjects of one consumer.
type consumerEvents struct {
	nak, term, maxDeliver, ack string
}

func newConsumerEvents(stream, name string) consumerEvents {
	tail := stream + "." + name
	return consumerEvents{
		nak:        api.SubjAdvisoryMsgNaked + tail,
		term:       api.SubjAdvisoryMsgTerminated + tail,
		maxDeliver: api.SubjAdvisoryMaxDeliveries + tail,
		ack:        api.SubjMetricConsumerAck + tail,
	}
}

// sampled decides whether this ack is sampled, at freq percent.
func sampled(freq int) bool {
	switch {
	case freq <= 0:
		return false
	case freq >= 100:
		return true
	}
	return rand.IntN(100) < freq
}

// ackOutcome is what applyAck found about the acked message, for the
// advisories that follow.
type ackOutcome struct {
	wasPending  bool  // the message was pending (and a nak or ack applied to it)
	deliveredAt int64 // its last delivery (unix ns), when wasPending
	sample      bool  // an explicit ack picked by sample_freq
	closed      bool  // the consumer was closed: nothing was applied
}

// ackTokens reads the delivery count and the consumer sequence from an ack
// subject (9-token form, or the 11/12-token form with domain and account).
func ackTokens(subj string) (dc, cseq uint64) {
	var tok [12]string
	n := 0
	for rest := subj; n < len(tok); n++ {
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			tok[n] = rest
			n++
			break
		}
		tok[n], rest = rest[:i], rest[i+1:]
	}
	first := 4 // <dc> after $JS.ACK.<stream>.<consumer>
	if n >= 11 {
		first = 6
	}
	if n < first+3 {
		return 0, 0
	}
	dc, _ = strconv.ParseUint(tok[first], 10, 64)
	cseq, _ = strconv.ParseUint(tok[first+2], 10, 64)
	return dc, cseq
}

// adviseAck publishes the advisory or metric an ack message calls for: a
// nak of a pending message, any term (nats-server sends one even for a
// message no longer pending), or a sampled explicit ack.
func (c *consumer) adviseAck(kind ackKind, ackSubj string, sseq uint64, reason []byte, out ackOutcome) {
	js := c.js
	switch {
	case kind == ackNak && out.wasPending:
		if !js.listening(c.events.nak) {
			return
		}
		dc, cseq := ackTokens(ackSubj)
		js.publishEvent(c.events.nak, api.DeliveryNak{
			TypedEvent: newEvent(api.TypeAdvisoryNak), Stream: c.s.name, Consumer: c.name,
			ConsumerSeq: cseq, StreamSeq: sseq, Deliveries: dc,
		})
	case kind == ackTerm:
		if !js.listening(c.events.term) {
			return
		}
		dc, cseq := ackTokens(ackSubj)
		js.publishEvent(c.events.term, api.DeliveryTerminated{
			TypedEvent: newEvent(api.TypeAdvisoryTerminated), Stream: c.s.name, Consumer: c.name,
			ConsumerSeq: cseq, StreamSeq: sseq, Deliveries: dc, Reason: string(reason),
		})
	case out.sample && out.wasPending:
		if !js.listening(c.events.ack) {
			return
		}
		dc, cseq := ackTokens(ackSubj)
		ev := newEvent(api.TypeMetricConsumerAck)
		js.publishEvent(c.events.ack, api.ConsumerAckMetric{
			TypedEvent: ev, Stream: c.s.name, Consumer: c.name,
			ConsumerSeq: cseq, StreamSeq: sseq, Deliveries: dc,
			Delay: ev.Time.UnixNano() - out.deliveredAt,
		})
	}
}

// maxDelivered is a message set aside past max_deliver, to advise once the
// consumer's lock is released.
type maxDelivered struct {
	seq        consumerstate.StreamSeq
	deliveries uint64
}

// noteMaxDeliver records, for the advisory, a message that reached
// max_deliver after deliveries deliveries. Caller holds mu.
func (c *consumer) noteMaxDeliver(seq consumerstate.StreamSeq, deliveries uint64) {
	if c.env.listening(c.events.maxDeliver) {
		c.maxed = append(c.maxed, maxDelivered{seq: seq, deliveries: deliveries})
	}
}

// adviseMaxDeliver publishes the advisories noted during a round; called
// without mu, on the consumer's goroutine, with the round's list.
func (c *consumer) adviseMaxDeliver(list []maxDelivered) {
	for _, m := range list {
		c.env.publishEvent(c.events.maxDeliver, api.MaxDeliverExceeded{
			TypedEvent: newEvent(api.TypeAdvisoryMaxDeliver), Stream: c.s.name, Consumer: c.name,
			StreamSeq: uint64(m.seq), Deliveries: m.deliveries,
		})
	}
}
