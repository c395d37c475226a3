package cluster

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/raftstore"
	"github.com/jetwal/jetwal/raftstore/mux"
	"github.com/jetwal/jetwal/server"
)

// Options configures a Node.
type Options struct {
	// Dir holds the node's raft state (see doc.go).
	Dir string
	// Self is this server's route listen address (host:port): its raft id
	// and address.
	Self string
	// Peers are the route listen addresses of every server of the cluster,
	// Self included: the meta group's initial membership.
	Peers []string
	// Name is this server's name.
	Name string
	// Tags are this server's tags (server_tags), announced to the others
	// through the meta map (nodeinfo.go).
	Tags []string
	// Timing of every group; zero values mean the defaults below.
	HeartbeatTimeout, ElectionTimeout time.Duration
	// Logger receives leadership changes and errors; nil discards them.
	Logger *slog.Logger
	// Dial opens a raft connection for a group to another server's route
	// port (server.Server.DialRaft: the route TLS and credentials). It is
	// required: raft never travels on a connection that skipped them.
	Dial mux.DialFunc
	// Encryption, when it has a key, seals every group's raft log and
	// snapshots (raftstore: each with a key file of its own, wrapped by
	// this key). Groups written in the clear before stay in the clear and
	// are logged as such; an encrypted group opened without its key is
	// refused. It does not reach a replica's wal store: OpenStream's
	// wal.Options carry that.
	Encryption crypt.Config
	// StreamSnapshotThreshold and StreamTrailingLogs, when not zero,
	// replace a stream group's raft SnapshotThreshold and TrailingLogs
	// (65536 each): how many entries after the last snapshot make the
	// next one, and how many a snapshot leaves in the log (a follower
	// further behind catches up from a snapshot; tests lower them).
	StreamSnapshotThreshold, StreamTrailingLogs uint64
}

// Default raft timing: faster than hashicorp/raft's 1 s defaults, so that a
// lost leader is replaced within about a second on a LAN.
const (
	DefaultHeartbeatTimeout = 500 * time.Millisecond
	DefaultElectionTimeout  = 500 * time.Millisecond
)

// ErrClosed is returned by a closed Node.
var ErrClosed = errors.New("cluster: closed")

// Node is one server's part in the cluster: the meta group and its stream
// replicas.
type Node struct {
	opts Options
	log  *slog.Logger
	mux  *mux.Mux
	srv  *server.Server

	meta *meta
	asks asks // Gather's requests in flight (gather.go)

	// progStop is closed by Close: the node's own goroutines stop (the
	// progress reports and watchHeartbeats, progress.go); progWG counts them.
	progStop chan struct{}
	progWG   sync.WaitGroup

	// beatObs carries every stream group's heartbeat observations to one
	// goroutine per node (watchHeartbeats), which hands each to its
	// replica by observed: a goroutine per group did the same for one
	// group each, a thousand goroutines on a server with a thousand
	// replicas.
	beatObs chan raft.Observation

	mu       sync.Mutex
	replicas map[string]*Replica
	observed map[*raft.Raft]*Replica // replicas whose heartbeats are observed
	opening  map[string]int          // OpenStream calls under way, by stream
	closed   bool
}

