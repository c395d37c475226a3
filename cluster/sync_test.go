package cluster

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSyncMetaWaitsForLocalApply: a follower whose apply goroutine is
// behind the commit (held here in its put callback) lacks a committed key;
// SyncMeta returns only once the follower has applied it. A stream's new
// leader relies on this to restore its consumers from their last
// checkpoints, not an older copy.
func TestSyncMetaWaitsForLocalApply(t *testing.T) {
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	var held atomic.Int32
	held.Store(-1)
	nodes := startNodes(t, 3, func(i int) func(string, []byte) {
		return func(key string, _ []byte) {
			if key == "held" && int(held.Load()) == i {
				<-gate
			}
		}
	})
	t.Cleanup(open) // before the nodes' Close, which waits for the held apply
	lead := metaLeader(t, nodes)
	f := (lead + 1) % len(nodes)
	held.Store(int32(f))
	leader, follower := nodes[lead].n, nodes[f].n
	if err := leader.Put("held", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := leader.Put("after", []byte("2")); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- follower.SyncMeta() }()
	select {
	case err := <-done:
		t.Fatalf("SyncMeta returned (%v) while the follower's apply is held", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, ok := follower.Get("after"); ok {
		t.Fatal("the held follower already has the key committed after the held one; the test proves nothing")
	}
	open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("SyncMeta did not return after the follower caught up")
	}
	if v, ok := follower.Get("after"); !ok || string(v) != "2" {
		t.Fatalf("after SyncMeta the follower reads after=%q (%v), want 2", v, ok)
	}
	// On the leader it returns at once, everything being applied there.
	if err := leader.SyncMeta(); err != nil {
		t.Fatal(err)
	}
}

// TestProposalAnswer: the meta leader's answers to forwarded proposals.
func TestProposalAnswer(t *testing.T) {
	if idx, err := parseProposalAnswer("+42"); err != nil || idx != 42 {
		t.Fatalf("+42: %d, %v", idx, err)
	}
	if _, err := parseProposalAnswer("-node is not the leader"); err != ErrNoLeader {
		t.Fatalf("not leader: %v, want ErrNoLeader", err)
	}
	if _, err := parseProposalAnswer("-disk full"); err == nil || err.Error() != "disk full" {
		t.Fatalf("disk full: %v", err)
	}
	for _, bad := range []string{"", "42", "+", "+x"} {
		if _, err := parseProposalAnswer(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
