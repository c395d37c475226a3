package jetstream

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
)

// expireGrace delays the 408 of an expired pull request a little past its
// expiry. A client whose own timeout equals the expiry (the nats CLI's
// consumer next) then sees its timeout first, as it does with nats-server,
// instead of taking the 408 for a message.
const expireGrace = 100 * time.Millisecond

// pullRequest is one waiting CONSUMER.MSG.NEXT request.
type pullRequest struct {
	reply     string
	batch     int   // messages still wanted
	maxBytes  int   // 0: no byte limit
	bytesLeft int   // of maxBytes
	expires   int64 // unix ns; 0: never
	noWait    bool
	hb        time.Duration
	nextHB    int64
	delivered int
	// Priority groups (consumer_priority.go).
	group                     string
	minPending, minAckPending int64
	pinID                     string
	priority                  int
}

// parseNext decodes a pull request body: empty (one message), a bare
// number (the batch) or NextRequest JSON.
func parseNext(b []byte) (api.NextRequest, bool) {
	var req api.NextRequest
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		req.Batch = 1
		return req, true
	}
	if b[0] != '{' {
		n, err := strconv.Atoi(string(b))
		if err != nil || n < 1 {
			return req, false
		}
		req.Batch = n
		return req, true
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return req, false
	}
	req.JSON = true
	if req.Batch == 0 {
		req.Batch = 1
	}
	return req, req.Batch > 0 && req.MaxBytes >= 0 && req.Expires >= 0 && req.Heartbeat >= 0
}

// statusMsg is a status message (header only) to a pull request's inbox or
// a deliver subject. pendingMsgs < 0 leaves out the pending headers.
func statusMsg(to, status string, pendingMsgs, pendingBytes int) outMsg {
	b := natshdr.AppendStatusLine(make([]byte, 0, 96), status)
	if pendingMsgs >= 0 {
		b = natshdr.AppendInt(b, "Nats-Pending-Messages", int64(pendingMsgs))
		b = natshdr.AppendInt(b, "Nats-Pending-Bytes", int64(max(pendingBytes, 0)))
	}
	return outMsg{route: to, subj: to, hdr: natshdr.End(b)}
}

// addRequest queues a pull request, or answers it at once when it cannot be
// served. reply is where messages go.
// isPush reports whether the consumer delivers to a deliver subject.
func (c *consumer) isPush() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.push
}

func (c *consumer) addRequest(reply string, body []byte) {
	if reply == "" {
		return
	}
	req, ok := parseNext(body)
	var refuse string
	c.mu.Lock()
	if c.cfg.MaxWaiting > 0 && len(c.waiting) >= c.cfg.MaxWaiting {
		c.dropAbandoned()
	}
	switch {
	case c.closed:
		refuse = "409 Consumer Deleted"
	case c.push:
		refuse = "409 Consumer is push based"
	case !ok:
		refuse = "400 Bad Request"
	case req.Heartbeat > 0 && req.Heartbeat > req.Expires/2:
		// nats-server refuses it while reading the request, so before
		// the limits below, and a heartbeat without expires too.
		refuse = "400 Bad Request - heartbeat value too large"
	case c.cfg.MaxRequestBatch > 0 && req.Batch > c.cfg.MaxRequestBatch:
		refuse = "409 Exceeded MaxRequestBatch of " + strconv.Itoa(c.cfg.MaxRequestBatch)
	case c.cfg.MaxRequestMaxBytes > 0 && req.MaxBytes > c.cfg.MaxRequestMaxBytes:
		refuse = "409 Exceeded MaxRequestMaxBytes of " + strconv.Itoa(c.cfg.MaxRequestMaxBytes)
	case c.cfg.MaxRequestExpires > 0 && req.Expires > c.cfg.MaxRequestExpires:
		refuse = "409 Exceeded MaxRequestExpires of " + c.cfg.MaxRequestExpires.String()
	}
	now := time.Now().UnixNano()
	if refuse == "" {
		refuse = c.checkPullPriority(&req, now)
	}
	if refuse == "" && c.cfg.MaxWaiting > 0 && len(c.waiting) >= c.cfg.MaxWaiting {
		refuse = "409 Exceeded MaxWaiting"
	}
	if refuse != "" {
		c.mu.Unlock()
		o := statusMsg(reply, refuse, -1, 0)
		c.env.srv.PublishAs(o.route, o.subj, "", o.hdr, nil)
		return
	}
	w := &pullRequest{reply: reply, batch: req.Batch, maxBytes: req.MaxBytes, bytesLeft: req.MaxBytes,
		noWait: req.NoWait, hb: req.Heartbeat, group: req.Group, minPending: req.MinPending,
		minAckPending: req.MinAckPending, pinID: req.ID, priority: req.Priority}
	if req.Expires > 0 {
		w.expires = addSat(now, addSat(int64(req.Expires), int64(expireGrace)))
	}
	if w.hb > 0 {
		w.nextHB = addSat(now, int64(w.hb))
	}
	c.waiting = append(c.waiting, w)
	c.active = now
	c.mu.Unlock()
	c.signal()
}

