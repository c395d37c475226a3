package cluster

import (
	"testing"
	"time"

	"github.com/jetwal/jetwal/wal"
)

// TestFollowerCurrent: with follower reads on, a follower is Current once
// it has the leader's writes. Closed while the leader takes 20,000 more
// messages and reopened, it is not current while it catches up (sampled
// every millisecond from the moment it opens), and is once it has what
// the leader applied; the leader is always current. A follower answering
// a read waits for what it has received (AwaitApplied): right after each
// of 30 writes acknowledged one at a time, a follower has applied it once
// AwaitApplied returns (the quorum's; the other may not have received it).
func TestFollowerCurrent(t *testing.T) {
	reps, lead, nodes := streamNodesOpts(t, wal.Options{}, nil)
	for _, r := range reps {
		r.SetFollowerReads(true)
	}
	leader := reps[lead]
	f := (lead + 1) % len(reps)
	other := 3 - lead - f
	publishN(t, leader.Store(), 0, 100)
	waitFor(t, "the followers to be current", func() bool { return reps[f].Current() && reps[other].Current() })
	if !leader.Current() {
		t.Fatal("the leader is not current")
	}

	// Read after write: the follower that stored the write before the
	// leader committed it (the quorum's) has received it, and applies it
	// once the commit reaches it, at once or within commitDelay; the
	// other may not have received it yet.
	both := 0
	for i := range 30 {
		publishN(t, leader.Store(), 100+i, 1)
		want := leader.fsm.Applied()
		fresh := 0
		for _, r := range []*Replica{reps[f], reps[other]} {
			r.AwaitApplied(time.Second)
			if r.fsm.Applied() >= want {
				fresh++
			}
		}
		if fresh == 0 {
			t.Fatalf("write %d: neither follower applied it (index %d)", i, want)
		}
		if fresh == 2 {
			both++
		}
	}
	t.Logf("both followers had applied %d of 30 writes when their reads returned", both)

	peers := nodes[0].n.Peers()
	if err := reps[f].Close(); err != nil {
		t.Fatal(err)
	}
	publishN(t, leader.Store(), 1000, 20000)
	want := leader.fsm.Applied()
	r, err := nodes[f].n.OpenStream("ORDERS", peers, false, false, wal.Options{}, func(bool) {})
	if err != nil {
		t.Fatal(err)
	}
	r.SetFollowerReads(true)
	behind := 0
	waitFor(t, "the reopened follower to be current", func() bool {
		for range 20 {
			applied := r.fsm.Applied() // before Current: it only grows
			if r.Current() {
				if applied+currentApplyBacklog < want && r.fsm.Applied()+currentApplyBacklog < want {
					t.Fatalf("current having applied %d of the leader's %d", r.fsm.Applied(), want)
				}
				return true
			}
			if applied < want {
				behind++
			}
			time.Sleep(time.Millisecond)
		}
		return false
	})
	if behind == 0 {
		t.Fatal("the reopened follower was never seen behind")
	}
	t.Logf("the reopened follower was not current for %d samples while behind", behind)
}
