package cluster

import (
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// blackHole accepts connections and reads everything sent on them, never
// answering: a peer that is going away, or partitioned, mid-RPC.
type blackHole struct {
	ln    net.Listener
	bytes atomic.Int64
}

func newBlackHole(t *testing.T) *blackHole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackHole{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					b.bytes.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return b
}

// Closing a node returns at once even while its raft groups wait for
// answers from peers that will never give them: raft's Shutdown waits for
// its vote and replication goroutines, so the group's connections are
// closed first (group.close). Before, each RPC held Close for the
// transport's 10 s timeout; a clustered server stopping after its peers
// could exceed a test's 30 s bound on shutdown.
func TestCloseDoesNotWaitForSilentPeers(t *testing.T) {
	a, b := newBlackHole(t), newBlackHole(t)
	self, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	selfAddr := self.Addr().String()
	self.Close() // its address names the node; nothing dials it here
	n, err := New(Options{Dir: filepath.Join(t.TempDir(), "_cluster"), Self: selfAddr,
		Peers: []string{a.ln.Addr().String(), b.ln.Addr().String()}, Dial: plainDial})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(nil, func(string, []byte) {}, func(string) {}); err != nil {
		t.Fatal(err)
	}
	// The meta group stands for election and asks both peers for votes:
	// wait until a request (more than the preamble) is inside each.
	deadline := time.Now().Add(30 * time.Second)
	for a.bytes.Load() <= 64 || b.bytes.Load() <= 64 {
		if time.Now().After(deadline) {
			n.Close()
			t.Fatalf("no vote request reached the silent peers (%d and %d bytes)", a.bytes.Load(), b.bytes.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- n.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second): // the transport's timeout is 10 s
		<-done
		t.Fatal("Close waited for the silent peers' RPCs to time out")
	}
}

// plainDial dials a raft peer with no server in between: TCP and the
// group's preamble, without credentials (the black holes check nothing).
func plainDial(address, group string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte("RAFT " + group + " {}\r\n")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
