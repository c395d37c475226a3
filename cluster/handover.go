package cluster

import (
	"errors"

	"github.com/hashicorp/raft"
)

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
	for _, r := range reps {
		if r.IsLeader() {
			errs = append(errs, r.StepDown())
		}
	}
	if m := n.metaGroup(); m != nil && m.g.r.State() == raft.Leader {
		errs = append(errs, m.g.r.LeadershipTransfer().Error())
	}
	return errors.Join(errs...)
}
