package server

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jetwal/jetwal/server/sublist"
)

// subscription is one SUB of a TCP client, or one internal subscription
// (client == nil, handler set). subject, queue, sid and handler never change
// after creation; the counters are atomics because any publishing goroutine
// may deliver to the subscription.
type subscription struct {
	client  *client
	handler Handler
	acc     *Account // internal subscriptions' account (a client's is its own)
	subject string
	queue   string
	sid     []byte
	deny    *sublist.List[string] // set when the owner may not receive some subjects this filter covers

	delivered atomic.Int64 // messages handed to this subscription
	max       atomic.Int64 // auto-unsubscribe after this many; 0 = none
	closed    atomic.Bool  // removed; stale sublist results skip it
}

type result = sublist.Result[*subscription]

// delivery is one message being routed.
type delivery struct {
	pub         *client  // publishing client; nil for Server.Publish
	acc         *Account // the account it is published in (route frames name it)
	subj, reply []byte
	hdr, data   []byte
	// Owned strings for internal handlers when the publisher already has
	// them (Server.Publish); otherwise they are made on demand.
	subjStr, replyStr string
}

// deliverTo hands d to one subscription, enforcing echo and auto-unsubscribe.
func (s *Server) deliverTo(d *delivery, sub *subscription) bool {
	if sub.closed.Load() {
		return false
	}
	dst := sub.client
	if dst != nil && dst == d.pub && !d.pub.opts.Echo {
		return false
	}
	if sub.deny != nil && !sub.deny.MatchOnce(bytesView(d.subj)).Empty() {
		return false
	}
	if dst != nil && len(d.reply) > 0 {
		if p := dst.perms.Load(); p != nil && p.resp != nil {
			p.noteReply(d.reply)
		}
	}
	n := sub.delivered.Add(1)
	last := false
	if max := sub.max.Load(); max > 0 {
		if n > max {
			s.dropSub(sub)
			return false
		}
		last = n == max
	}
	switch {
	case dst == nil:
		s.callHandler(d, sub)
	case dst.closed.Load():
		return false
	case d.pub != nil && d.pub.stageMsg(dst, sub.sid, d.subj, d.reply, d.hdr, d.data):
		// Staged; handed over at the end of the publisher's input chunk.
		s.countDelivery(d, dst)
	default:
		queued, ok := dst.queueMsg(sub.sid, d.subj, d.reply, d.hdr, d.data)
		if !ok {
			return false
		}
		s.countDelivery(d, dst)
		if d.pub != nil {
			d.pub.addPending(dst)
			d.pub.checkQueued(dst, queued)
		} else {
			dst.kickWriter()
			if queued > s.opts.MaxPending {
				s.slowConsumer(dst)
			}
		}
	}
	if last {
		s.dropSub(sub)
	}
	return true
}

// dropSub removes a subscription that reached its auto-unsubscribe limit.
func (s *Server) dropSub(sub *subscription) {
	if sub.client != nil {
		sub.client.removeSub(sub)
		return
	}
	sub.acc.removeInternal(sub)
}

func (s *Server) callHandler(d *delivery, sub *subscription) {
	var m *Msg
	if d.pub != nil {
		m = &d.pub.msg
		m.ClientID = d.pub.id
		m.from = d.pub
	} else {
		m = &Msg{}
	}
	if d.subjStr == "" {
		d.subjStr = string(d.subj)
	}
	if d.replyStr == "" && len(d.reply) > 0 {
		d.replyStr = string(d.reply)
	}
	m.Subject, m.Reply = d.subjStr, d.replyStr
	m.Header, m.Data = nil, d.data
	if len(d.hdr) > 0 {
		m.Header = d.hdr
	}
	sub.handler(m)
	m.Header, m.Data, m.from = nil, nil, nil
}

// slowConsumer cuts off a client whose queue passed MaxPending. It closes
// without an -ERR line, as nats-server does: clients (nats.go among them)
// take an -ERR they do not know as final and close for good, while a
// silent close makes them reconnect and resume (an ordered consumer
// recreates itself), which is what a user of nats-server sees.
func (s *Server) slowConsumer(dst *client) {
	if dst.close(closeSlowConsumerPending, "") {
		s.slowConsumers.Add(1)
		s.logger.Warn("slow consumer detected: max pending exceeded",
			"cid", dst.id, "ip", dst.ip, "max_pending", s.opts.MaxPending)
	}
}

// stallFor makes this publisher wait briefly for dst's queue to drain (see
// stallMin). It first hands over its stages and wakes every writer it has
// fed, dst's included.
func (c *client) stallFor(dst *client, queued int64) {
	if c.stalled >= stallTotal {
		return
	}
	c.runDeferred()
	c.handOverAll()
	for _, p := range c.pending {
		p.kickWriter()
	}
	ch := dst.stallChan()
	if ch == nil {
		return
	}
	ttl := stallMin
	if queued >= c.srv.opts.MaxPending/8*7 {
		ttl = stallMax
	}
	ttl = min(ttl, stallTotal-c.stalled)
	start := time.Now()
	t := time.NewTimer(ttl)
	select {
	case <-ch:
	case <-t.C:
	}
	t.Stop()
	c.stalled += time.Since(start)
}

// bytesView returns b as a string without copying. The string must not
// outlive b's contents.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// stringView returns s as a read-only byte slice without copying.
func stringView(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
