package cluster

import (
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/wal"
)

// TestCampaignFirstLeads: the member a new stream group is opened with
// campaign on stands for election at once, before the others have opened
// the group (its vote requests wait in their mux for the group), and
// wins: the others' own first elections would come a stream group's
// heartbeat timeout (2 s or more) after they open it. Its raft then runs
// with a stream group's configured timing.
func TestCampaignFirstLeads(t *testing.T) {
	nodes := startNodes(t, 3, func(int) func(string, []byte) { return func(string, []byte) {} })
	metaLeader(t, nodes)
	peers := nodes[0].n.Peers()
	const first = 1
	reps := make([]*Replica, len(nodes))
	open := func(i int) {
		r, err := nodes[i].n.OpenStream("ORDERS", peers, false, i == first, wal.Options{}, func(bool) {})
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = r
	}
	open(first)
	waitFor(t, "the campaigning member to stand for election", func() bool {
		return reps[first].g.r.State() != raft.Follower
	})
	if got := reps[first].g.r.ReloadableConfig().HeartbeatTimeout; got != streamTimeoutScale*DefaultHeartbeatTimeout {
		t.Fatalf("campaigning member's heartbeat timeout %s, want a stream group's, four times the node's", got)
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
}
