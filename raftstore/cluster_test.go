package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/raftstore/internal/rafttest"
	"github.com/jetwal/jetwal/vfs"
)

// applied is one command an FSM applied: the raft index and the command's
// number.
type applied struct{ Index, N uint64 }

// countFSM records every command it applies and flags any applied twice or
// out of log order. Its snapshot is the whole list.
type countFSM struct {
	mu         sync.Mutex
	list       []applied
	violations []string
}

func (f *countFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := binary.BigEndian.Uint64(l.Data)
	if k := len(f.list); k > 0 && (l.Index <= f.list[k-1].Index || n <= f.list[k-1].N) {
		f.violations = append(f.violations, fmt.Sprintf("applied index %d (command %d) after index %d (command %d)",
			l.Index, n, f.list[k-1].Index, f.list[k-1].N))
	}
	f.list = append(f.list, applied{l.Index, n})
	return n
}

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &listSnapshot{list: append([]applied(nil), f.list...)}, nil
}

func (f *countFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	if len(b)%16 != 0 {
		return fmt.Errorf("snapshot of %d bytes", len(b))
	}
	list := make([]applied, len(b)/16)
	for i := range list {
		list[i] = applied{binary.BigEndian.Uint64(b[16*i:]), binary.BigEndian.Uint64(b[16*i+8:])}
	}
	f.mu.Lock()
	f.list = list
	f.mu.Unlock()
	return nil
}

func (f *countFSM) snapshot() ([]applied, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]applied(nil), f.list...), append([]string(nil), f.violations...)
}

type listSnapshot struct{ list []applied }

func (s *listSnapshot) Persist(sink raft.SnapshotSink) error {
	b := make([]byte, 0, 16*len(s.list))
	for _, a := range s.list {
		b = binary.BigEndian.AppendUint64(b, a.Index)
		b = binary.BigEndian.AppendUint64(b, a.N)
	}
	if _, err := sink.Write(b); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *listSnapshot) Release() {}

// network makes transports for the cluster test: in memory or TCP.
type network interface {
	// listen returns a transport at addr, or at a new address when addr
	// is empty.
	listen(t *testing.T, addr raft.ServerAddress) raft.Transport
	// down cuts the node at addr off before it is shut down.
	down(addr raft.ServerAddress)
}

// inmemNet is a rafttest.Mesh that names the nodes that come without an
// address.
type inmemNet struct {
	mesh *rafttest.Mesh
	mu   sync.Mutex
	next int
}

func (n *inmemNet) listen(t *testing.T, addr raft.ServerAddress) raft.Transport {
	if addr == "" {
		n.mu.Lock()
		n.next++
		addr = raft.ServerAddress(fmt.Sprintf("node%d", n.next))
		n.mu.Unlock()
	}
	return n.mesh.Join(addr)
}

func (n *inmemNet) down(addr raft.ServerAddress) { n.mesh.Leave(addr) }

type tcpNet struct{}

