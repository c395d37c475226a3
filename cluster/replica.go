package cluster

import (
	"bytes"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/raftstore/mux"
	"github.com/jetwal/jetwal/raftstore/stream"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// applyTimeout bounds one write to a replicated stream.
const applyTimeout = 10 * time.Second

// A stream group's raft timing (see OpenStream): its CommitTimeout, and
// its heartbeat and election timeouts as multiples of the node's.
const (
	streamCommitTimeout = time.Second
	streamTimeoutScale  = 2
)

// ErrNotLeader: this server does not lead the stream.
var ErrNotLeader = errors.New("cluster: not the stream's leader")

// Replica is this server's member of a replicated stream's group.
type Replica struct {
	n     *Node
	name  string
	dir   string
	peers []string
	fsm   *stream.FSM
	g     *group
	obs   *raft.Observer

	onLeader func(bool)
	batch    *batcher // every write, in order: appends batched (batcher.go)
	done     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	token    []byte                      // this leadership's fence token (readyToLead); nil when not leading
	failed   map[raft.ServerID]time.Time // followers whose heartbeats fail: the last failure
	progress map[string]progress         // what each member last reported applying
	closed   bool
	// sendCommits runs (started by SetFollowerReads, followerreads.go)
	sendingCommits bool
	notice         *noticer // sendCommit's, made on first use
	// Membership changes (membership.go): a change is asked for, and
	// manageMembers runs (only while there is something to do).
	memberKicked, managing bool
	// A Leave under way (membership.go): leaving once it began, stayed
	// when Stay kept the replica (stay closed), removing once its data
	// is being removed.
	leaving, stayed, removing bool
	stay                      chan struct{}
	catchSub                  *server.Subscription // the group's catch-up requests (catchup.go)

	sentMsgs, sentBytes atomic.Uint64 // catch-up answers sent to members catching up
	followerReads       atomic.Bool   // followers answer reads (followerreads.go)
	commitKick          chan struct{} // wakes sendCommits (followerreads.go)
	drainedAt           atomic.Uint64 // the last raft index when the writes last drained
	drainTime, writeGap atomic.Int64  // when they drained (unix ns; 0: a write came since), how long before the next write
	settled             atomic.Uint64 // reads wait for no entry up to it (AwaitApplied)
}

// groupName is the raft group of a stream: its name when the preamble can
// carry it, else a digest.
func groupName(stream string) string {
	g := "S." + stream
	if mux.ValidGroup(g) && len(g) <= 150 {
		return g
	}
	sum := sha256.Sum256([]byte(stream))
	return "S#" + hex.EncodeToString(sum[:16])
}

// OpenStream opens (creating or recovering) this server's replica of the
// replicated stream name, whose group is peers. A member added to an
// existing group joins it (join): it bootstraps nothing and waits for the
// leader to send it the stream (membership.go). opts configures its wal
// store (limits, compression); its OuterLock (the caller's lock keeps
// other processes out of the node's directory) also spares the group's
// raft log its lock file. onLeader hears every change of this
// server's leadership of the group; when it is told true, everything
// committed before has been applied, to the replica and to this server's
// copy of the meta map (see readyToLead).
//
// campaign asks this member to stand for election as soon as a new group
// starts, rather than after a heartbeat timeout (500 ms to 1 s): the
// server that placed the stream passes true, the others false, so that a
// new stream has its leader within milliseconds. It only changes when
// this member first campaigns; the election is an ordinary one. A member
// that joins never campaigns first.
func (n *Node) OpenStream(name string, peers []string, join, campaign bool, opts wal.Options, onLeader func(bool)) (*Replica, error) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil, ErrClosed
	}
	if r := n.replicas[name]; r != nil {
		n.mu.Unlock()
		return r, nil
	}
	n.opening[name]++ // RemoveStreamData keeps off (stale.go)
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		if n.opening[name]--; n.opening[name] <= 0 {
			delete(n.opening, name)
		}
		n.mu.Unlock()
	}()
	dir := filepath.Join(n.opts.Dir, "streams", hex.EncodeToString([]byte(name)))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", name, err)
	}
	r := &Replica{n: n, name: name, dir: dir, peers: slices.Clone(peers), onLeader: onLeader,
		commitKick: make(chan struct{}, 1), done: make(chan struct{}),
		failed: make(map[raft.ServerID]time.Time), progress: make(map[string]progress)}
	// The replica's snapshots are the stream's state: a follower that
	// installs one fetches only what it lacks from the leader (catchup.go).
	fsm, err := stream.OpenWith(filepath.Join(dir, "fsm"), opts, stream.Options{Fetch: catchupFetcher{r}})
	if err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", name, err)
	}
	r.fsm = fsm
	cfg := n.raftConfig()
	cfg.NoSnapshotRestoreOnStart = true // the replica's store survives restarts
	cfg.BatchApplyCh = true
	cfg.MaxAppendEntries = 512
	cfg.SnapshotThreshold = 65536
	cfg.TrailingLogs = 65536
	if n.opts.StreamSnapshotThreshold > 0 {
		cfg.SnapshotThreshold = n.opts.StreamSnapshotThreshold
	}
	if n.opts.StreamTrailingLogs > 0 {
		cfg.TrailingLogs = n.opts.StreamTrailingLogs
	}
	// What an idle group costs: its leader sends each follower an empty
	// append every CommitTimeout to 2×CommitTimeout (so that it learns
	// the commit index) and a heartbeat every HeartbeatTimeout/10 to
	// /5. With the meta group's 5 ms and 500 ms, 100 idle R3 streams
	// made ~30,000 RPCs a second per leader (make bench-cluster-scale:
	// 15-20% of a core per server, idle; nats-server 4%); with 250 ms
	// and twice the node's timeouts, 11%; with four times, 10% (the
	// leader 10%, followers 5%; half of it heartbeats, half these
	// appends). A follower applying the last writes up to 2 s later
	// changes nothing a client sees: the leader answers, a new leader
	// applies everything committed before it serves (readyToLead), and
	// followers that answer direct gets are sent the commit index as
	// soon as the leader's writes stop (followerreads.go), which costs
	// an idle group nothing. Twice the node's timeouts (1 s by
	// default) rather than four times: with four, a lost stream leader
	// took 3.2-4.6 s to replace (make bench-cluster, nats-server
	// 4.1-6.2 s), with two 1.7-2.1 s (nats-server 5.2-6.4 s), for about
	// one point of idle CPU. The heartbeats themselves now go once per
	// pair of servers for all the groups (shareBeats; ARCHITECTURE.md).
	cfg.CommitTimeout = streamCommitTimeout
	cfg.HeartbeatTimeout = streamTimeoutScale * n.opts.HeartbeatTimeout
	cfg.ElectionTimeout = streamTimeoutScale * n.opts.ElectionTimeout
	cfg.LeaderLeaseTimeout = cfg.HeartbeatTimeout / 2
	if r.g, err = n.startGroup(groupName(name), dir, fsm, peers, cfg, groupStart{join: join, campaign: campaign, outerLock: opts.OuterLock, shareBeats: true, cacheLogs: true, adopt: r.adoptSnapshot}); err != nil {
		fsm.Close()
		return nil, err
	}
	r.observeHeartbeats()
	if err := r.startCatchup(); err != nil {
		r.unobserveHeartbeats()
		r.g.close()
		fsm.Close()
		return nil, err
	}
	r.writeGap.Store(int64(commitDelay))
	r.batch = newBatcher(name, func(b []byte) raft.ApplyFuture {
		r.noteProposal()
		return r.g.r.Apply(b, applyTimeout)
	})
	r.batch.onDrain(r.flushCommit)
	r.wg.Add(1)
	go r.watchLeader()
	// This member's applied index at once: a restarted member is seen
	// back without waiting for its server's next report.
	r.reportProgress()
	n.mu.Lock()
	if n.closed {
		// Close ran while the group started (a stream assigned as the
		// node stops): it did not see this replica, so it closes here.
		n.mu.Unlock()
		r.close()
		return nil, ErrClosed
	}
	n.replicas[name] = r
	n.mu.Unlock()
	return r, nil
}

