package cluster

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// TestCampaignFirstLeads: the member a new stream group is opened with
// campaign on stands for election at once, before the others have opened
// the group (its vote requests wait in their mux for the group), and
// wins: the others' own first elections would come a heartbeat timeout
// (here 1.5 s or more) after they open it. Its raft then runs with the
// node's configured timing.
func TestCampaignFirstLeads(t *testing.T) {
	nodes := startNodesOpts(t, 3, func(int) func(string, []byte) { return func(string, []byte) {} },
		func(*server.ClusterOptions) {}, func(o *Options) { o.HeartbeatTimeout, o.ElectionTimeout = 1500*time.Millisecond, 1500*time.Millisecond })
	metaLeader(t, nodes)
	peers := nodes[0].n.Peers()
	const first = 1
	reps := make([]*Replica, len(nodes))
	open := func(i int) {
		r, err := nodes[i].n.OpenStream("ORDERS", peers, i == first, wal.Options{}, func(bool) {})
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = r
	}
	open(first)
	waitFor(t, "the campaigning member to stand for election", func() bool {
		return reps[first].g.r.State() != raft.Follower
	})
	if got := reps[first].g.r.ReloadableConfig().HeartbeatTimeout; got != 3*time.Second {
		t.Fatalf("campaigning member's heartbeat timeout %s, want a stream group's 3s (twice the node's)", got)
	}
	open(0)
	open(2)
	want := nodes[first].n.opts.Self
	waitFor(t, "every member to name the campaigning member leader", func() bool {
		for _, r := range reps {
			if _, id := r.g.r.LeaderWithID(); string(id) != want {
				return false
			}
		}
		return true
	})
	// Reopened, the group has state and elects as usual (campaign only
	// concerns a new group).
	for _, r := range reps {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range nodes {
		open(i)
	}
	waitFor(t, "a leader after reopening", func() bool {
		for _, r := range reps {
			if r.IsLeader() {
				return true
			}
		}
		return false
	})
}
