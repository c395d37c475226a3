package mux

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// dialed counts the connections l dialed that are still open.
func (l *Layer) dialed() int {
	l.liveMu.Lock()
	defer l.liveMu.Unlock()
	n := 0
	for c := range l.live {
		if !c.accepted {
			n++
		}
	}
	return n
}

// TestLeaderOneConnectionPerFollower: once a group of three has a leader
// that replicated through its pipelines, its heartbeats ride them: the
// leader holds one connection per follower, not a second one for the
// heartbeats, and the group keeps committing.
func TestLeaderOneConnectionPerFollower(t *testing.T) {
	var muxes []*Mux
	var servers []raft.Server
	for i := range 3 {
		_, m := listenMux(t)
		muxes = append(muxes, m)
		servers = append(servers, raft.Server{ID: raft.ServerID(fmt.Sprint("s", i)), Address: raft.ServerAddress(m.addr.String())})
	}
	rafts := make([]*raft.Raft, 3)
	layers := make([]*Layer, 3)
	for i := range 3 {
		layer, err := muxes[i].Layer("G")
		if err != nil {
			t.Fatal(err)
		}
		layers[i] = layer
		trans := NewTransport(layer, 5*time.Second)
		c := raft.DefaultConfig()
		c.LocalID = servers[i].ID
		c.HeartbeatTimeout, c.ElectionTimeout, c.LeaderLeaseTimeout = 300*time.Millisecond, 300*time.Millisecond, 150*time.Millisecond
		c.LogOutput = io.Discard
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(c, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			t.Fatal(err)
		}
		r, err := raft.NewRaft(c, &snapFSM{}, store, store, snaps, trans)
		if err != nil {
			t.Fatal(err)
		}
		rafts[i] = r
		t.Cleanup(func() { r.Shutdown().Error(); layer.Close() })
	}
	var li int
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		li = -1
		for i, r := range rafts {
			if r.State() == raft.Leader {
				li = i
			}
		}
		if li >= 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
	}
	for i := 0; i < 20; i++ {
		if err := rafts[li].Apply([]byte{1}, 10*time.Second).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// Heartbeats go every 30-60 ms: a second connection for them would be
	// open now.
	time.Sleep(500 * time.Millisecond)
	if n := layers[li].dialed(); n != 2 {
		t.Fatalf("the leader holds %d connections it dialed, want 2 (one pipeline per follower)", n)
	}
	if err := rafts[li].Apply([]byte{1}, 10*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if err := rafts[li].VerifyLeader().Error(); err != nil { // heartbeats answered
		t.Fatal(err)
	}
}

// TestRefusedDialRetried: a dial refused by the peer is tried again for
// refusedWait, so a peer that starts listening meanwhile is reached, and
// one that does not makes the RPC fail with the refusal after refusedWait.
func TestRefusedDialRetried(t *testing.T) {
	addr := freedAddr(t) // nothing listens there now: dials are refused
	_, m := listenMux(t)
	layer, err := m.Layer("G")
	if err != nil {
		t.Fatal(err)
	}
	defer layer.Close()
	trans := NewTransport(layer, 5*time.Second)
	defer trans.Close()
	t0 := time.Now()
	_, err = trans.dial(raft.ServerAddress(addr))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial to nothing: %v, want the refusal", err)
	}
	if d := time.Since(t0); d < refusedWait {
		t.Fatalf("refused dial failed after %v, want no sooner than %v", d, refusedWait)
	}
	// A peer that starts listening within refusedWait is reached. Another
	// process may take a freed port meanwhile: then try a fresh one.
	for try := 1; ; try++ {
		listening := make(chan net.Listener, 1)
		go func() {
			time.Sleep(refusedWait / 3)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				ln = nil
			}
			listening <- ln
		}()
		c, err := trans.dial(raft.ServerAddress(addr))
		ln := <-listening
		if ln == nil {
			if c != nil {
				c.Close()
			}
			if try == 5 {
				t.Fatalf("no freed port could be listened on again in %d tries", try)
			}
			addr = freedAddr(t)
			continue
		}
		defer ln.Close()
		if err != nil {
			t.Fatalf("dial to a peer listening within refusedWait: %v", err)
		}
		c.Close()
		return
	}
}

// freedAddr returns a loopback address nothing listens on any more.
func freedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestSetHandlerServesQueued: a connection dispatched before the layer
// has a handler is served once SetHandler sets one, and one dispatched
// after is served on the dispatching goroutine; no goroutine waits in
// Accept.
func TestSetHandlerServesQueued(t *testing.T) {
	m := New(&net.TCPAddr{}, nil, nil)
	defer m.Close()
	l, err := m.Layer("G")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 2)
	early, earlyPeer := net.Pipe()
	defer earlyPeer.Close()
	m.Dispatch(early, "G") // queued: no handler yet
	l.SetHandler(func(c net.Conn) { served <- "early"; c.Close() })
	select {
	case s := <-served:
		if s != "early" {
			t.Fatalf("served %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection queued before SetHandler was not served")
	}
	late, latePeer := net.Pipe()
	defer latePeer.Close()
	l.SetHandler(func(c net.Conn) { served <- "late"; c.Close() })
	m.Dispatch(late, "G") // served here, before Dispatch returns
	select {
	case s := <-served:
		if s != "late" {
			t.Fatalf("served %q", s)
		}
	default:
		t.Fatal("Dispatch returned before the handler served the connection")
	}
}
