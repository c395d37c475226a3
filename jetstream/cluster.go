package jetstream

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// Clustered JetStream. With Config.Cluster set, every server of the
// cluster runs JetStream and they share one set of streams:
//
//   - The meta group (Cluster.Put/Delete) holds the assignments: for each
//     stream its config, creation time and peers (the servers holding it),
//     under "streams/<name>"; for each durable consumer of a replicated
//     stream its config, under "consumers/<stream>/<name>". Every server
//     applies every assignment (applyMeta*): a server named in a stream's
//     peers creates it (R1: an ordinary local stream; R>1: its member of
//     the stream's raft group, Cluster.OpenStream).
//   - A replicated stream is served by its group's leader: only there does
//     a stream object exist (activate), subscribed to the stream's
//     subjects, with its consumers, writing through raft. Followers only
//     apply the log.
//   - JetStream's internal subscriptions reach the whole cluster, so every
//     server sees every API request; exactly one answers (answers): the
//     meta leader for account-wide requests and stream creation, update
//     and deletion; the server serving the stream for requests about it;
//     the meta leader for a stream that does not exist.

// Cluster is the consensus layer JetStream runs on (package cluster, wired
// by package serve).
type Cluster interface {
	// Start starts the meta group (or joins this account's JetStream to
	// it); put and del receive its committed changes in order (replays
	// after a restart included).
	Start(put func(key string, val []byte), del func(key string)) error
	IsMetaLeader() bool
	MetaLeader() string
	Put(key string, val []byte) error
	// PutIf commits key=val only while key still holds old; it fails
	// otherwise (cluster_convert.go's switch).
	PutIf(key string, old, val []byte) error
	Delete(key string) error
	Get(key string) ([]byte, bool)
	Keys(prefix string) []string
	Self() string
	Peers() []string
	Connected(peer string) bool
	NameOf(peer string) string
	// Tags returns a server's tags (server_tags) as it announced them.
	Tags(peer string) []string
	Name() string // the cluster's name
	// StepDownMeta hands the meta leadership (led here) to another
	// server: the one named preferred, "" = any connected one.
	StepDownMeta(preferred string) error
	// RemoveServer takes a server (by name, or raft id when id is given)
	// out of the meta group (led here); removed is "" when no member
	// matches.
	RemoveServer(name, id string) (removed string, err error)
	// FindServer returns the member named by raft id (id, when given) or
	// server name, "" when none matches.
	FindServer(name, id string) string
	// SyncMeta waits until this server's copy of the meta map holds
	// everything committed before the call.
	SyncMeta() error
	// StreamDirs lists the streams this server holds replica data of;
	// RemoveStreamData deletes one's, refusing while it is open.
	StreamDirs() ([]string, error)
	RemoveStreamData(name string) error
	// OpenStream opens this server's member of a replicated stream's
	// group; join: the server was added to an existing group, and waits
	// for its leader to send it the stream; campaign (the member the
	// assignment prefers): a new group's member stands for election at
	// once.
	OpenStream(name string, peers []string, join, campaign bool, opts wal.Options, onLeader func(bool)) (Replica, error)
	// Answer serves requests on subject from the other servers (fn's
	// non-nil answer goes back); the returned function stops serving.
	// Gather asks every server serving subject and hands fn each answer
	// until fn reports done or wait has passed (cluster_state.go). Both
	// travel where no client can reach.
	Answer(subject string, fn func(subject string, data []byte) []byte) (func(), error)
	Gather(subject string, data []byte, wait time.Duration, fn func(answer []byte) (done bool)) error
}

