package cluster

import (
	"testing"

	"github.com/jetwal/jetwal/wal"
)

// TestFollowerFailingHeartbeatsNotCurrent: the leader's raft observes its
// heartbeats to a follower fail, the node's one observation goroutine
// hands that to the stream's replica, and Followers shows the follower not
// current although its route is up (its node stopped, its server did
// not). A closed replica is no longer observed.
func TestFollowerFailingHeartbeatsNotCurrent(t *testing.T) {
	nodes := startNodes(t, 3, func(int) func(string, []byte) { return func(string, []byte) {} })
	metaLeader(t, nodes)
	peers := nodes[0].n.Peers()
	reps := make([]*Replica, len(nodes))
	for i := range nodes {
		r, err := nodes[i].n.OpenStream("ORDERS", peers, false, i == 0, wal.Options{}, func(bool) {})
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = r
	}
	waitFor(t, "member 0 to lead", func() bool { return reps[0].IsLeader() })
	waitFor(t, "both followers current", func() bool {
		fs := reps[0].Followers()
		return len(fs) == 2 && fs[0].Current && fs[1].Current
	})
	gone := nodes[2].srv.Name()
	if err := nodes[2].n.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stopped member not current", func() bool {
		for _, f := range reps[0].Followers() {
			if f.Name == gone {
				return !f.Current && !f.Offline
			}
		}
		return false
	})
	n := nodes[1].n
	n.mu.Lock()
	observed := n.observed[reps[1].g.r] == reps[1]
	n.mu.Unlock()
	if !observed {
		t.Fatal("an open replica is not observed")
	}
	if err := reps[1].Close(); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	left := len(n.observed)
	n.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d replicas still observed after the only one closed", left)
	}
}
