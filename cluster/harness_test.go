package cluster

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testport"
	"github.com/jetwal/jetwal/server"
)

// testNode is one server of an in-process test cluster: a NATS server with
// routes, and this package's Node on its route port.
type testNode struct {
	srv *server.Server
	n   *Node
}

// startNodes starts k servers whose meta groups form one cluster; put(i)
// is server i's put callback. They stop at the test's end.
func startNodes(t *testing.T, k int, put func(i int) func(string, []byte)) []*testNode {
	t.Helper()
	ports := testport.Free(t, k)
	var routes []*url.URL
	var peers []string
	for _, p := range ports {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		routes = append(routes, &url.URL{Scheme: "nats", Host: addr})
		peers = append(peers, addr)
	}
	nodes := make([]*testNode, k)
	for i := range nodes {
		var handoff atomic.Pointer[Node]
		srv, err := server.New(server.Options{Host: "127.0.0.1", ServerName: fmt.Sprintf("s%d", i+1),
			Cluster: &server.ClusterOptions{Name: "T", Host: "127.0.0.1", Port: ports[i], Routes: routes,
				HandoffPrefix: HandoffPrefix, Handoff: func(c net.Conn) {
					if n := handoff.Load(); n != nil {
						n.Handoff(c)
						return
					}
					c.Close()
				}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Listen(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		n, err := New(Options{Dir: filepath.Join(t.TempDir(), "_cluster"), Self: peers[i], Peers: peers})
		if err != nil {
			t.Fatal(err)
		}
		handoff.Store(n)
		if err := n.Start(srv, put(i), func(string) {}); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &testNode{srv: srv, n: n}
		t.Cleanup(func() {
			if err := n.Close(); err != nil {
				t.Error(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
	}
	return nodes
}

// metaLeader waits for the meta group's leader and returns its index.
func metaLeader(t *testing.T, nodes []*testNode) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, tn := range nodes {
			if tn.n.IsMetaLeader() {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no meta leader")
	return -1
}