// Replica is this server's member of a replicated stream's group.
type Replica interface {
	Store() store.StreamStore
	IsLeader() bool
	Leader() string
	Followers() []*api.PeerInfo
	StepDown() error
	// StepDownTo hands the leadership to the member named preferred (a
	// server name); "" is StepDown.
	StepDownTo(preferred string) error
	// LeaderPeer is the leader's peer id (as in Cluster.Peers), "" when
	// there is none.
	LeaderPeer() string
	// Serving reports whether the group's current leader serves the
	// stream (it may be another server).
	Serving() bool
	// Checkpoint commits key=val to the meta map while this server leads
	// the stream: it fails once another server has taken the leadership
	// over, even before this one notices (the new leader's fence).
	Checkpoint(key string, val []byte) error
	UpdateLimits(store.Limits) error
	// SetPeers records the group's wanted members: the leader adds the
	// new ones once they have caught up and removes the others.
	SetPeers(peers []string)
	// Leave takes this server out of the group (want are the members
	// that stay) and deletes its replica, waiting at most wait for the
	// group to stop counting it.
	Leave(want []string, wait time.Duration) error
	// Stay ends a Leave under way with the replica kept (the stream is
	// this server's again); false once its data is being removed.
	Stay() bool
	// SetFollowerReads says whether followers answer reads (direct gets)
	// of the stream: the leader then makes its commits known to them as
	// soon as its writes stop. Current reports whether this member may
	// answer them from its own copy now (cluster_direct.go).
	SetFollowerReads(on bool)
	Current() bool
	// Applying reports whether this member has received writes it has
	// not applied yet; AwaitApplied waits (at most max) until it has.
	Applying() bool
	AwaitApplied(max time.Duration)
	Close() error
	Remove() error
}

// streamAssignment is a stream's entry in the meta group.
type streamAssignment struct {
	Config  api.StreamConfig `json:"config"`
	Created time.Time        `json:"created"`
	Peers   []string         `json:"peers"`
	// Initial are the peers that bootstrapped the stream's group and
	// still hold it; a peer added later joins the group instead
	// (cluster_members.go). Empty: every peer is initial (assignments
	// written before peers could change).
	Initial []string `json:"initial,omitempty"`
	// Preferred is the peer that campaigns first when the group is new:
	// the meta leader that placed the stream, when it is a peer, so that
	// it can answer the create once it serves the stream. "" in
	// assignments written before it existed.
	Preferred string `json:"preferred,omitempty"`
	// Group marks a stream of one replica that is a raft group of one
	// (it had more replicas once, and can have more again), not a local
	// stream; a stream of several replicas is always a group.
	Group bool `json:"group,omitempty"`
	// Convert marks a stream created with one replica (a local stream)
	// that is being made a raft group (cluster_convert.go); the
	// assignment stays the local stream's until the switch.
	Convert *streamConvert `json:"convert,omitempty"`
}

// grouped reports whether the stream is a raft group (hosted by its
// servers' replicas) rather than a local stream of one server.
func (a streamAssignment) grouped() bool { return len(a.Peers) > 1 || a.Group }

// consumerAssignment is a durable consumer of a replicated stream.
type consumerAssignment struct {
	Config  api.ConsumerConfig `json:"config"`
	Created time.Time          `json:"created"`
}

const (
	streamKeyPrefix   = "streams/"
	consumerKeyPrefix = "consumers/"
)

// hosted is a replicated stream this server holds a member of.
type hosted struct {
	mu      sync.Mutex
	opening atomic.Bool // its open is in flight, holding mu (cluster_open.go)
	asg     streamAssignment
	rep     Replica
	active  *stream       // while this server leads the group
	sync    *consumerSync // its consumers' checkpoints, while leading
	gone    bool
}

// clustering is JetStream's clustered state.
type clustering struct {
	c      Cluster
	mu     sync.Mutex
	hosted map[string]*hosted
	// leaving are the replicas leaving their groups (leaveStream), until
	// their data is removed or the stream comes back (applyStream).
	leaving map[string]*hosted
	// converting are the conversions of local streams into groups
	// running on this server (cluster_convert.go).
	converting map[string]*conversion
	// applyMu serializes applyStream: the meta group applies assignments
	// in order, and a finished leave re-applies its stream's.
	applyMu    sync.Mutex
	opens      replicaOpens    // replicas being opened (cluster_open.go)
	asgs       assignmentCache // decoded assignments (cluster_assignments.go)
	stopStates func()          // serveStates' subscription
	stopReads  func()          // serveReads' subscription
	stopWrites func()          // serveWrites' subscription
	direct     directState
	// watchConsumerStates runs until cstatesStop closes, then closes
	// cstatesDone (cluster_consumer.go).
	cstatesStop, cstatesDone chan struct{}
}

