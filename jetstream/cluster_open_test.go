package jetstream

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// openCluster is a Cluster whose OpenStream waits until the test releases
// it, stream by stream. Any method not defined here is the embedded nil
// interface's and panics: applying a new replica's assignment must not
// call it.
type openCluster struct {
	Cluster
	mu      sync.Mutex
	opening map[string]chan error // release: nil opens, an error fails
	started chan string           // each OpenStream as it begins
	fail    bool
}

func (c *openCluster) Self() string { return "p1" }
func (c *openCluster) OpenStream(name string, peers []string, join, campaign bool, opts wal.Options, onLeader func(bool)) (Replica, error) {
	release := make(chan error)
	c.mu.Lock()
	c.opening[name] = release
	c.mu.Unlock()
	c.started <- name
	if err := <-release; err != nil {
		return nil, err
	}
	return &openReplica{name: name}, nil
}

func (c *openCluster) release(t *testing.T, name string, err error) {
	t.Helper()
	c.mu.Lock()
	ch := c.opening[name]
	c.mu.Unlock()
	if ch == nil {
		t.Fatalf("%s: no open to release", name)
	}
	ch <- err
}

// openReplica records the peers applyStream gives it.
type openReplica struct {
	Replica
	name  string
	mu    sync.Mutex
	peers []string
}

func (r *openReplica) SetPeers(p []string) {
	r.mu.Lock()
	r.peers = p
	r.mu.Unlock()
}
func (r *openReplica) UpdateLimits(store.Limits) error { return nil }

func openTestJS(t *testing.T) (*JetStream, *openCluster) {
	cl := &openCluster{opening: map[string]chan error{}, started: make(chan string, 64)}
	js := &JetStream{cl: &clustering{c: cl, hosted: map[string]*hosted{}, leaving: map[string]*hosted{},
		converting: map[string]*conversion{}}}
	js.log = slog.New(slog.DiscardHandler)
	js.cfg.FS, js.cfg.StoreDir = vfs.Default, t.TempDir()
	return js, cl
}

func assignmentOf(name string, peers ...string) streamAssignment {
	return streamAssignment{Config: api.StreamConfig{Name: name}, Peers: peers}
}

// TestReplicaOpensOverlap: the meta group's assignments of new replicas
// are opened side by side (a restart with many streams waits for one
// open's syncs at a time otherwise), at most maxReplicaOpens at once;
// the stream's next assignment waits for its own open and then applies;
// its consumers' assignments do not wait.
func TestReplicaOpensOverlap(t *testing.T) {
	js, cl := openTestJS(t)
	names := make([]string, maxReplicaOpens+1)
	for i := range names {
		names[i] = fmt.Sprintf("S%d", i)
	}
	first := make(chan struct{})
	go func() {
		for _, n := range names[:maxReplicaOpens] {
			js.applyStream(assignmentOf(n, "p1", "p2", "p3")) // returns with the open in flight
		}
		close(first)
	}()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("applying an assignment waits for its replica's open")
	}
	began := map[string]bool{}
	for range maxReplicaOpens {
		select {
		case n := <-cl.started:
			began[n] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("opens in flight: %v, want %d", began, maxReplicaOpens)
		}
	}
	// A consumer's assignment does not wait for its stream's open (the
	// stream restores its consumers when it leads).
	put := make(chan struct{})
	go func() {
		js.applyMetaPut(consumerKeyPrefix+"S3/D", []byte(`{"config":{"durable_name":"D"}}`))
		close(put)
	}()
	select {
	case <-put:
	case <-time.After(10 * time.Second):
		t.Fatal("a consumer's assignment waits for its stream's open")
	}
	// One more waits for a free slot.
	applied := make(chan struct{})
	go func() {
		js.applyStream(assignmentOf(names[maxReplicaOpens], "p1", "p2", "p3"))
		close(applied)
	}()
	select {
	case n := <-cl.started:
		t.Fatalf("%s opened with %d opens in flight", n, maxReplicaOpens)
	case <-applied:
		t.Fatalf("assignment %d applied with %d opens in flight", maxReplicaOpens+1, maxReplicaOpens)
	case <-time.After(200 * time.Millisecond):
	}
	// S0's open fails: its slot goes to the waiting one, S0 is not hosted.
	cl.release(t, "S0", fmt.Errorf("disk gone"))
	if n := <-cl.started; n != names[maxReplicaOpens] {
		t.Fatalf("started %s", n)
	}
	<-applied
	if h := js.hostedStream("S0"); h != nil {
		t.Fatalf("S0 hosted after its open failed")
	}

	// S1's update waits for S1's open, then reaches its replica.
	updated := make(chan struct{})
	go func() {
		js.applyStream(assignmentOf("S1", "p1", "p2", "p4"))
		close(updated)
	}()
	select {
	case <-updated:
		t.Fatal("S1's update applied before its open ended")
	case <-time.After(200 * time.Millisecond):
	}
	cl.release(t, "S1", nil)
	select {
	case <-updated:
	case <-time.After(10 * time.Second):
		t.Fatal("S1's update did not apply after its open")
	}
	rep := js.hostedStream("S1").replica().(*openReplica)
	rep.mu.Lock()
	peers := rep.peers
	rep.mu.Unlock()
	if !slices.Equal(peers, []string{"p1", "p2", "p4"}) {
		t.Fatalf("S1's replica has peers %v after the update", peers)
	}

	// An update of a stream whose open fails opens it anew.
	updated = make(chan struct{})
	go func() {
		js.applyStream(assignmentOf("S2", "p1", "p2", "p4"))
		close(updated)
	}()
	time.Sleep(50 * time.Millisecond)
	cl.release(t, "S2", fmt.Errorf("disk gone"))
	if n := <-cl.started; n != "S2" {
		t.Fatalf("reopened %s, want S2", n)
	}
	<-updated
	cl.release(t, "S2", nil)

	for _, n := range names[3:] {
		cl.release(t, n, nil)
	}
	js.cl.opens.wait()
	for _, n := range names[1:] {
		h := js.hostedStream(n)
		if h == nil || h.replica() == nil {
			t.Errorf("%s not hosted after its open", n)
		}
	}
}