func (r *Replica) watchLeader() {
	defer r.wg.Done()
	for {
		select {
		case <-r.done:
			return
		case lead := <-r.g.r.LeaderCh():
			if lead && !r.readyToLead() {
				continue
			}
			if !lead {
				r.mu.Lock()
				r.token = nil
				r.mu.Unlock()
			}
			r.onLeader(lead)
			if lead {
				r.kickMembers()
				r.markServing()
			}
		}
	}
}

// servingPrefix is the meta map's prefix of serving marks:
// "_serving/<stream>" holds the fence token of the leader that, having
// fenced, now serves the stream (onLeader returned).
const servingPrefix = "_serving/"

func servingKey(stream string) string { return servingPrefix + stream }

// markServing commits this leadership's token as the stream's serving
// mark, fenced: it applies only while the fence is still this token.
// The server that answers a stream's creation waits for it when the new
// stream's leader is another server (Serving), so that the client's next
// request finds the stream served.
func (r *Replica) markServing() {
	r.mu.Lock()
	token := r.token
	r.mu.Unlock()
	if token == nil {
		return
	}
	_, err := r.n.propose(encodeFenced(fenceKey(r.name), token, encodeMeta(servingKey(r.name), token, false)))
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFenced) {
		r.n.log.Warn("stream group: marking the stream served", "stream", r.name, "error", err)
	}
}