func (js *JetStream) clustered() bool { return js.cl != nil }

// startCluster starts the meta group once JetStream serves its API (the
// Cluster given to each account's JetStream keeps the accounts apart).
func (js *JetStream) startCluster() error {
	if err := js.cl.c.Start(js.applyMetaPut, js.applyMetaDelete); err != nil {
		return err
	}
	if err := js.serveStates(); err != nil {
		return err
	}
	if err := js.serveReads(); err != nil {
		return err
	}
	if err := js.serveWrites(); err != nil {
		return err
	}
	js.startDirect()
	js.cl.cstatesStop, js.cl.cstatesDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(js.cl.cstatesDone)
		js.watchConsumerStates(js.cl.cstatesStop)
	}()
	go js.sweepStaleReplicas() // cluster_stale.go
	return nil
}

func (js *JetStream) assignment(name string) (streamAssignment, bool) {
	var a streamAssignment
	b, ok := js.cl.c.Get(streamKeyPrefix + name)
	if !ok || json.Unmarshal(b, &a) != nil {
		return a, false
	}
	return a, true
}

// applyMetaPut applies a committed assignment on this server.
func (js *JetStream) applyMetaPut(key string, val []byte) {
	switch {
	case strings.HasPrefix(key, streamKeyPrefix):
		var a streamAssignment
		if err := json.Unmarshal(val, &a); err != nil {
			js.log.Error("cluster: bad stream assignment", "key", key, "error", err)
			return
		}
		js.applyStream(a)
	case strings.HasPrefix(key, consumerKeyPrefix):
		stream, _, _ := strings.Cut(strings.TrimPrefix(key, consumerKeyPrefix), "/")
		// A replica still opening has nothing to restore yet: once it
		// leads, activate restores every consumer the meta map then
		// holds, this one included. Waiting for its open here would
		// make the opens of a restart's replay one at a time again.
		if h := js.hostedStream(stream); h != nil && !h.opening.Load() {
			h.mu.Lock()
			s := h.active
			h.mu.Unlock()
			if s != nil {
				js.restoreConsumers(s)
			}
		}
	}
}

// applyMetaDelete applies a committed removal on this server.
func (js *JetStream) applyMetaDelete(key string) {
	name, ok := strings.CutPrefix(key, streamKeyPrefix)
	if !ok {
		return // a consumer's: the leader deleted it before proposing
	}
	js.cl.mu.Lock()
	h := js.cl.hosted[name]
	delete(js.cl.hosted, name)
	js.cl.mu.Unlock()
	if h == nil {
		if js.lookup(name) != nil {
			if aerr := js.deleteStream(name); aerr != nil {
				js.log.Error("cluster: deleting stream", "stream", name, "error", aerr.Description)
			}
		}
		js.dropConverted(name) // a local stream being made a group
		return
	}
	h.mu.Lock() // waits for its open (cluster_open.go)
	h.gone = true
	rep := h.rep
	h.mu.Unlock()
	js.deactivate(h)
	if rep == nil {
		return // its open failed: nothing was opened
	}
	if err := rep.Remove(); err != nil {
		js.log.Error("cluster: removing stream replica", "stream", name, "error", err)
	}
	js.adviseStream(name, api.ActionDelete)
	js.log.Info("stream deleted", "stream", name)
}

func (js *JetStream) hostedStream(name string) *hosted {
	js.cl.mu.Lock()
	defer js.cl.mu.Unlock()
	return js.cl.hosted[name]
}

