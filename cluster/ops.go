package cluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Leadership transfers and the groups' status (/raftz).

// ErrNotMetaLeader: this server does not lead the meta group.
var ErrNotMetaLeader = errors.New("cluster: not the meta leader")

// ErrPreferredIsLeader: the server asked to take the leadership over leads
// the group already.
var ErrPreferredIsLeader = errors.New("cluster: preferred server is already leader")

// ErrPreferredUnknown: the server asked to take the leadership over is not
// a member of the group (or its name is not known: no route to it).
var ErrPreferredUnknown = errors.New("cluster: preferred server not known")

// ErrNoReplacement: no other member of the group has a route to this
// server.
var ErrNoReplacement = errors.New("cluster: no replacement peer connected")

// StepDownMeta hands the meta group's leadership to another server: to the
// member named preferred (a server name) when it is given, else to one
// chosen at random among those with a route to this server. It fails with
// ErrNotMetaLeader on any other server than the leader.
func (n *Node) StepDownMeta(preferred string) error {
	m := n.metaGroup()
	if m == nil {
		return ErrClosed
	}
	if m.g.r.State() != raft.Leader {
		return ErrNotMetaLeader
	}
	if err := n.transfer(m.g.r, n.opts.Peers, preferred); err != nil {
		return fmt.Errorf("meta group: step down: %w", err)
	}
	return nil
}

// preferredPeer returns the raft id of the group member named name (a
// server name), checked as a step-down's target: ErrPreferredIsLeader when
// it is this server, ErrPreferredUnknown when no member has that name.
func (n *Node) preferredPeer(peers []string, name string) (string, error) {
	for _, p := range peers {
		if n.NameOf(p) != name {
			continue
		}
		if p == n.opts.Self {
			return "", fmt.Errorf("%w: %q", ErrPreferredIsLeader, name)
		}
		return p, nil
	}
	return "", fmt.Errorf("%w: %q", ErrPreferredUnknown, name)
}

// transfer moves the leadership of r (led here) to preferred (a server
// name), or, when preferred is "", to another member chosen at random.
// raft's own choice (LeadershipTransfer) is the first member with the
// highest next index, always the same one when every follower is current,
// so the last member of the configuration would never lead after a
// step-down: a random order spreads the leaderships instead. Members with
// a route come first; when a transfer fails (the member did not win the
// election in time) the next member is tried, so one slow or unreachable
// server does not make the step-down fail or always land on the same one.
func (n *Node) transfer(r *raft.Raft, peers []string, preferred string) error {
	if preferred != "" {
		target, err := n.preferredPeer(peers, preferred)
		if err != nil {
			return err
		}
		return r.LeadershipTransferToServer(raft.ServerID(target), raft.ServerAddress(target)).Error()
	}
	var connected, others []string
	for _, p := range peers {
		switch {
		case p == n.opts.Self:
		case n.Connected(p):
			connected = append(connected, p)
		default:
			others = append(others, p)
		}
	}
	rand.Shuffle(len(connected), func(i, j int) { connected[i], connected[j] = connected[j], connected[i] })
	rand.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	err := ErrNoReplacement
	for _, p := range append(connected, others...) {
		err = r.LeadershipTransferToServer(raft.ServerID(p), raft.ServerAddress(p)).Error()
		if err == nil || r.State() != raft.Leader {
			return nil // handed over, or lost to an election meanwhile
		}
		n.log.Warn("step down: leadership transfer failed; trying another member", "to", p, "error", err)
	}
	return err
}

// StepDownTo is StepDown to the member named preferred (a server name;
// "" = StepDown).
func (r *Replica) StepDownTo(preferred string) error {
	if !r.IsLeader() {
		return ErrNotLeader
	}
	r.mu.Lock()
	peers := slices.Clone(r.peers)
	r.mu.Unlock()
	if err := r.n.transfer(r.g.r, peers, preferred); err != nil {
		return fmt.Errorf("cluster: stream %s: step down: %w", r.name, err)
	}
	return nil
}

