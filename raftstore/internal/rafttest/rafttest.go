// Package rafttest holds what the raft tests of the raftstore module share:
// a mesh of in-memory transports that servers join and leave, a raft
// configuration with short timeouts, and polling helpers.
package rafttest

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Mesh connects the in-memory transports of the servers that joined it.
type Mesh struct {
	mu    sync.Mutex
	trans map[raft.ServerAddress]*raft.InmemTransport
}

// NewMesh returns an empty mesh.
func NewMesh() *Mesh { return &Mesh{trans: make(map[raft.ServerAddress]*raft.InmemTransport)} }

// Join returns a transport for addr connected to every other member.
func (m *Mesh) Join(addr raft.ServerAddress) *raft.InmemTransport {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, tr := raft.NewInmemTransport(addr)
	for a, o := range m.trans {
		tr.Connect(a, o)
		o.Connect(addr, tr)
	}
	m.trans[addr] = tr
	return tr
}

// Leave cuts addr off from every other member.
func (m *Mesh) Leave(addr raft.ServerAddress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.trans, addr)
	for _, o := range m.trans {
		o.Disconnect(addr)
	}
}

// Config is raft's default configuration for id with timeouts short enough
// for tests and long enough for a busy 2-core machine under the race
// detector, snapshots left to the test and 10 trailing log entries kept
// after one. With a 150 ms lease, a leader stalled that long by the
// machine stepped down in the middle of a test's appends ("leadership lost
// while committing log" in TestReplicatedStream, seen under load).
func Config(id raft.ServerID) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = id
	c.HeartbeatTimeout = time.Second
	c.ElectionTimeout = time.Second
	c.LeaderLeaseTimeout = 500 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotThreshold = 1 << 20
	c.TrailingLogs = 10
	c.LogOutput = io.Discard
	return c
}

// WaitUntil polls cond until it holds, failing the test after a minute.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Leader waits until one of rafts (nil entries are stopped servers) leads
// and returns its position.
func Leader(t testing.TB, rafts func() []*raft.Raft) int {
	t.Helper()
	at := -1
	WaitUntil(t, "a leader", func() bool {
		for i, r := range rafts() {
			if r != nil && r.State() == raft.Leader {
				at = i
				return true
			}
		}
		return false
	})
	return at
}

// Replica is a test's raft server on a Mesh: Start joins the mesh at the
// replica's server id (its address) and starts raft, Stop leaves and shuts
// it down, Raft is nil while it is stopped.
type Replica interface {
	Start(t *testing.T, m *Mesh)
	Stop(t *testing.T, m *Mesh)
	Raft() *raft.Raft
}

// StartCluster makes a replica for each id with newReplica, starts them on
// m, bootstraps them as one cluster through the first, and stops the ones
// still running when the test ends.
func StartCluster[R Replica](t *testing.T, m *Mesh, ids []raft.ServerID, newReplica func(raft.ServerID) R) []R {
	t.Helper()
	ps := make([]R, len(ids))
	servers := make([]raft.Server, len(ids))
	for i, id := range ids {
		ps[i] = newReplica(id)
		servers[i] = raft.Server{ID: id, Address: raft.ServerAddress(id)}
	}
	// Registered after newReplica's own cleanups (t.TempDir), so it runs
	// before them: the replicas stop before their directories go.
	t.Cleanup(func() {
		for _, p := range ps {
			if p.Raft() != nil {
				p.Stop(t, m)
			}
		}
	})
	for _, p := range ps {
		p.Start(t, m)
	}
	if err := ps[0].Raft().BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	return ps
}

// IDs returns the server ids prefix0 .. prefix<n-1>.
func IDs(prefix string, n int) []raft.ServerID {
	ids := make([]raft.ServerID, n)
	for i := range ids {
		ids[i] = raft.ServerID(fmt.Sprintf("%s%d", prefix, i))
	}
	return ids
}