// New prepares a node; Handoff can take raft connections from the route
// listener from now on (a connection for a group not yet started waits
// for it a little, then is closed, and raft retries). Start starts the
// meta group.
func New(opts Options) (*Node, error) {
	if opts.Dir == "" || opts.Self == "" || opts.Dial == nil {
		return nil, errors.New("cluster: a directory, this server's route address and a raft dialer are required")
	}
	// A copy: sorting the caller's slice in place changed what the
	// caller's peers[i] named (the test harness gave two nodes one
	// address that way, when its random ports were not in order).
	opts.Peers = slices.Clone(opts.Peers)
	if !slices.Contains(opts.Peers, opts.Self) {
		opts.Peers = append(opts.Peers, opts.Self)
	}
	slices.Sort(opts.Peers)
	opts.Peers = slices.Compact(opts.Peers)
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if opts.ElectionTimeout <= 0 {
		opts.ElectionTimeout = DefaultElectionTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	addr, err := net.ResolveTCPAddr("tcp", opts.Self)
	if err != nil {
		return nil, fmt.Errorf("cluster: route address %q: %w", opts.Self, err)
	}
	n := &Node{opts: opts, log: opts.Logger, mux: mux.New(addr, opts.Dial, opts.Logger),
		replicas: make(map[string]*Replica), observed: make(map[*raft.Raft]*Replica), opening: make(map[string]int),
		progStop: make(chan struct{}), beatObs: make(chan raft.Observation, beatObsQueue)}
	n.progWG.Add(1)
	go n.watchHeartbeats(n.progStop)
	return n, nil
}

// Handoff takes a raft connection the route listener accepted and
// authenticated, whose preamble named group (server.ClusterOptions.Raft).
// A connection for a group not started yet waits for it up to
// mux.DefaultPark, then is closed (raft retries). It blocks meanwhile:
// call it on the connection's own goroutine.
func (n *Node) Handoff(c net.Conn, group string) { n.mux.Dispatch(c, group) }

// internal is the account of the cluster's coordination subjects (meta
// proposals, progress reports): the server's internal account, which no
// client can join, so that no user can propose, read or answer there.
func (n *Node) internal() *server.Account { return n.srv.InternalAccount() }

// Start starts the meta group on srv: put and del receive every committed
// change of the replicated map, in order (also when the log is replayed
// after a restart, and as a whole when a snapshot is installed). They run
// on the meta group's apply goroutine, one at a time.
func (n *Node) Start(srv *server.Server, put func(key string, val []byte), del func(key string)) error {
	n.srv = srv
	if err := n.startProgress(n.progStop); err != nil {
		return err
	}
	m, err := startMeta(n, put, del)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.meta = m
	n.mu.Unlock()
	return nil
}

// Self returns this server's raft id (its route address).
func (n *Node) Self() string { return n.opts.Self }

// NameOf returns the server name of a peer: its route's, else the name
// it announced in the meta map (a server that is down), "" when unknown.
func (n *Node) NameOf(peer string) string {
	if peer == n.opts.Self {
		return n.opts.Name
	}
	if r, ok := n.route(peer); ok && r.RemoteName != "" {
		return r.RemoteName
	}
	return n.announcedName(peer)
}

// route returns the route to peer.
func (n *Node) route(peer string) (server.RouteInfo, bool) {
	if n.srv == nil {
		return server.RouteInfo{}, false
	}
	for _, r := range n.srv.RoutesBrief() {
		if strings.Contains(r.RouteURL, "//"+peer+"/") || strings.HasSuffix(r.RouteURL, "//"+peer) {
			return r, true
		}
	}
	return server.RouteInfo{}, false
}

// Connected reports whether a route to peer is up (always for Self).
func (n *Node) Connected(peer string) bool {
	if peer == n.opts.Self {
		return true
	}
	r, ok := n.route(peer)
	return ok && r.RemoteName != ""
}

// logCacheEntries is how many of a stream group's latest entries raft
// keeps in memory (raft.LogCache), for its leader's replication to read
// (each follower's append, and the term of the entry before it) and for
// each member's apply: without it each was a read and decode of the
// entry from the log, a copy of every batch two to three times over on
// the leader (in a profile of R3 publishing, the largest allocation of
// all). A follower far behind reads from the log, as before. The cache
// holds at most this many entries of up to 1 MiB (batcher.go) per group.
const logCacheEntries = 32

// metaCommitTimeout is the meta group's raft CommitTimeout: how long its
// leader waits without a write before it sends the followers an append
// that carries the commit index. Its writes' commits go out at once as
// notices (commitnotice.go); this is what tells a follower whose log is
// complete but who does not know what of it is committed (a restarted
// server: raft learns the commit index only from its leader), which then
// applies its own log. 5 ms cost a quiet cluster ~260 empty appends a
// second from its meta leader (2.8% of a core per server); with 1 s a
// restarted server applied the meta map up to 2 s late, and answered
// requests about streams from a map that old (serve's
// TestClusterDirectGetFollowerCatchingUp failed under load); 50 ms costs
// ~40 appends a second.
const metaCommitTimeout = 50 * time.Millisecond

// raftConfig is the configuration of every group of this node.
func (n *Node) raftConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(n.opts.Self)
	c.HeartbeatTimeout = n.opts.HeartbeatTimeout
	c.ElectionTimeout = n.opts.ElectionTimeout
	c.LeaderLeaseTimeout = n.opts.HeartbeatTimeout / 2
	c.CommitTimeout = metaCommitTimeout
	c.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Output: io.Discard, Level: hclog.Off})
	return c
}