// removeRequest removes waiting request i. Caller holds mu.
func (c *consumer) removeRequest(i int) {
	if i == 0 {
		c.waiting[0] = nil
		c.waiting = c.waiting[1:]
	} else {
		c.waiting = slices.Delete(c.waiting, i, i+1)
	}
	if len(c.waiting) == 0 {
		c.waiting = nil
	}
}

// expireRequests answers expired requests with 408 and drops those whose
// requester went away. Caller holds mu.
func (c *consumer) expireRequests(now int64) {
	keep := c.waiting[:0]
	for _, w := range c.waiting {
		switch {
		case w.expires > 0 && now >= w.expires:
			c.outs = append(c.outs, statusMsg(w.reply, "408 Request Timeout", w.batch, w.bytesLeft))
		case !c.env.srv.HasInterest(w.reply):
			// The requester is gone: nothing to answer.
		default:
			keep = append(keep, w)
		}
	}
	clear(c.waiting[len(keep):])
	c.waiting = keep
}

// dropAbandoned forgets waiting requests whose requester went away.
// Caller holds mu.
func (c *consumer) dropAbandoned() {
	keep := c.waiting[:0]
	for _, w := range c.waiting {
		if c.env.srv.HasInterest(w.reply) {
			keep = append(keep, w)
		}
	}
	clear(c.waiting[len(keep):])
	c.waiting = keep
}

// liveRequests is num_waiting as nats-server reports it: it first forgets
// the requests whose requester went away (a client that stopped consuming
// unsubscribed its inbox) and leaves out those expired, which the next
// round answers with 408. Caller holds mu.
func (c *consumer) liveRequests(now int64) int {
	if c.push || len(c.waiting) == 0 {
		return 0
	}
	c.dropAbandoned()
	n := 0
	for _, w := range c.waiting {
		if w.expires == 0 || now < w.expires {
			n++
		}
	}
	return n
}

// finishNoWait ends no_wait requests once nothing more can be delivered:
// 404 if they got nothing, else 408 with what is still missing.
func (c *consumer) finishNoWait() {
	keep := c.waiting[:0]
	for _, w := range c.waiting {
		switch {
		case !w.noWait:
			keep = append(keep, w)
		case w.delivered == 0:
			c.outs = append(c.outs, statusMsg(w.reply, "404 No Messages", -1, 0))
		default:
			c.outs = append(c.outs, statusMsg(w.reply, "408 Request Timeout", w.batch, w.bytesLeft))
		}
	}
	clear(c.waiting[len(keep):])
	c.waiting = keep
}

// pullTimers sends due heartbeats to waiting requests and asks to be woken
// for the next heartbeat or expiry. Caller holds mu.
func (c *consumer) pullTimers(now int64, soon func(int64)) {
	for _, w := range c.waiting {
		if w.hb > 0 {
			if now >= w.nextHB {
				c.outs = append(c.outs, statusMsg(w.reply, "100 Idle Heartbeat", -1, 0))
				w.nextHB = addSat(now, int64(w.hb))
			}
			soon(w.nextHB)
		}
		soon(w.expires)
	}
	if c.prio.pinID != "" {
		soon(c.prio.deadline)
	}
}
