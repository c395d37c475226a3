package jetstream

import (
	"slices"
	"sync"
)

// Opening replicas in parallel. Opening a stream's replica (its wal, its
// raft log, its raft) waits for about three syncs and takes a few
// milliseconds of CPU; a server restarting with a thousand replicated
// streams applied the meta group's assignments one after another and
// spent most of its restart there (make bench-cluster-scale
// SCALE_STREAMS=1000: 3.4 s of 3.6 s). So applyStream hands a new
// replica's open to a goroutine, at most maxReplicaOpens at a time, and
// the meta group goes on to the next assignment.
//
// Ordering is kept per stream by the hosted's mu: applyStream registers
// the hosted with its mu already locked, and the open unlocks it when the
// replica is set (or the open failed and the hosted is gone from the
// map). Whatever finds the hosted — the next assignment of the stream, a
// removal, a leadership change, an API request — waits there until the
// open is over, as it waited for applyStream before. Only the assignment
// of one of its consumers does not wait (applyMetaPut): the stream
// restores its consumers when it leads.
// closeCluster waits for the opens in flight.

// maxReplicaOpens bounds the opens in flight: enough to overlap their
// syncs, few enough not to crowd the server's other work on a restart.
const maxReplicaOpens = 8

// replicaOpens counts the opens in flight.
type replicaOpens struct {
	mu      sync.Mutex
	changed sync.Cond
	running int
}

// lock takes mu; the zero replicaOpens is ready to use.
func (o *replicaOpens) lock() {
	o.mu.Lock()
	if o.changed.L == nil {
		o.changed.L = &o.mu
	}
}

// start waits for a free slot and takes it.
func (o *replicaOpens) start() {
	o.lock()
	for o.running >= maxReplicaOpens {
		o.changed.Wait()
	}
	o.running++
	o.mu.Unlock()
}

// done frees a slot.
func (o *replicaOpens) done() {
	o.lock()
	o.running--
	o.changed.Broadcast()
	o.mu.Unlock()
}

// wait returns when no open is in flight.
func (o *replicaOpens) wait() {
	o.lock()
	for o.running > 0 {
		o.changed.Wait()
	}
	o.mu.Unlock()
}

// openHosted registers h as the stream's replica on this server and opens
// it in the background (see above). Caller holds applyMu.
func (js *JetStream) openHosted(h *hosted) {
	name := h.asg.Config.Name
	h.mu.Lock() // held until the open is over
	h.opening.Store(true)
	js.cl.mu.Lock()
	js.cl.hosted[name] = h
	js.cl.mu.Unlock()
	js.cl.opens.start()
	go func() {
		defer js.cl.opens.done()
		defer h.mu.Unlock()
		js.openReplica(h)
		h.opening.Store(false)
	}()
}

// openReplica opens h's replica. On failure h leaves the hosted map (it
// is not hosted after all); the stream's next assignment tries again.
// Caller holds h.mu.
func (js *JetStream) openReplica(h *hosted) {
	a := h.asg
	cfg := a.Config
	join := len(a.Initial) > 0 && !slices.Contains(a.Initial, js.cl.c.Self())
	rep, err := js.cl.c.OpenStream(cfg.Name, a.Peers, join, a.Preferred == js.cl.c.Self(), js.replicaOptions(&cfg), func(lead bool) {
		if lead {
			js.activate(h)
		} else {
			js.deactivate(h)
		}
	})
	if err != nil {
		js.log.Error("cluster: opening stream replica", "stream", cfg.Name, "error", err)
		js.cl.mu.Lock()
		if js.cl.hosted[cfg.Name] == h {
			delete(js.cl.hosted, cfg.Name)
		}
		js.cl.mu.Unlock()
		return
	}
	h.rep = rep
}

// replica returns h's replica once its open is over: nil when it failed.
func (h *hosted) replica() Replica {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rep
}
