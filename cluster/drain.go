package cluster

// The write queue's drain notice (followerreads.go): the replica is told
// when the last write proposed has been applied on the leader with
// nothing else queued or in flight, before that write's callbacks run.

// onDrain sets the function told when the queue drains.
func (b *batcher) onDrain(f func()) {
	b.mu.Lock()
	b.drained = f
	b.mu.Unlock()
}

// notifyDrained waits for p, the oldest proposal in flight, and tells
// drained when it succeeded and was the last write: none other in flight
// (inflight still counts p) and none queued.
func (b *batcher) notifyDrained(p *proposal) {
	b.mu.Lock()
	f := b.drained
	b.mu.Unlock()
	if f == nil || p.f.Error() != nil {
		return
	}
	b.mu.Lock()
	idle := b.inflight == 1 && len(b.queue) == 0 && !b.closed
	b.mu.Unlock()
	if idle {
		f()
	}
}
