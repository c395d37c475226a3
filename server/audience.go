package server

import "math/rand/v2"

// The one decision of who receives a message, taken the same way on every
// path: a client's publish (traced or not, alone or in a cluster), a
// message from a route, Server.Publish and PublishAs. As in nats-server
// (client.processMsgResults), every plain subscriber here gets it, every
// route whose server announced plain interest gets it once, and each queue
// group is served by one member in the whole cluster: the pick is random,
// weighted by members (a local subscription counts one, a route its
// announced weight); a local member that cannot take the message (closed,
// denied, past its auto-unsubscribe limit) passes it to the next local
// one, and when none can, to a remote member. A message from a route goes
// to local subscribers only, and to members of the queue groups its sender
// chose this server for. Tracing observes the decision and never changes
// it.

// audience says where a message comes from and what may be done with it.
type audience struct {
	// remote is the routes' interest; nil (or empty) forwards nothing. f
	// receives the routes the message goes to (required with remote).
	remote *remoteResult
	f      *forwarding
	// fromRoute marks a message that arrived on a route: only the queue
	// groups named in queues are served, by a local member.
	fromRoute bool
	queues    [][]byte
	// t is the message's trace; nil when it is not traced.
	t *msgTrace
}

// dispatch delivers d to the local subscriptions of res that get it and,
// with a.remote, leaves in a.f.targets the routes it must be forwarded to
// (the caller frames it for them). It reports whether a local
// subscription took it.
func (s *Server) dispatch(d *delivery, res *result, a *audience) bool {
	delivered := false
	for _, sub := range res.Plain {
		if s.offer(d, sub, a.t) {
			delivered = true
		}
	}
	if a.f != nil {
		a.f.reset() // the targets of the message before are still there
	}
	remote := a.remote
	if remote != nil && remote.Empty() {
		remote = nil
	}
	if remote != nil {
		for _, rs := range remote.Plain {
			a.f.addTarget(rs.route, "")
		}
	}
	for i, group := range res.Queues {
		name := res.QueueNames[i]
		if a.fromRoute && !named(a.queues, name) {
			continue
		}
		var rgroup []*remoteSub
		if remote != nil {
			rgroup = remoteGroup(remote, name)
		}
		n := len(group)
		total := n
		for _, rs := range rgroup {
			total += int(max(rs.weight.Load(), 1))
		}
		pick := 0
		if total > 1 {
			pick = rand.IntN(total)
		}
		if pick < n {
			took := false
			for j := 0; j < n && !took; j++ {
				took = s.offer(d, group[(pick+j)%n], a.t)
			}
			if took {
				delivered = true
				continue
			}
			pick = -1 // no local member took it: any remote one
		} else {
			pick -= n
		}
		if rs := pickRemote(rgroup, pick); rs != nil {
			a.f.addTarget(rs.route, name)
		}
	}
	if remote != nil {
		for j, rgroup := range remote.Queues {
			name := remote.QueueNames[j]
			if hasQueue(res, name) {
				continue // decided above, with the local members
			}
			if rs := pickRemote(rgroup, -1); rs != nil {
				a.f.addTarget(rs.route, name)
			}
		}
	}
	return delivered
}

// offer hands d to one subscription, recording the egress when traced.
func (s *Server) offer(d *delivery, sub *subscription, t *msgTrace) bool {
	if t != nil {
		return s.traceDeliverTo(d, sub, t)
	}
	return s.deliverTo(d, sub)
}

// deliver is dispatch for a message that is not forwarded or traced.
func (s *Server) deliver(d *delivery, res *result) bool {
	return s.dispatch(d, res, &audience{})
}

// named reports whether queues holds name.
func named(queues [][]byte, name string) bool {
	for _, q := range queues {
		if bytesView(q) == name {
			return true
		}
	}
	return false
}
