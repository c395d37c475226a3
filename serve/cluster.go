package serve

// Clustered JetStream: the cluster package (raft groups on the route port)
// under the JetStream layer.

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"

	"github.com/jetwal/jetwal/cluster"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
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

func (c jsCluster) OpenStream(name string, peers []string, opts wal.Options, onLeader func(bool)) (jetstream.Replica, error) {
	r, err := c.Node.OpenStream(name, peers, opts, onLeader)
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
