package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/server/auth"
)

// The route handshake. The soliciting server sends CONNECT then INFO; the
// accepting one sends INFO at once and requires CONNECT (with the cluster
// credentials) before anything else. Each side registers the route when
// the other's INFO arrives; later INFOs from the same route carry other
// servers (gossip, route_dial.go).

// routeConnectJSON is a route's CONNECT, as nats-server sends it.
type routeConnectJSON struct {
	Echo     bool   `json:"echo"`
	Verbose  bool   `json:"verbose"`
	Pedantic bool   `json:"pedantic"`
	User     string `json:"user,omitempty"`
	Pass     string `json:"pass,omitempty"`
	TLS      bool   `json:"tls_required"`
	Headers  bool   `json:"headers"`
	Name     string `json:"name"`
	Cluster  string `json:"cluster"`
	Dynamic  bool   `json:"cluster_dynamic,omitempty"`
	Lang     string `json:"lang,omitempty"`    // set by clients only: a client on the route port
	Gateway  string `json:"gateway,omitempty"` // set by gateways only
}

// routeInfoJSON is a route INFO, in nats-server's field names.
type routeInfoJSON struct {
	ID            string   `json:"server_id"`
	Name          string   `json:"server_name"`
	Version       string   `json:"version"`
	Proto         int      `json:"proto"`
	GoVersion     string   `json:"go,omitempty"`
	Host          string   `json:"host"`
	Port          int      `json:"port"`
	Headers       bool     `json:"headers"`
	AuthRequired  bool     `json:"auth_required,omitempty"`
	TLSRequired   bool     `json:"tls_required,omitempty"`
	TLSVerify     bool     `json:"tls_verify,omitempty"`
	MaxPayload    int64    `json:"max_payload"`
	IP            string   `json:"ip,omitempty"`
	Nonce         string   `json:"nonce,omitempty"`
	Cluster       string   `json:"cluster,omitempty"`
	Dynamic       bool     `json:"cluster_dynamic,omitempty"`
	ConnectURLs   []string `json:"connect_urls,omitempty"`
	LameDuckMode  bool     `json:"ldm,omitempty"`
	RoutePoolSize int      `json:"route_pool_size,omitempty"`
	RoutePoolIdx  int      `json:"route_pool_idx,omitempty"`
	RouteAccount  string   `json:"route_account,omitempty"`
	GossipMode    byte     `json:"gossip_mode,omitempty"`
}

// Texts of route errors (nats-server's words where it has them).
const (
	textRouteWrongPort   = "attempted to connect to route port"
	textRouteBadConnect  = "invalid route CONNECT"
	textRouteBadInfo     = "invalid route INFO"
	textRouteNoPool      = "jetwal supports neither pooled nor per-account routes"
	textRouteFromGateway = "rejecting connection from a gateway on the route port"
)

// infoLine renders this server's route INFO.
func (cl *cluster) infoLine() string {
	s := cl.srv
	info := routeInfoJSON{
		ID:           s.id,
		Name:         s.name,
		Version:      s.opts.Version,
		Proto:        1,
		GoVersion:    runtime.Version(),
		Host:         cl.routeHost,
		Port:         cl.routePort,
		Headers:      true,
		AuthRequired: cl.auth != nil,
		TLSRequired:  cl.opts.TLSConfig != nil,
		TLSVerify:    cl.opts.TLSConfig != nil,
		MaxPayload:   int64(s.opts.MaxPayload),
		Nonce:        newNonce(),
		Cluster:      cl.clusterName(),
		Dynamic:      cl.dynamic.Load(),
		LameDuckMode: cl.srv.lameDuck.Load(),
	}
	if !cl.opts.NoAdvertise {
		cl.mu.Lock()
		info.ConnectURLs = append([]string(nil), cl.mu.ownURLs...)
		cl.mu.Unlock()
	}
	b, _ := json.Marshal(info) // plain struct: cannot fail
	return "INFO " + string(b) + "\r\n"
}

// connectLine renders the CONNECT a soliciting route sends: the URL's
// credentials, or for a route learned by gossip the cluster's own.
func (cl *cluster) connectLine(d *routeDialer) string {
	ci := routeConnectJSON{
		Echo:    true,
		TLS:     cl.opts.TLSConfig != nil,
		Headers: true,
		Name:    cl.srv.id,
		Cluster: cl.clusterName(),
		Dynamic: cl.dynamic.Load(),
	}
	if u := d.url.User; u != nil {
		ci.User = u.Username()
		ci.Pass, _ = u.Password()
	} else if !d.explicit {
		ci.User, ci.Pass = cl.opts.Username, cl.opts.Password
	}
	b, _ := json.Marshal(ci) // plain struct: cannot fail
	return "CONNECT " + string(b) + "\r\n"
}

