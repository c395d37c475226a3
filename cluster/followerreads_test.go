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
// of 30 writes acknowledged one at a time, each follower has applied it
// once AwaitApplied returns.
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

	// Read after write: the commit reaches the followers at once.
	for i := range 30 {
		publishN(t, leader.Store(), 100+i, 1)
		want := leader.fsm.Applied()
		for _, r := range []*Replica{reps[f], reps[other]} {
			start := time.Now()
			r.AwaitApplied(time.Second)
			if got := r.fsm.Applied(); got < want {
				t.Fatalf("write %d: a follower applied %d after %v, the leader %d", i, got, time.Since(start), want)
			}
		}
	}

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
