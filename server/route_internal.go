package server

// forwardInternal sends a Server.Publish (or PublishAs) message to the
// routes dispatch chose (f's targets), straight into their queues.
func (s *Server) forwardInternal(d *delivery, f *forwarding) {
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
