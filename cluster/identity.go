package cluster

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
)

// RouteIdentity returns this server's raft id and the meta group's peers:
// the route listen addresses (host:port, host names resolved) of the
// configured routes, and this server's own among them. listen is the
// bound route listener. A server listening on every address (0.0.0.0) is
// the route that names one of this machine's addresses with its port, so
// every server, itself included, must be listed, as nats-server
// configurations list them.
func RouteIdentity(listen net.Addr, routes []*url.URL) (self string, peers []string, err error) {
	addr, ok := listen.(*net.TCPAddr)
	if !ok {
		return "", nil, fmt.Errorf("clustered JetStream: the route port is not bound")
	}
	for _, u := range routes {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			return "", nil, fmt.Errorf("route %s: %w", u.Redacted(), err)
		}
		if ip := net.ParseIP(host); ip == nil {
			ips, err := net.LookupIP(host)
			if err != nil || len(ips) == 0 {
				return "", nil, fmt.Errorf("route %s: cannot resolve %s", u.Redacted(), host)
			}
			host = ips[0].String()
		}
		peers = append(peers, net.JoinHostPort(host, port))
	}
	self = addr.String()
	if addr.IP.IsUnspecified() {
		if self = ownRoute(peers, addr.Port); self == "" {
			return "", nil, fmt.Errorf("clustered JetStream listening on %s needs this server's own address among the --routes (as nats-server configurations list every server), or --cluster on that address", addr)
		}
	}
	return self, peers, nil
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

// Handoff gives the raft connections the route listener accepted and
// authenticated (server.ClusterOptions.Raft) to a Node once there is one;
// until then they are closed, and raft retries. The route listener starts
// before the node exists (the node's raft id is the bound route address).
type Handoff struct{ node atomic.Pointer[Node] }

// Set makes n take the connections from now on.
func (h *Handoff) Set(n *Node) { h.node.Store(n) }

// Serve is server.ClusterOptions.Raft.
func (h *Handoff) Serve(c net.Conn, group string) {
	if n := h.node.Load(); n != nil {
		n.Handoff(c, group)
		return
	}
	c.Close()
}
