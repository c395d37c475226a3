package cluster

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/testport"
	"github.com/jetwal/jetwal/server"
)

// testNode is one server of an in-process test cluster: a NATS server with
// routes, and this package's Node on its route port.
type testNode struct {
	srv  *server.Server
	n    *Node
	opts Options  // the node's options, to start it again
	h    *Handoff // the server's raft handoff, to point at a new node
}

// startNodes starts k servers whose meta groups form one cluster; put(i)
// is server i's put callback. They stop at the test's end.
func startNodes(t *testing.T, k int, put func(i int) func(string, []byte)) []*testNode {
	t.Helper()
	return startNodesWith(t, k, put, func(*server.ClusterOptions) {})
}

// startNodesWith is startNodes with each server's route options amended
// by opt (route credentials, TLS); route URLs carry the credentials opt
// sets, as a configuration's routes would.
func startNodesWith(t *testing.T, k int, put func(i int) func(string, []byte), opt func(*server.ClusterOptions)) []*testNode {
	t.Helper()
	return startNodesOpts(t, k, put, opt, nil)
}

// startNodesOpts is startNodesWith with each node's Options amended by
// nodeOpt (nil: none), e.g. to set Encryption.
func startNodesOpts(t *testing.T, k int, put func(i int) func(string, []byte), opt func(*server.ClusterOptions), nodeOpt func(*Options)) []*testNode {
	t.Helper()
	ports := testport.Free(t, k)
	var probe server.ClusterOptions
	opt(&probe)
	var routes []*url.URL
	var peers []string
	for _, p := range ports {
		addr := fmt.Sprintf("127.0.0.1:%d", p)
		u := &url.URL{Scheme: "nats", Host: addr}
		if probe.Username != "" {
			u.User = url.UserPassword(probe.Username, probe.Password)
		}
		routes = append(routes, u)
		peers = append(peers, addr)
	}
	// Every server listens before any meta group starts, so that no
	// group's first vote requests go to a port nobody answers yet.
	nodes := make([]*testNode, k)
	handoffs := make([]Handoff, k)
	for i := range nodes {
		h := &handoffs[i]
		co := &server.ClusterOptions{Name: "T", Host: "127.0.0.1", Port: ports[i], Routes: routes, Raft: h.Serve}
		opt(co)
		srv, err := server.New(server.Options{Host: "127.0.0.1", ServerName: fmt.Sprintf("s%d", i+1), Cluster: co})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Listen(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		})
		o := Options{Dir: filepath.Join(t.TempDir(), "_cluster"), Self: peers[i], Peers: peers, Dial: srv.DialRaft}
		if nodeOpt != nil {
			nodeOpt(&o)
		}
		n, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		h.Set(n)
		nodes[i] = &testNode{srv: srv, n: n, opts: o, h: h}
	}
	for i, tn := range nodes {
		if err := tn.n.Start(tn.srv, put(i), func(string) {}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := tn.n.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	return nodes
}

// metaLeader waits until every server names the same meta leader, and has
// for 250 ms (the group's first elections may follow one another while
// servers come up), and returns its index.
func metaLeader(t *testing.T, nodes []*testNode) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	stable, last := 0, -1
	for time.Now().Before(deadline) {
		cur := agreedLeader(nodes)
		if cur >= 0 && cur == last {
			stable++
		} else {
			stable = 0
		}
		if stable >= 5 {
			return cur
		}
		last = cur
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no meta leader that every server names")
	return -1
}

// agreedLeader returns the index of the server every server names as the
// meta leader, -1 when they do not agree.
func agreedLeader(nodes []*testNode) int {
	lead := -1
	var addr raft.ServerAddress
	for i, tn := range nodes {
		m := tn.n.metaGroup()
		if m == nil {
			return -1
		}
		a, _ := m.g.r.LeaderWithID()
		if a == "" || (addr != "" && a != addr) {
			return -1
		}
		addr = a
		if tn.n.IsMetaLeader() {
			lead = i
		}
	}
	return lead
}

// watchEverything subscribes a plain client to ">" on every node and
// returns the subjects it sees (a buffer of size): what a user of the
// default account can observe of the cluster's traffic.
func watchEverything(t *testing.T, nodes []*testNode, size int) chan string {
	t.Helper()
	seen := make(chan string, size)
	for _, tn := range nodes {
		nc, err := nats.Connect("nats://" + tn.srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		if _, err := nc.Subscribe(">", func(m *nats.Msg) { seen <- m.Subject }); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	return seen
}