// Serving reports whether the stream's current leader (the holder of its
// fence, in this server's copy of the meta map) has marked it served.
func (r *Replica) Serving() bool {
	fence, ok := r.n.Get(fenceKey(r.name))
	if !ok {
		return false
	}
	mark, ok := r.n.Get(servingKey(r.name))
	return ok && bytes.Equal(fence, mark)
}

// fencePrefix is the meta map's prefix of stream fences: "_fence/<stream>"
// holds the token of the server that last became the stream's leader.
const fencePrefix = "_fence/"

func fenceKey(stream string) string { return fencePrefix + stream }

// readyToLead prepares a newly elected leader. It applies everything
// committed under earlier leaders, then commits a new token to the
// stream's fence in the meta map and waits until this server's copy of the
// map holds it. The JetStream layer keeps there what a leader takes over
// (its consumers' checkpoints), and this makes two promises:
//   - the new leader reads the last checkpoint of the leader before it:
//     without the wait, a server that had not yet applied it would restore
//     an older one and redeliver messages whose acks were confirmed;
//   - the leader before it cannot overwrite that checkpoint afterwards,
//     while it has not yet noticed that it lost the leadership: its
//     Checkpoints carry its own token, and the meta group applies a
//     checkpoint only while its token is the fence's (ErrFenced).
//
// The fence is retried while there is no meta leader. It reports false
// when this server no longer leads, or the replica is closing.
func (r *Replica) readyToLead() bool {
	if r.fsm.Pending() {
		// Its store is still catching up from a snapshot, from the
		// leader this server now is: another member leads instead.
		r.n.log.Warn("stream group: elected while catching up; handing the leadership over", "stream", r.name)
		go func() { _ = r.g.r.LeadershipTransfer().Error() }()
		return false
	}
	// The barrier waits in raft's apply queue, which a shutdown leaves
	// unanswered: close must not wait for it (awaitFuture).
	if err := awaitFuture(r.g.r.Barrier(applyTimeout), r.done, nil); err != nil {
		r.n.log.Warn("stream group: barrier after election", "stream", r.name, "error", err)
		return false
	}
	token := make([]byte, 16)
	_, _ = crand.Read(token)
	for {
		if r.g.r.State() != raft.Leader {
			return false
		}
		err := r.n.commitApplied(encodeMeta(fenceKey(r.name), token, false), r.done)
		if err == nil {
			r.mu.Lock()
			r.token = token
			r.mu.Unlock()
			return r.g.r.State() == raft.Leader
		}
		if errors.Is(err, ErrClosed) {
			return false
		}
		r.n.log.Warn("stream group: fencing the meta map after election; retrying", "stream", r.name, "error", err)
	}
}

// Checkpoint commits key=val to the meta map as this server's leadership
// of the stream: it fails with ErrFenced once another server has become
// the stream's leader (even while this one has not yet noticed), and with
// ErrNotLeader when this server has not led it since it last started.
func (r *Replica) Checkpoint(key string, val []byte) error {
	r.mu.Lock()
	token := r.token
	r.mu.Unlock()
	if token == nil {
		return ErrNotLeader
	}
	_, err := r.n.propose(encodeFenced(fenceKey(r.name), token, encodeMeta(key, val, false)))
	return err
}

// noteHeartbeat records what raft observed of the leader's heartbeats to
// a follower (Node.watchHeartbeats).
func (r *Replica) noteHeartbeat(o raft.Observation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch d := o.Data.(type) {
	case raft.FailedHeartbeatObservation:
		r.failed[d.PeerID] = time.Now()
	case raft.ResumedHeartbeatObservation:
		delete(r.failed, d.PeerID)
	}
}

// IsLeader reports whether this server leads the stream's group.
func (r *Replica) IsLeader() bool { return r.g.r.State() == raft.Leader }

// LeaderPeer returns the leader's raft id (its route address), "" when
// there is none. Unlike Leader it looks up no route: cheap enough to ask
// every replica of a server.
func (r *Replica) LeaderPeer() string {
	_, id := r.g.r.LeaderWithID()
	return string(id)
}