// group is what every raft group of the node is made of.
type group struct {
	r     *raft.Raft
	log   *raftstore.Store
	logs  raft.LogStore // what raft reads and writes entries through: log, or a cache in front of it
	trans *mux.Transport
	layer *mux.Layer
}

// groupStart says how startGroup starts a group's member.
type groupStart struct {
	join      bool // added to an existing group: bootstrap nothing
	campaign  bool // stand for the first election at once
	outerLock bool // the caller's lock covers the directory
	// shareBeats: the group's heartbeats go with every other sharing
	// group's, once per pair of servers (mux.Transport.ShareHeartbeats)
	shareBeats bool
	// cacheLogs: raft reads the group's recent entries from memory
	// (logCacheEntries)
	cacheLogs bool
	// adopt, when set, is given the group's snapshots before raft starts
	// (Replica.adoptSnapshot).
	adopt func(raft.SnapshotStore) error
}

// startGroup opens a group's stores in dir and starts raft with fsm,
// bootstrapping peers when the group has no state yet, unless how.join
// (a member joining an existing group waits for its leader instead). With
// how.campaign, a new group's member starts its first election at once
// (campaignNow). With how.outerLock, the caller's lock keeps other
// processes out of dir (raftlog.Options.OuterLock).
func (n *Node) startGroup(name, dir string, fsm raft.FSM, peers []string, cfg *raft.Config, how groupStart) (*group, error) {
	g := &group{}
	var err error
	if g.layer, err = n.mux.Layer(name); err != nil {
		return nil, err
	}
	fail := func(err error) (*group, error) {
		g.close()
		return nil, err
	}
	if g.log, err = raftstore.Open(filepath.Join(dir, "raft"), raftstore.Options{Encryption: n.opts.Encryption, Log: raftlog.Options{OuterLock: how.outerLock}}); err != nil {
		return fail(fmt.Errorf("cluster: group %s: %w", name, err))
	}
	files, err := raft.NewFileSnapshotStore(filepath.Join(dir, "snapshots"), 2, io.Discard)
	if err != nil {
		return fail(fmt.Errorf("cluster: group %s: %w", name, err))
	}
	snaps, err := raftstore.WrapSnapshots(files, filepath.Join(dir, "snapshots"), raftstore.SnapshotOptions{Encryption: n.opts.Encryption})
	if err != nil {
		return fail(fmt.Errorf("cluster: group %s: %w", name, err))
	}
	if g.log.PlainWithKey() || snaps.PlainWithKey() {
		n.log.Warn("encryption key configured, but this raft group was written in the clear before and stays in the clear",
			"group", name, "log_plain", g.log.PlainWithKey(), "snapshots_plain", snaps.PlainWithKey())
	}
	// mux's transport rather than raft.NetworkTransport, for the size
	// of its buffers (see mux.Transport).
	g.trans = mux.NewTransport(g.layer, 10*time.Second)
	if how.shareBeats {
		g.trans.ShareHeartbeats(cfg.HeartbeatTimeout / 10)
	}
	g.logs = g.log
	if how.cacheLogs {
		if g.logs, err = raft.NewLogCache(logCacheEntries, g.log); err != nil {
			return fail(fmt.Errorf("cluster: group %s: %w", name, err))
		}
	}
	has, err := raft.HasExistingState(g.log, g.log, snaps)
	if err != nil {
		return fail(fmt.Errorf("cluster: group %s: %w", name, err))
	}
	if !has && !how.join {
		var conf raft.Configuration
		for _, p := range peers {
			conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p), Address: raft.ServerAddress(p)})
		}
		if err := raft.BootstrapCluster(cfg, g.log, g.log, snaps, g.trans, conf); err != nil {
			return fail(fmt.Errorf("cluster: group %s: bootstrap: %w", name, err))
		}
	}
	if how.adopt != nil {
		if err := how.adopt(snaps); err != nil {
			return fail(fmt.Errorf("cluster: group %s: %w", name, err))
		}
	}
	if how.campaign && !has && !how.join {
		if err := g.campaignNow(cfg, fsm, snaps, name); err != nil {
			return nil, err
		}
		return g, nil
	}
	if g.r, err = raft.NewRaft(cfg, fsm, g.logs, g.log, snaps, g.trans); err != nil {
		return fail(fmt.Errorf("cluster: group %s: %w", name, err))
	}
	return g, nil
}

