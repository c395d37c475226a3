package serve

// Clustered JetStream: the cluster package (raft groups on the route port)
// under the JetStream layer.

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/jetwal/jetwal/cluster"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// startClusterNode creates this server's cluster node once the route port
// is bound: its raft id is the route address other servers name in their
// routes, so the listen address must be that address.
func startClusterNode(srv *server.Server, co *server.ClusterOptions, storeRoot string, key crypt.Config, h *cluster.Handoff, log *slog.Logger) (*cluster.Node, error) {
	self, peers, err := cluster.RouteIdentity(srv.ClusterAddr(), co.Routes)
	if err != nil {
		return nil, err
	}
	n, err := cluster.New(cluster.Options{
		Dir:    filepath.Join(storeRoot, "jetstream", "_cluster"),
		Self:   self,
		Peers:  peers,
		Name:   srv.Name(),
		Logger: log,
		Dial:   srv.DialRaft,
		// The raft logs and snapshots carry the streams' messages and the
		// meta group's assignments: sealed with the same configured key.
		Encryption: key,
	})
	if err != nil {
		return nil, err
	}
	h.Set(n)
	return n, nil
}

// jsCluster adapts a cluster.Node to jetstream.Cluster.
type jsCluster struct {
	*cluster.Node
	srv *server.Server
}

func (c jsCluster) Name() string { return c.srv.ClusterName() }

func (c jsCluster) OpenStream(name string, peers []string, campaign bool, opts wal.Options, onLeader func(bool)) (jetstream.Replica, error) {
	r, err := c.Node.OpenStream(name, peers, campaign, opts, onLeader)
	if err != nil {
		return nil, err
	}
	return jsReplica{r}, nil
}

type jsReplica struct{ *cluster.Replica }

// Followers reports the followers in nats-server's peer form (peer is a
// short digest of the server name, as nats-server shows it).
func (r jsReplica) Followers() []*api.PeerInfo {
	var out []*api.PeerInfo
	for _, p := range r.Replica.Followers() {
		sum := sha256.Sum256([]byte(p.Name))
		out = append(out, &api.PeerInfo{Name: p.Name, Current: p.Current, Offline: p.Offline, Active: p.Active, Lag: p.Lag, Peer: hex.EncodeToString(sum[:4])})
	}
	return out
}

// raftGroups is the monitor's view of the node's raft groups
// (monitor.RaftGroups): the meta group in the system account, each
// stream's group in $G, the account clustered JetStream serves (where
// nats-server files them too).
type raftGroups struct {
	node   *cluster.Node
	system string
}

func (r raftGroups) RaftGroups() []monitor.RaftGroup {
	var out []monitor.RaftGroup
	for _, g := range r.node.Groups() {
		info := monitor.RaftzGroup{
			ID: g.ID, State: strings.ToUpper(g.State), Size: len(g.Peers), QuorumNeeded: len(g.Peers)/2 + 1,
			Committed: g.Commit, Applied: g.Applied, Leader: g.Leader, LeaderName: g.LeaderName,
			Term: g.Term, PTerm: g.LastTerm, PIndex: g.LastIndex, SystemAcc: g.Stream == "",
			Stream: g.Stream, Peers: map[string]monitor.RaftzGroupPeer{},
		}
		if info.State == "SHUTDOWN" {
			info.State = "CLOSED" // nats-server's word
		}
		if g.FirstIndex > 0 && g.LastIndex >= g.FirstIndex {
			info.WAL = monitor.RaftzWAL{Messages: g.LastIndex - g.FirstIndex + 1, FirstSeq: g.FirstIndex, LastSeq: g.LastIndex}
		}
		if g.SnapshotIndex > 0 {
			info.Snapshot = &monitor.RaftzSnapshot{Index: g.SnapshotIndex, Term: g.SnapshotTerm}
		}
		if g.LastContact > 0 {
			info.LastContact = g.LastContact.String()
		}
		for _, p := range g.Peers {
			if p.ID == g.ID {
				continue // nats-server lists the other members
			}
			peer := monitor.RaftzGroupPeer{Name: p.Name, Known: true}
			if p.Reported {
				peer.AppliedIndex, peer.LastSeen = p.Applied, p.Seen.String()
			}
			info.Peers[p.ID] = peer
		}
		acc := r.system
		if g.Stream != "" {
			acc = server.GlobalAccount
		}
		out = append(out, monitor.RaftGroup{Account: acc, Name: g.Name, Info: info})
	}
	return out
}