// hostedStreams returns the replicated streams this server holds a member
// of, at the time of the call.
func (js *JetStream) hostedStreams() []*hosted {
	js.cl.mu.Lock()
	defer js.cl.mu.Unlock()
	hs := make([]*hosted, 0, len(js.cl.hosted))
	for _, h := range js.cl.hosted {
		hs = append(hs, h)
	}
	return hs
}

// applyStream creates or updates what this server holds of a stream.
func (js *JetStream) applyStream(a streamAssignment) {
	js.cl.applyMu.Lock()
	defer js.cl.applyMu.Unlock()
	js.applyStreamLocked(a)
}

func (js *JetStream) applyStreamLocked(a streamAssignment) {
	cfg := a.Config
	if !slices.Contains(a.Peers, js.cl.c.Self()) {
		js.leaveStream(a)
		return
	}
	if a.Convert != nil {
		js.applyConvert(a) // cluster_convert.go
		return
	}
	if !a.grouped() {
		if s := js.lookup(cfg.Name); s != nil {
			if old := s.config(); !validate.SameStream(&old, &cfg) {
				if _, aerr := js.updateStream(cfg); aerr != nil {
					js.log.Error("cluster: updating stream", "stream", cfg.Name, "error", aerr.Description)
				}
			}
			return
		}
		if js.convertingHere(cfg.Name) {
			js.createAfterConversion(cfg.Name) // cluster_convert.go
			return
		}
		if _, _, aerr := js.createStream(cfg); aerr != nil {
			js.log.Error("cluster: creating stream", "stream", cfg.Name, "error", aerr.Description)
		}
		return
	}
	if h := js.hostedStream(cfg.Name); h != nil {
		h.mu.Lock() // waits for its open (cluster_open.go)
		rep := h.rep
		if rep == nil {
			// The open failed: h is no longer hosted; open anew.
			h.mu.Unlock()
			js.applyStreamLocked(a)
			return
		}
		h.asg = a
		s := h.active
		h.mu.Unlock()
		rep.SetPeers(a.Peers)
		if err := rep.UpdateLimits(storeLimits(&cfg)); err != nil {
			js.log.Error("cluster: updating stream limits", "stream", cfg.Name, "error", err)
		}
		if s != nil {
			if _, aerr := js.updateStream(cfg); aerr != nil {
				js.log.Error("cluster: updating stream", "stream", cfg.Name, "error", aerr.Description)
			}
		}
		return
	}
	if js.stayHosted(a) {
		return
	}
	// A stream created with one replica and converted into this group
	// leaves its local copy (cluster_convert.go, step 6).
	if s := js.lookup(cfg.Name); s != nil && s.rep == nil {
		if aerr := js.deleteStream(cfg.Name); aerr != nil {
			js.log.Error("cluster: deleting the local stream a group replaces", "stream", cfg.Name, "error", aerr.Description)
		}
	}
	js.dropConverted(cfg.Name)
	js.openHosted(&hosted{asg: a}) // cluster_open.go
}

// replicaOptions are the store options of this server's replica of a
// replicated stream.
func (js *JetStream) replicaOptions(cfg *api.StreamConfig) wal.Options {
	return wal.Options{
		FS:         js.cfg.FS,
		Encryption: js.cfg.Encryption,
		Limits:     storeLimits(cfg),
		Compress:   cfg.Compression == api.S2Compression,
		Metrics:    &js.walMetrics,
		OuterLock:  true, // the store lock (storelock.go) keeps other processes out
	}
}

// activate makes this server serve a replicated stream it now leads.
func (js *JetStream) activate(h *hosted) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone || h.active != nil || h.rep == nil {
		return
	}
	cfg := h.asg.Config
	s := newStream(js, cfg, h.asg.Created, "", h.rep.Store())
	s.rep = h.rep
	if err := s.recover(time.Now()); err != nil {
		js.log.Error("cluster: stream leader could not recover", "stream", cfg.Name, "error", err)
		return
	}
	js.mu.Lock()
	if js.closed || js.streams[cfg.Name] != nil {
		js.mu.Unlock()
		return
	}
	js.streams[cfg.Name] = s
	js.mu.Unlock()
	if err := js.subscribeStream(s, nil); err != nil {
		js.log.Error("cluster: subscribing stream", "stream", cfg.Name, "error", err)
	}
	h.active = s
	s.startFeeds() // its mirror and sources run where it is served
	js.restoreConsumers(s)
	h.sync = js.startConsumerSync(s)
	go js.syncDirect() // its direct gets now, not at the next tick
	js.log.Info("stream leader", "stream", cfg.Name, "last_seq", s.store.State().LastSeq)
}

