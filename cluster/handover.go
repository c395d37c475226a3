package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
func (n *Node) HandOver() error { return n.handOver(false) }

// handOverOnStopMax bounds HandOverOnStop.
const handOverOnStopMax = 3 * time.Second

// HandOverOnStop is HandOver for a server stopping now (its Shutdown), as
// nats-server steps its raft leaders down when it shuts down: without it,
// the groups this server led had no leader until their followers' election
// timeout passed (1 to 2 s, and more with hundreds of them), and requests
// about those streams went unanswered meanwhile. Only members with a route
// up are candidates (a transfer to one that cannot hear it would wait an
// election timeout to fail), and it returns after handOverOnStopMax at
// most, or when ctx ends: what is not handed over by then waits for an
// election, as before.
func (n *Node) HandOverOnStop(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- n.handOver(true) }()
	t := time.NewTimer(handOverOnStopMax)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("cluster: handing over leaderships: not done after %s", handOverOnStopMax)
	case <-ctx.Done():
		return fmt.Errorf("cluster: handing over leaderships: %w", ctx.Err())
	}
}

// handOver is HandOver; connectedOnly leaves out the members without a
// route up.
func (n *Node) handOver(connectedOnly bool) error {
	var errs []error
	n.mu.Lock()
	reps := make([]*Replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.mu.Unlock()
	candidates := func(peers []string) []string {
		if !connectedOnly {
			return peers
		}
		var out []string
		for _, p := range peers {
			if p != n.opts.Self && n.Connected(p) {
				out = append(out, p)
			}
		}
		return out
	}
	// The streams' transfers run side by side, a few at a time: one by
	// one, a server leading hundreds of streams took seconds to stop.
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, handOverParallel)
	for _, r := range reps {
		if !r.IsLeader() {
			continue
		}
		r.mu.Lock()
		peers := candidates(r.peers)
		r.mu.Unlock()
		if len(peers) == 0 {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			var err error
			switch {
			case !connectedOnly:
				err = r.StepDown()
			case r.IsLeader():
				if err = n.transfer(r.g.r, peers, ""); err != nil {
					err = fmt.Errorf("cluster: stream %s: step down: %w", r.name, err)
				}
			}
			<-slots
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if m := n.metaGroup(); m != nil && m.g.r.State() == raft.Leader {
		if peers := candidates(n.opts.Peers); len(peers) > 0 {
			errs = append(errs, n.transfer(m.g.r, peers, ""))
		}
	}
	return errors.Join(errs...)
}