func (tcpNet) listen(t *testing.T, addr raft.ServerAddress) raft.Transport {
	bind := string(addr)
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	var tr *raft.NetworkTransport
	var err error
	// A restarted node binds its old port again; give the kernel a moment
	// if the old listener is still going away.
	for try := 0; try < 100; try++ {
		if tr, err = raft.NewTCPTransport(bind, nil, 3, 2*time.Second, io.Discard); err == nil {
			return tr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("tcp transport on %s: %v", bind, err)
	return nil
}

func (tcpNet) down(raft.ServerAddress) {}

// node is one raft server on a jetwal store.
type node struct {
	id    raft.ServerID
	addr  raft.ServerAddress
	dir   string
	mem   *vfs.MemFS   // the log store's disk when it is in memory; nil: the real disk
	enc   crypt.Config // the log's and the snapshots' encryption
	store *Store
	fsm   *countFSM
	trans raft.Transport
	r     *raft.Raft
}

func testConfig(id raft.ServerID) *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = id
	c.HeartbeatTimeout = 200 * time.Millisecond
	c.ElectionTimeout = 200 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
	c.SnapshotThreshold = 40
	c.SnapshotInterval = 200 * time.Millisecond
	c.TrailingLogs = 20
	c.LogOutput = io.Discard
	return c
}

// start opens the node's store (creating it the first time) and starts raft.
func (n *node) start(t *testing.T, nw network) {
	t.Helper()
	var err error
	n.store, err = Open(n.logDir(), Options{FS: n.logFS(), Log: raftlog.Options{MinSegmentSize: 64 << 10, MaxSegmentSize: 256 << 10}, Encryption: n.enc})
	if err != nil {
		t.Fatal(err)
	}
	if n.store.Encrypted() != n.enc.Enabled() {
		t.Fatalf("%s: log encrypted %v with key %v", n.id, n.store.Encrypted(), n.enc.Enabled())
	}
	files, err := raft.NewFileSnapshotStore(filepath.Join(n.dir, "snaps"), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := WrapSnapshots(files, filepath.Join(n.dir, "snaps"), SnapshotOptions{Encryption: n.enc})
	if err != nil {
		t.Fatal(err)
	}
	n.trans = nw.listen(t, n.addr)
	n.addr = n.trans.LocalAddr()
	n.fsm = &countFSM{}
	n.r, err = raft.NewRaft(testConfig(n.id), n.fsm, n.store, n.store, snaps, n.trans)
	if err != nil {
		t.Fatal(err)
	}
}

func (n *node) logDir() string { return filepath.Join(n.dir, "log") }

func (n *node) logFS() vfs.FS {
	if n.mem != nil {
		return n.mem
	}
	return vfs.Default
}

// crash is a power cut for a node whose log store is in memory: the store
// restarts from what its disk held at that instant, a random part of the
// unsynced bytes included, while raft is still running. For a node on the
// real disk it is stop.
func (n *node) crash(t *testing.T, nw network, rng *rand.Rand) {
	t.Helper()
	var img *vfs.MemFS
	if n.mem != nil {
		img = n.mem.CrashCloneTorn(rng)
	}
	n.stop(t, nw)
	if img != nil {
		n.mem = img
	}
}

// stop shuts raft down (a kill as far as the store is concerned: nothing
// is flushed that StoreLogs did not already make durable) and closes the
// store.
func (n *node) stop(t *testing.T, nw network) {
	t.Helper()
	nw.down(n.addr)
	if err := n.r.Shutdown().Error(); err != nil {
		t.Fatalf("shutdown %s: %v", n.id, err)
	}
	if c, ok := n.trans.(io.Closer); ok {
		c.Close()
	}
	if err := n.store.Close(); err != nil {
		t.Fatalf("close store %s: %v", n.id, err)
	}
	n.r = nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	rafttest.WaitUntil(t, what, cond)
}

func leaderOf(t *testing.T, nodes []*node) *node {
	t.Helper()
	var leader *node
	waitFor(t, "a leader", func() bool {
		for _, n := range nodes {
			if n.r != nil && n.r.State() == raft.Leader {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// cluster drives a 3-node cluster through commands, snapshots, log
// compaction, the kill and restart of its leader and the catch-up of a node
// by snapshot, then checks every node applied every committed command
// exactly once, in order.
type cluster struct {
	t      *testing.T
	nw     network
	nodes  []*node
	next   uint64          // number of the next command
	acked  []uint64        // commands whose Apply succeeded
	maybe  map[uint64]bool // commands whose Apply failed: committed or not
	leader *node
}

func (c *cluster) apply(k int) {
	t := c.t
	for i := 0; i < k; i++ {
		if c.leader == nil || c.leader.r == nil || c.leader.r.State() != raft.Leader {
			c.leader = leaderOf(t, c.live())
		}
		c.next++
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], c.next)
		if err := c.leader.r.Apply(b[:], 5*time.Second).Error(); err != nil {
			c.maybe[c.next] = true
			c.leader = nil
			continue
		}
		c.acked = append(c.acked, c.next)
	}
}

func (c *cluster) live() []*node {
	var out []*node
	for _, n := range c.nodes {
		if n.r != nil {
			out = append(out, n)
		}
	}
	return out
}

// runCluster runs the scenario; with inMemory the log stores are on
// crashable in-memory filesystems and the leader and the follower are killed
// by a power cut (crash images) rather than a shutdown.
func runCluster(t *testing.T, nw network, inMemory bool) {
	runClusterEnc(t, nw, inMemory, crypt.Config{})
}

// runClusterEnc is runCluster with every node's log and snapshots
// encrypted by enc.
func runClusterEnc(t *testing.T, nw network, inMemory bool, enc crypt.Config) {
	c := &cluster{t: t, nw: nw, maybe: map[uint64]bool{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var servers []raft.Server
	for i := 0; i < 3; i++ {
		n := &node{id: raft.ServerID(fmt.Sprintf("n%d", i)), dir: t.TempDir(), enc: enc}
		if inMemory {
			n.mem = vfs.NewMemFS()
		}
		n.start(t, nw)
		c.nodes = append(c.nodes, n)
		servers = append(servers, raft.Server{ID: n.id, Address: n.addr})
	}
	defer func() {
		for _, n := range c.nodes {
			if n.r != nil {
				n.stop(t, nw)
			}
		}
	}()
	if err := c.nodes[0].r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	c.apply(120)
	snapshot(t, leaderOf(t, c.live()))

	// Kill the leader; the others elect a new one and go on.
	old := leaderOf(t, c.live())
	old.crash(t, nw, rng)
	c.leader = nil
	c.apply(150)
	// Compact both live nodes' logs so the old leader, when back, is behind
	// the first index of whichever leads and must be sent a snapshot.
	oldLast, _ := reopenLast(t, old)
	for _, n := range c.live() {
		snapshot(t, n)
		first, err := n.store.FirstIndex()
		if err != nil {
			t.Fatal(err)
		}
		if first <= oldLast+1 {
			t.Fatalf("%s: log starts at %d, the stopped node has up to %d: no compaction happened", n.id, first, oldLast)
		}
	}

	// Restart the old leader from its store and snapshots.
	old.start(t, nw)
	c.apply(80)
	// It caught up by installing the leader's snapshot: raft then deletes
	// its whole log (IsMonotonic), so its log now starts past its old end.
	waitFor(t, "the restarted node to install a snapshot", func() bool {
		f, err := old.store.FirstIndex()
		return err == nil && f > oldLast+1
	})

	// Kill and restart a follower too, so one node restores from its own
	// snapshot and replays its own log.
	var follower *node
	for _, n := range c.live() {
		if n.r.State() != raft.Leader {
			follower = n
			break
		}
	}
	follower.crash(t, nw, rng)
	c.apply(30)
	follower.start(t, nw)
	c.apply(20)

	c.check()
	if enc.Enabled() {
		for _, n := range c.nodes {
			states, _ := filepath.Glob(filepath.Join(n.dir, "snaps", "snapshots", "*", "state.bin"))
			if len(states) == 0 {
				t.Fatalf("%s: no snapshot", n.id)
			}
			for _, p := range states {
				if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte(snapSealMagic)) {
					t.Fatalf("%s: not sealed (%v)", p, err)
				}
			}
		}
	}
}

// snapshot takes a user snapshot of n, which compacts its log down to
// TrailingLogs entries. Raft's own threshold snapshot may have just covered
// everything; that is as good.
func snapshot(t *testing.T, n *node) {
	t.Helper()
	if err := n.r.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		t.Fatalf("%s: snapshot: %v", n.id, err)
	}
}

// reopenLast reads the last index of a stopped node's store.
func reopenLast(t *testing.T, n *node) (uint64, error) {
	s, err := Open(n.logDir(), Options{FS: n.logFS(), Encryption: n.enc})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.LastIndex()
}

// check waits until every node has applied every acknowledged command and
// then requires identical, strictly ordered, duplicate-free histories.
func (c *cluster) check() {
	t := c.t
	if len(c.acked) < 300 {
		t.Fatalf("only %d of %d commands acknowledged", len(c.acked), c.next)
	}
	lastAcked := c.acked[len(c.acked)-1]
	waitFor(t, "every node to apply every acknowledged command", func() bool {
		for _, n := range c.nodes {
			list, _ := n.fsm.snapshot()
			if len(list) == 0 || list[len(list)-1].N < lastAcked {
				return false
			}
		}
		return true
	})
	var ref []applied
	for i, n := range c.nodes {
		list, violations := n.fsm.snapshot()
		if len(violations) > 0 {
			t.Fatalf("%s: %v", n.id, violations)
		}
		// Trim to the last acknowledged command: later ones may still be
		// on their way to some node.
		for len(list) > 0 && list[len(list)-1].N > lastAcked {
			list = list[:len(list)-1]
		}
		seen := map[uint64]bool{}
		for j, a := range list {
			if seen[a.N] {
				t.Fatalf("%s: command %d applied twice", n.id, a.N)
			}
			seen[a.N] = true
			if j > 0 && (a.Index <= list[j-1].Index || a.N <= list[j-1].N) {
				t.Fatalf("%s: out of order at %d: %+v after %+v", n.id, j, a, list[j-1])
			}
			if !c.maybe[a.N] && a.N > lastAcked {
				t.Fatalf("%s: applied unknown command %d", n.id, a.N)
			}
		}
		for _, k := range c.acked {
			if !seen[k] {
				t.Fatalf("%s: acknowledged command %d never applied", n.id, k)
			}
		}
		if i == 0 {
			ref = list
			continue
		}
		if len(list) != len(ref) {
			t.Fatalf("%s applied %d commands, %s applied %d", n.id, len(list), c.nodes[0].id, len(ref))
		}
		for j := range list {
			if list[j] != ref[j] {
				t.Fatalf("%s and %s differ at %d: %+v vs %+v", n.id, c.nodes[0].id, j, list[j], ref[j])
			}
		}
	}
	// Every store must pass the engine's checker once closed.
	for _, n := range c.nodes {
		n.stop(t, c.nw)
		r, err := raftlog.Check(n.logFS(), n.logDir())
		if err != nil || !r.OK() {
			t.Fatalf("%s: Check: %v %v", n.id, err, r)
		}
		if n.enc.Enabled() {
			r, err := raftlog.CheckKey(n.logFS(), n.logDir(), n.enc)
			if err != nil || !r.OK() || !r.TagsChecked {
				t.Fatalf("%s: CheckKey: %v %v", n.id, err, r)
			}
		}
	}
}

// TestClusterInmem: InmemTransport, log stores on crashable in-memory
// filesystems, and the leader and a follower killed by a power cut.
func TestClusterInmem(t *testing.T) {
	runCluster(t, &inmemNet{mesh: rafttest.NewMesh()}, true)
}

// TestClusterTCP: real TCP transports on loopback, log stores on the real
// disk, nodes stopped with Shutdown and reopened from their directories.
func TestClusterTCP(t *testing.T) {
	runCluster(t, tcpNet{}, false)
}

// TestClusterInmemEncrypted is TestClusterInmem with every log and every
// snapshot store encrypted: power cuts, compaction, a snapshot sent to a
// node that fell behind (read sealed on the leader, sealed again on the
// follower) and a restore from a node's own sealed snapshot.
func TestClusterInmemEncrypted(t *testing.T) {
	runClusterEnc(t, &inmemNet{mesh: rafttest.NewMesh()}, true, crypt.Config{Key: "cluster key", Cipher: crypt.ChaCha})
}