// deactivate stops serving a stream whose leadership this server lost.
func (js *JetStream) deactivate(h *hosted) {
	h.mu.Lock()
	s, cs := h.active, h.sync
	h.active, h.sync = nil, nil
	h.mu.Unlock()
	go js.syncDirect() // stop answering its direct gets now
	if cs != nil {
		cs.close()
	}
	if s == nil {
		return
	}
	js.mu.Lock()
	if js.streams[s.name] == s {
		delete(js.streams, s.name)
	}
	js.mu.Unlock()
	if err := s.close(); err != nil {
		js.log.Warn("cluster: closing stream after losing its leadership", "stream", s.name, "error", err)
	}
}

// restoreConsumers creates the durable consumers the meta group assigns to
// a replicated stream that this server leads and that it lacks.
func (js *JetStream) restoreConsumers(s *stream) {
	prefix := consumerKeyPrefix + s.name + "/"
	scfg := s.config()
	for _, k := range js.cl.c.Keys(prefix) {
		b, ok := js.cl.c.Get(k)
		if !ok {
			continue
		}
		var ca consumerAssignment
		if json.Unmarshal(b, &ca) != nil {
			continue
		}
		if s.cons.get(strings.TrimPrefix(k, prefix)) != nil || js.restoreConsumer(s, ca) {
			continue
		}
		if _, _, aerr := s.createConsumer(ca.Config, "", &scfg); aerr != nil {
			js.log.Error("cluster: restoring consumer", "stream", s.name, "consumer", ca.Config.Durable, "error", aerr.Description)
		}
	}
}

// closeCluster closes every replica (the meta group closes with the
// Cluster, which package serve owns).
func (js *JetStream) closeCluster() {
	js.stopDirect()
	if js.cl.cstatesStop != nil {
		close(js.cl.cstatesStop)
		<-js.cl.cstatesDone
		js.cl.cstatesStop = nil
	}
	js.stopConversions()
	js.cl.mu.Lock()
	hs, stops := js.cl.hosted, []func(){js.cl.stopStates, js.cl.stopReads, js.cl.stopWrites}
	js.cl.hosted, js.cl.stopStates, js.cl.stopReads, js.cl.stopWrites = map[string]*hosted{}, nil, nil, nil
	js.cl.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	js.cl.opens.wait() // cluster_open.go
	for _, h := range hs {
		js.deactivate(h)
		if rep := h.replica(); rep != nil {
			_ = rep.Close()
		}
	}
}

// clusterInfo is the cluster block of a stream's info.
func (js *JetStream) clusterInfo(s *stream) *api.ClusterInfo {
	if !js.clustered() {
		return &api.ClusterInfo{Leader: js.srv.ServerName()}
	}
	ci := &api.ClusterInfo{Name: js.cl.c.Name(), Leader: js.srv.ServerName()}
	if s.rep != nil {
		ci.Replicas = s.rep.Followers()
	}
	return ci
}

// metaStats reports the meta group: its leader and the other servers.
func (js *JetStream) metaStats() *MetaStats {
	c := js.cl.c
	ms := &MetaStats{Cluster: c.Name(), Leader: c.MetaLeader(), Size: len(c.Peers())}
	for _, p := range c.Peers() {
		name := c.NameOf(p)
		if name != "" && name == ms.Leader {
			continue
		}
		if name == "" {
			name = p
		}
		up := c.Connected(p)
		ms.Replicas = append(ms.Replicas, &api.PeerInfo{Name: name, Current: up, Offline: !up})
	}
	return ms
}
