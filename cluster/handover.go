package cluster

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// handOverParallel bounds the leadership transfers HandOver runs at once.
const handOverParallel = 16

// HandOver transfers every leadership this server holds — the meta
// group's and each replicated stream's — to another member, so that a
// server about to stop (lame duck mode) leaves its groups led elsewhere
// instead of making each of them wait an election timeout. It returns the
// transfers' errors joined; a group that cannot hand over keeps its
// leader until the server stops.
func (n *Node) HandOver() error {
	var errs []error
	n.mu.Lock()
	reps := make([]*Replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.mu.Unlock()
	// The streams' transfers run side by side, a few at a time: one by
	// one, a server leading hundreds of streams took seconds to stop.
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, handOverParallel)
	for _, r := range reps {
		if !r.IsLeader() {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			err := r.StepDown()
			<-slots
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if m := n.metaGroup(); m != nil && m.g.r.State() == raft.Leader {
		errs = append(errs, n.transfer(m.g.r, n.opts.Peers, ""))
	}
	return errors.Join(errs...)
}
