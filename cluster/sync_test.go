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

// TestFencedPut: a fenced put applies only while its fence holds its
// token, on every server, whether proposed on the meta leader or forwarded
// to it; once another token is in the fence, the old one's puts fail with
// ErrFenced and change nothing.
func TestFencedPut(t *testing.T) {
	nodes := startNodes(t, 3, func(int) func(string, []byte) { return func(string, []byte) {} })
	lead := metaLeader(t, nodes)
	leader, follower := nodes[lead].n, nodes[(lead+1)%len(nodes)].n
	fence := fenceKey("S")
	put := func(n *Node, token, val string) error {
		_, err := n.propose(encodeFenced(fence, []byte(token), encodeMeta("cstate/S/C", []byte(val), false)))
		return err
	}
	if err := put(leader, "t1", "v0"); err != ErrFenced {
		t.Fatalf("no fence yet: %v, want ErrFenced", err)
	}
	if err := leader.Put(fence, []byte("t1")); err != nil {
		t.Fatal(err)
	}
	if err := put(follower, "t1", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := follower.Put(fence, []byte("t2")); err != nil { // a new leader
		t.Fatal(err)
	}
	for _, n := range []*Node{follower, leader} {
		if err := put(n, "t1", "stale"); err != ErrFenced {
			t.Fatalf("old token after the new fence: %v, want ErrFenced", err)
		}
	}
	if err := put(leader, "t2", "v2"); err != nil {
		t.Fatal(err)
	}
	for i, tn := range nodes {
		if err := tn.n.SyncMeta(); err != nil {
			t.Fatal(err)
		}
		if v, _ := tn.n.Get("cstate/S/C"); string(v) != "v2" {
			t.Fatalf("server %d holds %q, want v2", i, v)
		}
	}
	// A fenced delete of the fence itself (a removed stream's last leader
	// dropping it) applies only with the token it holds.
	drop := func(token string) error {
		_, err := follower.propose(encodeFenced(fence, []byte(token), encodeMeta(fence, nil, true)))
		return err
	}
	if err := drop("t1"); err != ErrFenced {
		t.Fatalf("dropping the fence with an old token: %v, want ErrFenced", err)
	}
	if err := drop("t2"); err != nil {
		t.Fatal(err)
	}
	if err := leader.SyncMeta(); err != nil {
		t.Fatal(err)
	}
	if _, ok := leader.Get(fence); ok {
		t.Fatal("the fence is still there")
	}
}

// TestFencedEntryDecoding: fenced entries round-trip, and truncated ones
// are refused.
func TestFencedEntryDecoding(t *testing.T) {
	inner := encodeMeta("k", []byte("value"), false)
	b := encodeFenced("_fence/S", []byte{1, 2}, inner)
	f, tok, e, err := decodeFenced(b[1:])
	if err != nil || f != "_fence/S" || string(tok) != "\x01\x02" || string(e) != string(inner) {
		t.Fatalf("decoded %q %q %q %v", f, tok, e, err)
	}
	for n := 1; n < len(b)-len(inner); n++ {
		if _, _, _, err := decodeFenced(b[1:n]); err == nil {
			t.Fatalf("entry cut to %d bytes accepted", n)
		}
	}
}
