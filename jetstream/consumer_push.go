package jetstream

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
)

// fcWindow is how many bytes a flow-controlled push consumer sends between
// flow control requests; it stalls once a second window would start while
// the previous request is unanswered.
const fcWindow = 512 << 10

// fcCounter makes flow control reply subjects unique.
var fcCounter atomic.Uint64

// fcStalled reports whether flow control holds delivery back. Caller holds mu.
func (c *consumer) fcStalled() bool {
	return c.cfg.FlowControl && c.fcReply != "" && c.fcBytes >= fcWindow
}

// flowControl accounts a delivered message and, once a window is full (or
// for a flow control ack policy, max_ack_pending is reached), queues a flow
// control request behind it. Caller holds mu and is inside withState (st).
func (c *consumer) flowControl(size int, st *consumerstate.State) {
	if !c.cfg.FlowControl {
		return
	}
	c.fcBytes += size
	if c.fcReply != "" {
		return
	}
	if c.fcBytes >= fcWindow || c.cfg.AckPolicy == api.AckFlowControl && c.cfg.MaxAckPending > 0 && st.NumPending() >= c.cfg.MaxAckPending {
		c.sendFlowControl()
	}
}

// sendFlowControl queues a flow control request. Caller holds mu.
func (c *consumer) sendFlowControl() {
	// The id is unique (the counter) and not guessable (the random part):
	// an answer to it acknowledges messages of a flow_control consumer.
	c.fcReply = "$JS.FC." + c.s.name + "." + c.name + "." + strconv.FormatUint(fcCounter.Add(1), 36) + strconv.FormatUint(rand.Uint64(), 36)
	c.fcBytes = 0
	o := statusMsg(c.cfg.DeliverSubject, "100 FlowControl Request", -1, 0)
	o.reply = c.fcReply
	c.outs = append(c.outs, o)
}

// fcAckDue reports whether a flow control ack policy consumer has at least
// n messages awaiting the answer that acknowledges them. Caller holds mu.
func (c *consumer) fcAckDue(n int) bool {
	due := false
	c.withState(func(st *consumerstate.State) { due = n > 0 && st.NumPending() >= n })
	return due
}

// pushTimers sends an idle heartbeat when one is due. Caller holds mu.
//
// As with nats-server, the heartbeat clock starts when the consumer does
// (lastSend is its start, never 0), so the first heartbeat comes one
// interval after creation, not at once: clients such as nats.py count a
// heartbeat on a fresh subscription as a delivery, and a watch of an empty
// KV bucket never finished. A tick without interest sends nothing but
// restarts the clock, as nats-server's timer does (and never re-arms a
// timer already past due).
func (c *consumer) pushTimers(now int64, interest bool, soon func(int64)) {
	hb := int64(c.cfg.Heartbeat)
	if hb <= 0 {
		return
	}
	if !interest && now-c.lastSend >= hb {
		c.lastSend = now
	}
	if interest && now-c.lastSend >= hb {
		var last [2]uint64
		c.withState(func(st *consumerstate.State) {
			last = [2]uint64{uint64(st.Delivered.Consumer), uint64(st.Delivered.Stream)}
		})
		b := natshdr.AppendStatusLine(make([]byte, 0, 160), "100 Idle Heartbeat")
		b = natshdr.AppendUint(b, "Nats-Last-Consumer", last[0])
		b = natshdr.AppendUint(b, "Nats-Last-Stream", last[1])
		if c.fcReply != "" {
			b = natshdr.AppendString(b, "Nats-Consumer-Stalled", c.fcReply)
		}
		b = natshdr.End(b)
		c.outs = append(c.outs, outMsg{route: c.cfg.DeliverSubject, subj: c.cfg.DeliverSubject, hdr: b})
		c.lastSend = now
		// A flow control ack policy asks for its acks with each heartbeat
		// while anything is unacknowledged, as nats-server does.
		if c.cfg.AckPolicy == api.AckFlowControl && c.fcReply == "" && c.fcAckDue(1) {
			c.sendFlowControl()
		}
	}
	soon(c.lastSend + hb)
}

// handleFlowControl is the $JS.FC.> handler: a client answered a flow
// control request.
func (cm *consumerManager) handleFlowControl(m *server.Msg) {
	// $JS.FC.<stream>.<consumer>.<id>
	parts := strings.Split(m.Subject, ".")
	if len(parts) != 5 {
		return
	}
	s := cm.js.lookup(parts[2])
	if s == nil {
		return
	}
	c := s.cons.get(parts[3])
	if c == nil {
		return
	}
	c.mu.Lock()
	ok := c.fcReply == m.Subject
	var done []uint64
	if ok {
		c.fcReply = ""
		if c.cfg.AckPolicy == api.AckFlowControl {
			done = c.flowControlAck(m.Header)
		}
	}
	c.mu.Unlock()
	if len(done) > 0 {
		c.s.retire(c, done)
	}
	if ok {
		c.signal()
	}
}

// flowControlAck applies the acknowledgement a flow control answer carries
// for a flow control ack policy consumer: everything up to its
// Nats-Last-Stream sequence, as an ack all (an answer without one acks
// nothing). It returns the stream sequences it finished. Caller holds mu.
func (c *consumer) flowControlAck(hdr []byte) []uint64 {
	last, err := strconv.ParseUint(string(headerValue(hdr, "Nats-Last-Stream")), 10, 64)
	if err != nil || last == 0 {
		return nil
	}
	var done []uint64
	c.withState(func(st *consumerstate.State) {
		for seq := range st.Pending {
			if uint64(seq) <= last {
				done = append(done, uint64(seq))
			}
		}
		if st.AckAll(consumerstate.StreamSeq(last)) > 0 {
			c.exhaustedDone(st)
		}
	})
	if len(done) > 0 {
		c.lastAck = time.Now()
	}
	return done
}

// interestChanged is the server's interest hook: a subscription came or
// went, so push consumers re-check their deliver subjects.
func (cm *consumerManager) interestChanged() {
	if l := cm.pushList.Load(); l != nil {
		for _, c := range *l {
			c.signal()
		}
	}
}