// GroupStatus is one raft group as this server knows it (Node.Groups):
// what hashicorp/raft reports (Stats, GetConfiguration) and, for a
// stream's followers, the progress they last reported to its leader.
type GroupStatus struct {
	Name   string // the group's name on the wire ("_meta", "S.<stream>")
	Stream string // the stream of a stream group; "" for the meta group
	ID     string // this server's raft id (its route address)
	State  string // raft's: Leader, Follower, Candidate, Shutdown
	Term   uint64
	// LastIndex and LastTerm are those of the last entry of the log;
	// Commit the commit index; Applied the last entry applied to the
	// group's state machine (the stream's store, the meta map).
	LastIndex, LastTerm, Commit, Applied uint64
	// FirstIndex is the first entry the log still holds (0 when empty:
	// everything is in the snapshot).
	FirstIndex uint64
	// SnapshotIndex and SnapshotTerm are those of the last snapshot.
	SnapshotIndex, SnapshotTerm uint64
	// Leader is the leader's raft id and LeaderName its server name, ""
	// when there is no leader.
	Leader, LeaderName string
	// LastContact is how long ago a follower last heard from the leader
	// (0 on the leader, and when never).
	LastContact time.Duration
	// Peers are the voters of the group's configuration, this server
	// included.
	Peers []GroupPeer
}

// GroupPeer is one member of a group.
type GroupPeer struct {
	ID   string // raft id (route address)
	Name string // server name (NameOf); "" when unknown
	// Reported is true when the member reported its progress to this
	// server (a stream group's leader hears its followers'); Applied is
	// the index it reported, Seen how long ago.
	Reported bool
	Applied  uint64
	Seen     time.Duration
}

// Groups returns the status of the meta group and of every stream group
// this server holds a member of.
func (n *Node) Groups() []GroupStatus {
	var out []GroupStatus
	if m := n.metaGroup(); m != nil {
		st := n.groupStatus("_meta", m.g)
		st.Applied = m.applied.Load()
		out = append(out, st)
	}
	n.mu.Lock()
	reps := make([]*Replica, 0, len(n.replicas))
	for _, r := range n.replicas {
		reps = append(reps, r)
	}
	n.mu.Unlock()
	slices.SortFunc(reps, func(a, b *Replica) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	for _, r := range reps {
		st := n.groupStatus(groupName(r.name), r.g)
		st.Stream = r.name
		st.Applied = r.fsm.Applied()
		r.mu.Lock()
		for i := range st.Peers {
			if pr, ok := r.progress[st.Peers[i].ID]; ok && st.Peers[i].ID != n.opts.Self {
				st.Peers[i].Reported, st.Peers[i].Applied, st.Peers[i].Seen = true, pr.applied, max(time.Since(pr.at), 0)
			}
		}
		r.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// groupStatus reads what raft reports of g.
func (n *Node) groupStatus(name string, g *group) GroupStatus {
	stats := g.r.Stats()
	num := func(k string) uint64 {
		v, _ := strconv.ParseUint(stats[k], 10, 64)
		return v
	}
	st := GroupStatus{Name: name, ID: n.opts.Self, State: g.r.State().String(),
		Term: num("term"), LastIndex: num("last_log_index"), LastTerm: num("last_log_term"),
		Commit: num("commit_index"), Applied: num("applied_index"),
		SnapshotIndex: num("last_snapshot_index"), SnapshotTerm: num("last_snapshot_term")}
	if first, err := g.log.FirstIndex(); err == nil {
		st.FirstIndex = first
	}
	_, leader := g.r.LeaderWithID()
	if leader != "" {
		st.Leader, st.LeaderName = string(leader), n.NameOf(string(leader))
	}
	if g.r.State() != raft.Leader {
		if t := g.r.LastContact(); !t.IsZero() {
			st.LastContact = max(time.Since(t), 0)
		}
	}
	if f := g.r.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.Suffrage != raft.Voter {
				continue
			}
			st.Peers = append(st.Peers, GroupPeer{ID: string(s.ID), Name: n.NameOf(string(s.ID))})
		}
	}
	return st
}