// Leader returns the leader's server name, "" when there is none.
func (r *Replica) Leader() string { return r.n.leaderName(r.g.r) }

// Peer is one member of a stream's group as its leader sees it.
type Peer struct {
	Name    string
	Current bool          // heartbeats reach it
	Offline bool          // no route to it
	Active  time.Duration // since it last reported its progress
	Lag     uint64        // raft entries the leader applied that it had not, at its last report
}

// Followers returns the group's members other than its leader.
func (r *Replica) Followers() []Peer {
	_, leader := r.g.r.LeaderWithID()
	voters := map[string]bool{}
	if f := r.g.r.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			voters[string(s.ID)] = s.Suffrage == raft.Voter
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Peer
	for _, p := range r.peers {
		if raft.ServerID(p) == leader {
			continue
		}
		rt, ok := r.n.route(p)
		// A follower is current unless its heartbeats failed and it has
		// not reported its progress since: raft's observations can miss
		// the heartbeats' resumption (the observer drops what it cannot
		// take at once, and a new replication to the follower starts its
		// count afresh), which left a restarted follower marked failed
		// for good; its reports say it is back.
		failedAt, failing := r.failed[raft.ServerID(p)]
		if pr, seen := r.progress[p]; failing && seen && pr.at.After(failedAt) {
			failing = false
		}
		// A member being added is not current until it has caught up
		// and votes (membership.go).
		peer := Peer{Name: rt.RemoteName, Current: ok && voters[p] && !failing, Offline: !ok}
		if !ok {
			peer.Name = p // no route: the address is all there is
		}
		if pr, seen := r.progress[p]; seen {
			peer.Active = max(time.Since(pr.at), 0)
			peer.Lag = r.fsm.Applied() - min(r.fsm.Applied(), pr.applied)
		} else if ok {
			peer.Active = max(time.Since(rt.LastActivity), 0)
		}
		out = append(out, peer)
	}
	return out
}

// StepDown hands the leadership to another member, chosen at random
// (Node.transfer).
func (r *Replica) StepDown() error { return r.StepDownTo("") }

// UpdateLimits applies a new configuration's limits to this replica's
// store (each server applies a config update from the meta group).
func (r *Replica) UpdateLimits(l store.Limits) error { return r.fsm.Store().UpdateLimits(l) }

// Store returns the stream's store as the JetStream layer uses it on the
// leader: reads from this replica, writes through raft.
func (r *Replica) Store() store.StreamStore { return &view{r: r} }

func (r *Replica) close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.unobserveHeartbeats()
	if r.catchSub != nil {
		r.catchSub.Unsubscribe()
	}
	// The watchers stop first: one may be waiting for the meta group
	// (readyToLead), which gives up when done closes.
	close(r.done)
	r.fsm.Stop() // a catch-up in progress gives up: raft can stop
	err := r.g.close()
	// Raft is down: what was proposed has its answer; the rest fails.
	r.batch.close()
	r.wg.Wait()
	r.mu.Lock()
	notice := r.notice
	r.mu.Unlock()
	if notice != nil {
		notice.wait() // the transport is closed: each gives up at once
	}
	if errors.Is(err, errStillRunning) {
		return err // raft may still apply to the stream's store
	}
	if cerr := r.fsm.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close stops this replica, keeping its data.
func (r *Replica) Close() error {
	r.n.mu.Lock()
	if r.n.replicas[r.name] == r {
		delete(r.n.replicas, r.name)
	}
	r.n.mu.Unlock()
	return r.close()
}

// Remove stops this replica and deletes its data. The server that led it
// last also drops its fence from the meta map, in the background (Remove
// runs where the meta group applies the stream's deletion, which a commit
// cannot wait on), and only while the fence holds its token: a stream of
// the same name created since has a fence of its own.
func (r *Replica) Remove() error {
	r.mu.Lock()
	token := r.token
	r.mu.Unlock()
	if token != nil {
		fence := fenceKey(r.name)
		go func() {
			_, err := r.n.propose(encodeFenced(fence, token, encodeMeta(servingKey(r.name), nil, true)))
			if err == nil {
				_, err = r.n.propose(encodeFenced(fence, token, encodeMeta(fence, nil, true)))
			}
			if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFenced) {
				r.n.log.Warn("stream group: dropping the stream's fence", "stream", r.name, "error", err)
			}
		}()
	}
	err := r.Close()
	if rerr := os.RemoveAll(r.dir); err == nil {
		err = rerr
	}
	return err
}
