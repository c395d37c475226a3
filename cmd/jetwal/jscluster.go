package main

// This file wires clustered JetStream: the cluster package (raft groups on
// the route port) under the JetStream layer.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/jetwal/jetwal/cluster"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// raftHandoff routes raft connections, which the route listener has
// authenticated, to the node once it exists (before that they are closed;
// raft retries).
type raftHandoff struct{ node atomic.Pointer[cluster.Node] }

func (h *raftHandoff) handle(c net.Conn, group string) {
	if n := h.node.Load(); n != nil {
		n.Handoff(c, group)
		return
	}
	c.Close()
}

// prepareCluster makes the route listener hand raft connections over.
func prepareCluster(co *server.ClusterOptions) *raftHandoff {
	h := &raftHandoff{}
	co.Raft = h.handle
	return h
}

// startClusterNode creates this server's cluster node once the route port
// is bound: its raft id is the route address other servers name in their
// --routes, so the listen address must be that address.
func startClusterNode(srv *server.Server, co *server.ClusterOptions, storeRoot string, h *raftHandoff, log *slog.Logger) (*cluster.Node, error) {
	addr, ok := srv.ClusterAddr().(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("clustered JetStream: the route port is not bound")
	}
	var peers []string
	for _, u := range co.Routes {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, fmt.Errorf("route %s: %w", u, err)
		}
		if ip := net.ParseIP(host); ip == nil {
			ips, err := net.LookupIP(host)
			if err != nil || len(ips) == 0 {
				return nil, fmt.Errorf("route %s: cannot resolve %s", u, host)
			}
			host = ips[0].String()
		}
		peers = append(peers, net.JoinHostPort(host, port))
	}
	self := addr.String()
	if addr.IP.IsUnspecified() {
		// Listening on every address: this server is the route that names
		// one of this machine's addresses with its port.
		if self = ownRoute(peers, addr.Port); self == "" {
			return nil, fmt.Errorf("clustered JetStream listening on %s needs this server's own address among the --routes (as nats-server configurations list every server), or --cluster on that address", addr)
		}
	}
	n, err := cluster.New(cluster.Options{
		Dir:    filepath.Join(storeRoot, "jetstream", "_cluster"),
		Self:   self,
		Peers:  peers,
		Name:   srv.Name(),
		Logger: log,
		Dial:   srv.DialRaft,
	})
	if err != nil {
		return nil, err
	}
	h.node.Store(n)
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

// ownRoute returns the route (host:port) that names one of this machine's
// addresses and port, "" when none does.
func ownRoute(routes []string, port int) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	local := map[string]bool{}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			local[ipn.IP.String()] = true
		}
	}
	for _, r := range routes {
		host, p, err := net.SplitHostPort(r)
		if err == nil && p == strconv.Itoa(port) && local[net.ParseIP(host).String()] {
			return r
		}
	}
	return ""
}