// processRouteConnect checks an accepted route's CONNECT.
func (c *client) processRouteConnect(arg []byte) {
	cl, r := c.srv.cluster, c.route
	if r.solicited {
		c.closeFromReader(closeProtocolViolation, textRouteBadConnect)
		return
	}
	if r.gotConnect {
		return
	}
	var ci routeConnectJSON
	if err := json.Unmarshal(arg, &ci); err != nil {
		c.srv.logger.Warn("bad route CONNECT", "rid", c.id, "addr", c.addr, "err", err)
		c.closeFromReader(closeProtocolViolation, textRouteBadConnect)
		return
	}
	switch {
	case ci.Lang != "":
		c.srv.logger.Warn("a client connected to the route port", "rid", c.id, "addr", c.addr)
		c.closeFromReader(closeProtocolViolation, textRouteWrongPort)
		return
	case ci.Gateway != "":
		c.closeFromReader(closeProtocolViolation, textRouteFromGateway)
		return
	}
	if cl.auth != nil {
		if _, err := cl.auth.Authenticate(auth.Credentials{User: ci.User, Password: ci.Pass}); err != nil {
			c.srv.logger.Warn("route authorization failed", "rid", c.id, "addr", c.addr, "err", err)
			c.closeFromReader(closeAuthViolation, textAuthViolation)
			return
		}
	}
	if !cl.acceptClusterName(ci.Cluster, ci.Dynamic) {
		c.rejectClusterName(ci.Cluster)
		return
	}
	r.gotConnect = true
	c.authed.Store(true)
	r.headers.Store(ci.Headers)
	c.meta.Store(&clientMeta{name: ci.Name, user: ci.User})
}

// acceptClusterName reports whether a remote with cluster name name (dynamic
// or not) belongs to this cluster. A dynamic name of ours gives way to a
// configured one, or to a greater dynamic one, as in nats-server; the other
// routes then reconnect under the new name.
func (cl *cluster) acceptClusterName(name string, dynamic bool) bool {
	ours := cl.clusterName()
	if name == "" || name == ours {
		return true
	}
	if name == "_" || !cl.dynamic.Load() || (dynamic && strings.Compare(ours, name) >= 0) {
		return false
	}
	cl.name.Store(&name)
	cl.dynamic.Store(dynamic)
	cl.srv.logger.Info("Cluster name updated to " + name)
	cl.refreshClientInfo()
	return true
}

func (c *client) rejectClusterName(name string) {
	text := fmt.Sprintf("Rejecting connection, cluster name %q does not match %q", name, c.srv.cluster.clusterName())
	c.srv.logger.Warn(text, "rid", c.id, "addr", c.addr)
	c.closeFromReader(closeProtocolViolation, text)
}

// processRouteInfo handles a route INFO: the first registers the route,
// later ones with another server id are gossip.
func (c *client) processRouteInfo(arg []byte) {
	cl, r := c.srv.cluster, c.route
	var info routeInfoJSON
	if err := json.Unmarshal(arg, &info); err != nil || info.ID == "" {
		c.srv.logger.Warn("bad route INFO", "rid", c.id, "addr", c.addr, "err", err)
		c.closeFromReader(closeProtocolViolation, textRouteBadInfo)
		return
	}
	if r.gotInfo {
		r.mu.Lock()
		id := r.mu.remoteID
		r.mu.Unlock()
		if info.ID != id {
			cl.gossiped(&info)
		} else if info.LameDuckMode && !cl.opts.NoAdvertise {
			r.mu.Lock()
			urls := r.mu.connectURLs
			r.mu.connectURLs = nil
			r.mu.Unlock()
			cl.removeURLs(urls)
		}
		return
	}
	r.gotInfo = true
	if info.ID == c.srv.id {
		r.mu.Lock()
		r.mu.outcome, r.mu.remoteID = outcomeSelf, info.ID
		r.mu.Unlock()
		c.srv.logger.Debug("route to self, ignoring", "rid", c.id, "addr", c.addr)
		c.closeFromReader(closeClientClosed, "")
		return
	}
	if info.RouteAccount != "" || info.RoutePoolIdx != 0 {
		c.srv.logger.Debug("refusing a pooled or per-account route", "rid", c.id, "addr", c.addr, "account", info.RouteAccount)
		c.closeFromReader(closeProtocolViolation, textRouteNoPool)
		return
	}
	if !cl.acceptClusterName(info.Cluster, info.Dynamic) {
		c.rejectClusterName(info.Cluster)
		return
	}
	routeURL := info.IP
	if routeURL == "" {
		host := c.ip
		if r.solicited {
			host = r.dialer.url.Hostname()
		}
		routeURL = "nats-route://" + net.JoinHostPort(host, strconv.Itoa(info.Port)) + "/"
	}
	info.IP, info.Nonce = routeURL, ""
	r.headers.Store(r.headers.Load() && info.Headers)
	r.mu.Lock()
	r.mu.remoteID, r.mu.remoteName = info.ID, info.Name
	r.mu.routeURL = routeURL
	r.mu.info = info
	if !cl.opts.NoAdvertise {
		r.mu.connectURLs = info.ConnectURLs
	}
	r.mu.Unlock()
	if m := c.meta.Load(); m == nil || m.name == "" {
		c.meta.Store(&clientMeta{name: info.ID, version: info.Version})
	}
	if !cl.register(c) {
		c.closeFromReader(closeClientClosed, "")
		return
	}
	c.authed.Store(true)
	c.stopAuthTimer()
	c.firstPing()
}

// gossipLine renders the INFO that tells other routes about route c's
// server, so that they connect to it.
func gossipLine(info routeInfoJSON) string {
	info.Nonce = ""
	b, _ := json.Marshal(info) // plain struct: cannot fail
	return "INFO " + string(b) + "\r\n"
}

// routeURLFromInfo returns where a gossiped server takes routes.
func routeURLFromInfo(info *routeInfoJSON) (*url.URL, error) {
	if info.IP != "" {
		u, err := url.Parse(info.IP)
		if err != nil {
			return nil, err
		}
		return u, checkRouteURL(u)
	}
	if info.Host == "" || info.Port <= 0 {
		return nil, fmt.Errorf("server: cluster: gossip for %s has no address", info.ID)
	}
	return &url.URL{Scheme: "nats-route", Host: net.JoinHostPort(info.Host, strconv.Itoa(info.Port))}, nil
}
