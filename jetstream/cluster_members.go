package jetstream

import (
	"slices"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Changing the servers of a replicated stream: its replica count (a
// stream update), or one replica moved to another server
// (STREAM.PEER.REMOVE). The meta leader picks the servers (placeStream)
// and commits the new assignment; the stream's group then changes its
// members (package cluster: new replicas catch up before they count,
// removed ones leave and delete their data).
//
// A stream created with one replica is an ordinary local stream, not a
// raft group. A replicated stream that shrinks to one replica stays a raft
// group, of one (streamAssignment.Group, as nats-server's R1 streams are),
// so it can grow again through the same membership changes. nats-server
// grows an R1 stream without stopping publishes: its R1 stream already
// has a group of one, the new members join it and the R1 server,
// preferred as leader, sends them its stream snapshot. jetwal's R1 stream
// has no group, so growing it first converts it into one
// (cluster_convert.go, built): its server stops serving it, copies its
// messages (at their sequences and times) and durable consumers into a
// raft group of one it builds apart, and switches the assignment, by one
// compare-and-swap meta put, to that group with the other servers as
// joining members; from there it is the ordinary 1 -> N growth below.
// Every crash point leaves the local stream or the group complete (see
// there). The stream is not served during the copy (publishes hear "no
// responders" and are retried by clients); nats-server's way, with no
// such pause, would need the local stream to be a group from its
// creation. The reverse (a stream going down to one replica) keeps the
// group of one: nothing is converted back.
//
// A placement change (nats stream edit --tag) of a stream created with
// one replica still only changes its config: its data stays where it is
// (moving it is not built; after a conversion, the stream is a group and
// moves like one).

// leaveTimeout bounds how long a server no longer holding a stream waits
// for the group to stop counting it before deleting its replica.
const leaveTimeout = 30 * time.Second

// leaveStream runs on a server that holds a replica of a stream whose
// assignment no longer names it: it leaves the group in the background
// (it keeps serving while it leads, until it hands over).
func (js *JetStream) leaveStream(a streamAssignment) {
	name := a.Config.Name
	h := js.hostedStream(name)
	if h == nil {
		return
	}
	rep := h.replica() // after its open (cluster_open.go)
	js.cl.mu.Lock()
	if js.cl.hosted[name] == h {
		delete(js.cl.hosted, name)
	}
	if rep != nil {
		js.cl.leaving[name] = h
	}
	js.cl.mu.Unlock()
	if rep == nil {
		return
	}
	go func() {
		err := rep.Leave(a.Peers, leaveTimeout)
		js.cl.mu.Lock()
		stayed := js.cl.leaving[name] != h
		if !stayed {
			delete(js.cl.leaving, name)
		}
		js.cl.mu.Unlock()
		if stayed {
			return // assigned here again before its data went: applyStream kept it
		}
		if err != nil {
			js.log.Warn("cluster: leaving stream group", "stream", name, "error", err)
		}
		h.mu.Lock()
		h.gone = true
		h.mu.Unlock()
		js.deactivate(h)
		js.log.Info("stream replica removed from this server", "stream", name)
		// Assigned here again while its data was being removed: open it
		// anew now that it is gone.
		js.cl.applyMu.Lock()
		defer js.cl.applyMu.Unlock()
		if b, ok := js.assignment(name); ok && b.grouped() && slices.Contains(b.Peers, js.cl.c.Self()) && js.hostedStream(name) == nil {
			js.applyStreamLocked(b)
		}
	}()
}

// stayHosted takes back the replica of a stream assigned to this server
// again while it was leaving the group: its Leave ends with the data
// kept, the group gets a as its wanted members, and the leader adds it
// back (it catches up from what it holds). It reports false when there
// is nothing to take back; and true, with nothing opened, while the
// replica's data is being removed: the leave re-applies the assignment
// once it is gone, since opening the group now would find the old one.
func (js *JetStream) stayHosted(a streamAssignment) bool {
	name := a.Config.Name
	js.cl.mu.Lock()
	h := js.cl.leaving[name]
	js.cl.mu.Unlock()
	if h == nil {
		return false
	}
	if !h.rep.Stay() {
		return true
	}
	js.cl.mu.Lock()
	delete(js.cl.leaving, name)
	js.cl.hosted[name] = h
	js.cl.mu.Unlock()
	h.mu.Lock()
	h.asg = a
	h.mu.Unlock()
	h.rep.SetPeers(a.Peers)
	if err := h.rep.UpdateLimits(storeLimits(&a.Config)); err != nil {
		js.log.Error("cluster: updating stream limits", "stream", name, "error", err)
	}
	js.log.Info("stream replica kept: the stream is this server's again", "stream", name)
	return true
}

// rescale returns the assignment a with replicas peers: more are picked
// by placement, fewer drop the servers without a route first.
func (js *JetStream) rescale(a streamAssignment, cfg *api.StreamConfig, replicas int) (streamAssignment, *api.ApiError) {
	// A group keeps being one at one replica (a raft group of one, as in
	// nats-server), so it can grow again.
	a.Group = true
	keep := slices.Clone(a.Peers)
	if replicas < len(keep) {
		slices.SortStableFunc(keep, func(x, y string) int {
			cx, cy := js.cl.c.Connected(x), js.cl.c.Connected(y)
			switch {
			case cx && !cy:
				return -1
			case cy && !cx:
				return 1
			}
			return 0
		})
	}
	peers, aerr := js.placeStream(cfg, replicas, keep, nil)
	if aerr != nil {
		return a, aerr
	}
	return a.withPeers(peers), nil
}

// withPeers returns a held by peers: the initial members it keeps stay
// initial, the others join.
func (a streamAssignment) withPeers(peers []string) streamAssignment {
	if len(a.Initial) == 0 {
		a.Initial = a.Peers
	}
	a.Peers = peers
	// A copy: a's slices may be shared (assignments' cache).
	a.Initial = slices.DeleteFunc(slices.Clone(a.Initial), func(p string) bool { return !slices.Contains(peers, p) })
	return a
}

// movePlacement returns the assignment a of a replicated stream whose
// placement changed to cfg's: its servers that fit the new placement stay,
// the others give way to servers placement picks (10005 when too few
// qualify). The group adds the new servers as non-voters and promotes
// them once they hold the stream before it removes the old ones
// (cluster.Replica's reconcile), so the stream stays served and keeps its
// quorum throughout the move.
func (js *JetStream) movePlacement(a streamAssignment, cfg *api.StreamConfig) (streamAssignment, *api.ApiError) {
	keep := slices.DeleteFunc(slices.Clone(a.Peers), func(p string) bool { return !js.fitsPlacement(p, cfg) })
	if len(keep) == len(a.Peers) {
		return a, nil
	}
	peers, aerr := js.placeStream(cfg, max(cfg.Replicas, 1), keep, nil)
	if aerr != nil {
		return a, aerr
	}
	js.log.Info("JetStream cluster: moving stream to its new placement", "stream", cfg.Name, "from", a.Peers, "to", peers)
	return a.withPeers(peers), nil
}

// RemovePeer moves the replica of the stream name off the server peer
// (named or by id; apiserver.ClusterOps; answered by the meta leader, as
// in nats-server) to another server the placement allows, or fails with
// nats-server's 10075 when there is none.
func (js *JetStream) RemovePeer(name, peer string) *api.ApiError {
	if js.cl == nil {
		return api.NewError(api.ErrClusterRequired)
	}
	a, ok := js.assignment(name)
	if !ok {
		return api.NewError(api.ErrStreamNotFound)
	}
	var gone string
	for _, p := range a.Peers {
		if js.cl.c.NameOf(p) == peer || p == peer {
			gone = p
		}
	}
	if gone == "" {
		return api.NewError(api.ErrClusterPeerNotMember)
	}
	if !a.grouped() {
		// An R1 stream is a local stream: moving it is not built.
		return api.NewError(api.ErrPeerRemap)
	}
	rest := slices.DeleteFunc(slices.Clone(a.Peers), func(p string) bool { return p == gone })
	peers, aerr := js.placeStream(&a.Config, len(a.Peers), rest, []string{gone})
	if aerr != nil {
		js.log.Warn("cluster: peer removal refused: no replacement", "stream", a.Config.Name, "peer", peer, "reason", aerr.Description)
		return api.NewError(api.ErrPeerRemap)
	}
	a = a.withPeers(peers)
	if err := js.propose(streamKeyPrefix+a.Config.Name, a); err != nil {
		return api.RaftGeneral(err)
	}
	js.log.Info("stream replica moving", "stream", a.Config.Name, "from", peer,
		"peers", strings.Join(peers, ","))
	return nil
}
