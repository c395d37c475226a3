package server

// The delivery of a traced message. dispatch (audience.go) decides who
// gets it, as for any message, and traceDeliverTo writes each local
// decision down as an event; the message itself still goes out through
// deliverTo, so a traced message is delivered exactly as an untraced one. With
// Nats-Trace-Only nothing is delivered, stored or forwarded.

// tracePub runs a PUB/HPUB whose header block names Nats-Trace-Dest. It
// reports whether it took care of the message; false means processPub goes
// on with it as with any other (the header did not start a trace).
func (c *client) tracePub(cmd *command) bool {
	t, drop := c.startTrace(cmd)
	if t == nil {
		return drop
	}
	c.publishTraced(cmd, t)
	t.send()
	return true
}

// publishTraced is processPub's delivery part for a traced message.
func (c *client) publishTraced(cmd *command, t *msgTrace) {
	if p := c.perms.Load(); p != nil && !p.canPublish(cmd.subject) {
		text := permPubViolation(cmd.subject)
		c.srv.logger.Debug("publish permission violation", "cid", c.id, "user", c.user, "subject", string(cmd.subject))
		c.sendErrLine(text)
		t.in.Error = text
		return
	}
	acc := c.acc.Load()
	d := delivery{
		pub:   c,
		acc:   acc,
		subj:  cmd.subject,
		reply: cmd.reply,
		hdr:   cmd.payload[:cmd.hdrLen],
		data:  cmd.payload[cmd.hdrLen:],
	}
	a := audience{t: t}
	if cl := c.srv.cluster; cl != nil && cl.active.Load() > 0 {
		a.remote = c.matchRemote(acc, cmd.subject)
		a.f = c.fwd
	}
	delivered := c.srv.dispatch(&d, c.matchIn(acc, cmd.subject), &a)
	if a.f != nil && c.traceForward(&d, t) {
		delivered = true
	}
	if !delivered && len(cmd.reply) > 0 && c.opts.NoResponders {
		c.noResponders(cmd.subject, cmd.reply)
	}
}

// traceDeliverTo hands d to one subscription (unless trace-only) and
// records the egress. It reports whether the subscription took the
// message, or would have.
func (s *Server) traceDeliverTo(d *delivery, sub *subscription, t *msgTrace) bool {
	dst := sub.client
	if dst == nil {
		return s.traceInternal(d, sub, t)
	}
	e := &MsgTraceEgress{Kind: MsgTraceKindClient, CID: dst.id, Subscription: sub.subject, Queue: sub.queue}
	if m := dst.meta.Load(); m != nil {
		e.Name = m.name
	}
	switch {
	case sub.closed.Load():
		e.Error = msgTraceErrSubClosed
	case dst == d.pub && !d.pub.opts.Echo:
		e.Error = msgTraceErrNoEcho
	case sub.deny != nil && !sub.deny.MatchOnce(bytesView(d.subj)).Empty():
		e.Error = msgTraceErrSubDeny
	case dst.closed.Load():
		e.Error = msgTraceErrClientClosed
	case t.only:
		if max := sub.max.Load(); max > 0 && sub.delivered.Load() >= max {
			e.Error = msgTraceErrAutoSubExceeded
		}
	default:
		// What deliverTo can still refuse after the checks above: the
		// auto-unsubscribe limit, or the client closing meanwhile.
		if !s.deliverTo(d, sub) {
			e.Error = msgTraceErrAutoSubExceeded
			if dst.closed.Load() {
				e.Error = msgTraceErrClientClosed
			}
		}
	}
	t.egress(e)
	return e.Error == ""
}

// traceInternal handles an in-process subscription. Like nats-server, it
// reports no egress for it; a stream's subscription (as the StreamTracer
// says) gets a JetStream event, and the message with its Nats-Trace-Dest
// set to "trace disabled". With trace-only, no in-process handler
// runs: a stream stores nothing, and no other internal service (the
// JetStream API, system requests) acts on the message.
func (s *Server) traceInternal(d *delivery, sub *subscription, t *msgTrace) bool {
	isStream := false
	if fn := d.acc.streams.Load(); fn != nil {
		var stream, stored string
		if stream, stored, isStream = (*fn)(sub.subject, string(d.subj)); isStream {
			t.jetStream(stream, stored)
		}
	}
	if t.only {
		return isStream
	}
	if isStream {
		// The stream stores the message with tracing turned off, so that
		// its deliveries are not traced again (nats-server does the same).
		sd := *d
		sd.hdr = disableTraceHeader(d.hdr)
		return s.deliverTo(&sd, sub)
	}
	return s.deliverTo(d, sub)
}

// traceForward is forwarding to the routes dispatch chose, for a traced
// message: each route is reported as an egress that will send no trace
// event of its own (another jetwal does not trace what arrives on a
// route). A trace-only message is not forwarded, since the remote would
// deliver it.
func (c *client) traceForward(d *delivery, t *msgTrace) bool {
	delivered := false
	for i := range c.fwd.targets {
		tg := &c.fwd.targets[i]
		e := &MsgTraceEgress{Kind: MsgTraceKindRouter, CID: tg.route.id, Name: routeRemoteName(tg.route)}
		switch {
		case t.only:
			e.Error = msgTraceErrOnlyNoSupport
		case c.forward(d, tg):
			e.Error = msgTraceErrNoSupport
			delivered = true
		default:
			e.Error = msgTraceErrClientClosed
		}
		t.egress(e)
	}
	return delivered
}

// routeRemoteName is the server name the route's peer announced.
func routeRemoteName(r *client) string {
	r.route.mu.Lock()
	defer r.route.mu.Unlock()
	return r.route.mu.remoteName
}
