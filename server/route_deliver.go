package server

import (
	"bytes"
	"math/rand/v2"

	"github.com/jetwal/jetwal/server/sublist"
)

// Forwarding. Who gets a message, here and on other servers, is decided
// once, by dispatch (audience.go); this file frames it for the routes it
// chose. A queue group served on another server is named in the RMSG, and
// the receiving server hands the message to one of its own members.

type remoteResult = sublist.Result[*remoteSub]

// routeTarget is one route a message goes to, with the queue groups the
// receiver must serve.
type routeTarget struct {
	route  *client
	queues []string
}

// forwarding is a publishing client's scratch for forwarding, made on its
// first publish in a cluster (read goroutine).
type forwarding struct {
	memoAcc  *Account
	memoSubj []byte // one-entry memo of remote matches, as client.memo
	memoGen  uint64
	memoRes  *remoteResult
	targets  []routeTarget
}

// matchRemote returns the routes' interest in subj.
func (c *client) matchRemote(acc *Account, subj []byte) *remoteResult {
	rl := acc.remote
	if c.fwd == nil {
		c.fwd = &forwarding{}
	}
	f := c.fwd
	gen := rl.Gen()
	if f.memoRes != nil && f.memoAcc == acc && f.memoGen == gen && bytes.Equal(f.memoSubj, subj) {
		return f.memoRes
	}
	if oneOff(subj) {
		return rl.MatchOnce(bytesView(subj))
	}
	res := rl.Match(bytesView(subj))
	f.memoSubj = append(f.memoSubj[:0], subj...)
	f.memoAcc, f.memoGen, f.memoRes = acc, gen, res
	return res
}

// pickRemote returns the remote member at weighted position pick, or a
// random one by weight when pick < 0.
func pickRemote(rgroup []*remoteSub, pick int) *remoteSub {
	if len(rgroup) == 0 {
		return nil
	}
	if pick < 0 {
		total := 0
		for _, rs := range rgroup {
			total += int(max(rs.weight.Load(), 1))
		}
		pick = rand.IntN(total)
	}
	for _, rs := range rgroup {
		w := int(max(rs.weight.Load(), 1))
		if pick < w {
			return rs
		}
		pick -= w
	}
	return rgroup[len(rgroup)-1] // a weight changed meanwhile
}

func remoteGroup(remote *remoteResult, name string) []*remoteSub {
	for j, n := range remote.QueueNames {
		if n == name {
			return remote.Queues[j]
		}
	}
	return nil
}

func hasQueue(local *result, name string) bool {
	for _, n := range local.QueueNames {
		if n == name {
			return true
		}
	}
	return false
}

// reset empties the targets, keeping their storage.
func (f *forwarding) reset() {
	for i := range f.targets {
		f.targets[i] = routeTarget{queues: f.targets[i].queues[:0]}
	}
	f.targets = f.targets[:0]
}

// forwardAll frames the message for every route dispatch chose (f's
// targets), reporting whether any took it.
func (c *client) forwardAll(d *delivery) bool {
	sent := false
	for i := range c.fwd.targets {
		if c.forward(d, &c.fwd.targets[i]) {
			sent = true
		}
	}
	return sent
}

// addTarget adds route r (and queue group q, if any) to the targets.
func (f *forwarding) addTarget(r *client, q string) {
	for i := range f.targets {
		t := &f.targets[i]
		if t.route == r {
			if q != "" {
				t.queues = append(t.queues, q)
			}
			return
		}
	}
	n := len(f.targets)
	if n < cap(f.targets) {
		f.targets = f.targets[:n+1]
	} else {
		f.targets = append(f.targets, routeTarget{})
	}
	t := &f.targets[n]
	t.route = r
	if q != "" {
		t.queues = append(t.queues, q)
	}
}

// forward frames the message for one route, into this publisher's stage
// for it when a slot is free, else straight into its queue.
func (c *client) forward(d *delivery, t *routeTarget) bool {
	dst := t.route
	if dst.closed.Load() {
		return false
	}
	acc := d.acc.wire
	withHdr := dst.route.headers.Load()
	if st := c.stageFor(dst); st != nil {
		c.room(st, routeMsgSize(acc, d.subj, d.reply, t.queues, d.hdr, d.data))
		st.ch.b = appendRouteMsg(st.ch.b, withHdr, acc, d.subj, d.reply, t.queues, d.hdr, d.data)
	} else {
		queued, ok := dst.queueRouteMsg(acc, d, t.queues)
		if !ok {
			return false
		}
		c.addPending(dst)
		c.checkQueued(dst, queued)
	}
	dst.countRouteMsgOut(d, t.queues)
	return true
}

// queueRouteMsg frames d for route dst straight into its outbound queue; it
// returns the bytes now queued, and false when the route is closing.
func (dst *client) queueRouteMsg(acc []byte, d *delivery, queues []string) (int64, bool) {
	need := routeMsgSize(acc, d.subj, d.reply, queues, d.hdr, d.data)
	dst.out.mu.Lock()
	defer dst.out.mu.Unlock()
	if dst.out.mu.closing {
		return 0, false
	}
	ch := dst.out.appendable(need)
	n := len(ch.b)
	ch.b = appendRouteMsg(ch.b, dst.route.headers.Load(), acc, d.subj, d.reply, queues, d.hdr, d.data)
	dst.out.mu.size += len(ch.b) - n
	return dst.out.queued(), true
}

// countRouteMsgOut traces and counts a message sent on route dst.
func (dst *client) countRouteMsgOut(d *delivery, queues []string) {
	if dst.trace {
		dst.traceRouteMsgOut(d, queues)
	}
	dst.stats.outMsgs.Add(1)
	dst.stats.outBytes.Add(int64(len(d.hdr) + len(d.data)))
}

// processRoutedMsg delivers an RMSG or HMSG to this server's TCP clients:
// every plain subscriber, and one member of each queue group the sender
// named.
func (c *client) processRoutedMsg(cmd *routeCmd) {
	c.counts.inMsgs++
	c.counts.inBytes += int64(len(cmd.payload))
	acc := c.srv.accountByWire(cmd.account, c.route.lastAcc)
	if acc == nil {
		return
	}
	c.route.lastAcc = acc
	res := c.matchIn(acc, cmd.subject)
	if res.Empty() {
		return
	}
	d := delivery{
		pub:   c,
		acc:   acc,
		subj:  cmd.subject,
		reply: cmd.reply,
		hdr:   cmd.payload[:cmd.hdrLen],
		data:  cmd.payload[cmd.hdrLen:],
	}
	if len(d.hdr) > 0 {
		if subj, own, ok := takePresented(d.hdr); ok {
			// Sent by PublishAs on another jetwal: present it under its own subject.
			d.subj, d.hdr = []byte(subj), own
		}
	}
	c.srv.dispatch(&d, res, &audience{fromRoute: true, queues: cmd.queues})
}
