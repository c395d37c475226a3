package server

// forwardInternal sends a Server.Publish message to the routes whose
// servers announced interest: once to each route with plain interest, and
// for each queue group that no local member served, to one remote member.
func (s *Server) forwardInternal(d *delivery, local *result, remote *remoteResult) {
	var f forwarding
	for _, rs := range remote.Plain {
		f.addTarget(rs.route, "")
	}
	for j, rgroup := range remote.Queues {
		name := remote.QueueNames[j]
		if hasQueue(local, name) {
			continue
		}
		if rs := pickRemote(rgroup, -1); rs != nil {
			f.addTarget(rs.route, name)
		}
	}
	acc := d.acc.wire
	for i := range f.targets {
		t := &f.targets[i]
		dst := t.route
		if dst.closed.Load() {
			continue
		}
		queued, ok := dst.queueRouteMsg(acc, d, t.queues)
		if !ok {
			continue
		}
		dst.kickWriter()
		if queued > s.opts.MaxPending {
			s.slowConsumer(dst)
		}
		dst.countRouteMsgOut(d, t.queues)
	}
}