// campaignNow starts a new group's raft so that this member stands for
// election at once. hashicorp/raft has no call for that, but lowering the
// heartbeat timeout of a follower (ReloadConfig) fires its heartbeat
// timer at once, and a member of a new group has never heard from a
// leader: raft starts with both timeouts 1 ms above cfg's and is then
// reloaded to cfg's own, so it runs with exactly cfg afterwards. The
// other members keep their timers: if this one cannot win (a member has
// not started the group yet and the other is down), the group elects as
// it would have without it. On error g is closed.
func (g *group) campaignNow(cfg *raft.Config, fsm raft.FSM, snaps raft.SnapshotStore, name string) error {
	first := *cfg
	first.HeartbeatTimeout += time.Millisecond
	first.ElectionTimeout += time.Millisecond
	var err error
	if g.r, err = raft.NewRaft(&first, fsm, g.logs, g.log, snaps, g.trans); err != nil {
		g.close()
		return fmt.Errorf("cluster: group %s: %w", name, err)
	}
	err = g.r.ReloadConfig(raft.ReloadableConfig{
		TrailingLogs: cfg.TrailingLogs, SnapshotInterval: cfg.SnapshotInterval, SnapshotThreshold: cfg.SnapshotThreshold,
		HeartbeatTimeout: cfg.HeartbeatTimeout, ElectionTimeout: cfg.ElectionTimeout,
	})
	if err != nil {
		g.close()
		return fmt.Errorf("cluster: group %s: campaign: %w", name, err)
	}
	return nil
}

// stopTimeout bounds each wait of a group's close: for raft to stop, then
// for the transport's goroutines serving peers.
const stopTimeout = 10 * time.Second

// errStillRunning is a group's close that gave up waiting for raft: what
// raft may still use (the log store, the FSM's store) must stay open.
var errStillRunning = errors.New("left open")

// close stops raft and closes the group's stores. raft's Shutdown waits
// for its replication and vote goroutines, which may be inside an RPC to a
// peer that will not answer (one being stopped too, or partitioned away):
// closing the layer first closes their connections, so they fail at once
// instead of at the transport's 10 s timeout, once per stuck RPC. The log
// store closes only after raft has stopped writing to it: after Shutdown,
// and after the transport's goroutines serving peers' connections have
// returned, since one may still be answering a heartbeat, which saves the
// term in the stable store (raft panics when that fails: "failed to save
// current term: raftlog: store closed" was a flaky crash of cmd/jetwal's
// tests).
func (g *group) close() error {
	var fut raft.Future
	if g.r != nil {
		fut = g.r.Shutdown()
	}
	if g.layer != nil {
		g.layer.Close()
	}
	if g.trans != nil {
		g.trans.Close()
	}
	var err error
	if fut != nil {
		// Bounded, so that a close cannot hang: raft's Shutdown waits for
		// its FSM goroutine, which a callback that never returns would
		// hold. The log store is then left open, as below.
		stopped := make(chan error, 1)
		go func() { stopped <- fut.Error() }()
		select {
		case err = <-stopped:
		case <-time.After(stopTimeout):
			return fmt.Errorf("cluster: raft still running %v after shutdown; its stores are %w", stopTimeout, errStillRunning)
		}
	}
	if g.layer != nil && !g.layer.WaitHandlers(stopTimeout) {
		// Closing the log under one of them could make raft panic: it is
		// left open (its files are released when the process exits).
		if err == nil {
			err = fmt.Errorf("cluster: raft still serving a peer %v after shutdown; its log store is left open", stopTimeout)
		}
		return err
	}
	if g.log != nil {
		if cerr := g.log.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// leaderName is the server name of the group's leader, "" when none.
func (n *Node) leaderName(r *raft.Raft) string {
	_, id := r.LeaderWithID()
	if id == "" {
		return ""
	}
	return n.NameOf(string(id))
}

// Close stops every replica and the meta group.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	reps := n.replicas
	n.replicas = map[string]*Replica{}
	m := n.meta
	n.mu.Unlock()
	close(n.progStop)
	n.progWG.Wait()
	if m != nil {
		m.stop()
	}
	var err error
	for _, r := range reps {
		if cerr := r.close(); err == nil {
			err = cerr
		}
	}
	if m != nil {
		if cerr := m.close(); err == nil {
			err = cerr
		}
	}
	n.closeAsks()
	n.mux.Close()
	return err
}
