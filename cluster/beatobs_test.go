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
	// Member 0 campaigns first and almost always wins; on a loaded
	// machine another may, so the test takes whoever leads.
	lead := -1
	waitFor(t, "a leader", func() bool {
		for i, r := range reps {
			if r.IsLeader() {
				lead = i
				return true
			}
		}
		return false
	})
	stop, other := (lead+1)%3, (lead+2)%3
	waitFor(t, "both followers current", func() bool {
		fs := reps[lead].Followers()
		return len(fs) == 2 && fs[0].Current && fs[1].Current
	})
	gone := nodes[stop].srv.Name()
	if err := nodes[stop].n.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the stopped member not current", func() bool {
		for _, f := range reps[lead].Followers() {
			if f.Name == gone {
				return !f.Current && !f.Offline
			}
		}
		return false
	})
	n := nodes[other].n
	n.mu.Lock()
	observed := n.observed[reps[other].g.r] == reps[other]
	n.mu.Unlock()
	if !observed {
		t.Fatal("an open replica is not observed")
	}
	if err := reps[other].Close(); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	left := len(n.observed)
	n.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d replicas still observed after the only one closed", left)
	}
}
