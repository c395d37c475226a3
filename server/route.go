package server

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/server/sublist"
)

// Routes (Options.Cluster): core NATS between the servers of a cluster, in
// nats-server's route protocol (route_proto.go). Each pair of servers keeps
// one route connection, a full mesh that gossip completes
// (route_dial.go). Each server tells the others which subjects its clients
// subscribe to (RS+/RS-, route_interest.go) and forwards a client's message
// to the servers that want it, once each, choosing queue group members
// across the cluster (route_deliver.go); a message that came from a route
// never goes to another route, so there are no loops. Clients learn the
// other servers from connect_urls in INFO (route_info.go).
//
// A route connection is a client whose route field is set: it shares the
// read buffer, the outbound queue and writer, the stages and the keepalive
// with clients, and has its own parser and dispatch. Routes are not
// clients for monitoring, limits or Server.NumClients.
//
// Internal subscriptions (JetStream's) are local: their interest is not
// sent to other servers, and messages from routes reach TCP clients only,
// so each server's JetStream serves the messages published to that server.
//
// Locking: cluster.mu (route registry) and cluster.imu (local interest and
// the routes it is sent to) are never held together; either may be held
// while queueing bytes to a route (outbound locks are leaves).
// routeConn.mu guards a route's remote subscriptions and is taken before
// the remote sublist's lock.

// cluster is the route state of a server with Options.Cluster.
type cluster struct {
	srv     *Server
	opts    *ClusterOptions
	account []byte
	auth    *auth.Authenticator // nil = incoming routes need no credentials
	// raftAuthOK remembers credentials raft preambles passed with
	// (route_raft.go): SHA-256 of user and password → struct{}.
	raftAuthOK sync.Map
	quit       chan struct{}

	name    atomic.Pointer[string]
	dynamic atomic.Bool
	active  atomic.Int32 // registered routes

	clientInfo atomic.Pointer[string] // `,"cluster":…,"connect_urls":[…]` for client INFO
	wsInfo     atomic.Pointer[string] // `,"cluster":…` for WebSocket clients (the URLs are TCP ones)
	routeHost  string                 // the route listener as announced in route INFO
	routePort  int

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		ln       net.Listener
		closed   bool
		conns    map[*client]struct{}    // every route connection
		routes   map[string]*client      // registered, by remote server id
		dialers  map[string]*routeDialer // by host:port
		changed  chan struct{}           // closed and replaced when routes changes
		urls     map[string]int          // other servers' client URLs, reference counted
		ownURLs  []string
		lastInfo []string // the URL list clients were last told
	}

	imu struct {
		sync.Mutex
		// Guarded by the mutex above.
		interest map[interestKey]int32 // local client subscriptions per subject and queue
		bcast    []*client             // registered routes, told of every change
	}
}

// routeOutcome says how a route connection ended, for its dialer.
type routeOutcome uint8

const (
	outcomeFailed     routeOutcome = iota // handshake not completed
	outcomeRegistered                     // was the route to its server
	outcomeDuplicate                      // another connection to that server won
	outcomeSelf                           // it led back to this server
)

// routeConn is the route part of a client.
type routeConn struct {
	solicited bool
	dialer    *routeDialer  // nil when accepted
	secured   *tls.Conn     // the TLS under an accepted route whose handshake sniff did
	done      chan struct{} // closed when the connection is gone
	limits    limits

	// read goroutine
	gotConnect bool
	gotInfo    bool
	cmd        routeCmd

	registered atomic.Bool
	headers    atomic.Bool // the remote takes HMSG

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		closed      bool
		outcome     routeOutcome
		remoteID    string
		remoteName  string
		routeURL    string // nats-route://ip:port/ of the remote's route listener
		connectURLs []string
		info        routeInfoJSON // the remote's first INFO, for gossip
		subs        map[remoteKey]*remoteSub
	}
	lastAcc *Account // read goroutine: the account of the last RMSG (accountByWire)
}

// remoteSub is a subscription interest of another server: one per subject
// (and queue group) per route.
type remoteSub struct {
	route   *client
	acc     *Account
	subject string
	queue   string
	weight  atomic.Int32 // members of the queue group on that server
}

func newCluster(s *Server, o *ClusterOptions) (*cluster, error) {
	cl := &cluster{
		srv:     s,
		opts:    o,
		account: []byte(o.Account),
		quit:    make(chan struct{}),
	}
	for _, a := range s.accounts {
		a.remote = sublist.New[*remoteSub](sublist.Options{})
	}
	s.internal.remote = sublist.New[*remoteSub](sublist.Options{})
	s.gacc.wire = cl.account
	name := o.Name
	if name == "" {
		name = newClusterName()
		cl.dynamic.Store(true)
	}
	cl.name.Store(&name)
	if o.Username != "" {
		a, err := auth.New(auth.Options{Username: o.Username, Password: o.Password})
		if err != nil {
			return nil, fmt.Errorf("server: cluster authorization: %w", err)
		}
		cl.auth = a
	}
	cl.mu.conns = make(map[*client]struct{})
	cl.mu.routes = make(map[string]*client)
	cl.mu.dialers = make(map[string]*routeDialer)
	cl.mu.changed = make(chan struct{})
	cl.mu.urls = make(map[string]int)
	cl.imu.interest = make(map[interestKey]int32)
	return cl, nil
}

// newClusterName makes a dynamic cluster name, as nats-server does when
// none is configured.
func newClusterName() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var raw [22]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails on supported platforms
	for i, b := range raw {
		raw[i] = alphabet[int(b)%len(alphabet)]
	}
	return string(raw[:])
}

// clusterName returns the current cluster name.
func (cl *cluster) clusterName() string { return *cl.name.Load() }

// ClusterName returns the cluster name, or "" without routes.
func (s *Server) ClusterName() string {
	if s.cluster == nil {
		return ""
	}
	return s.cluster.clusterName()
}

// ClusterAddr returns the route listen address, or nil.
func (s *Server) ClusterAddr() net.Addr {
	cl := s.cluster
	if cl == nil {
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.mu.ln == nil {
		return nil
	}
	return cl.mu.ln.Addr()
}

// listen binds the route port (once). The client listener is up already
// (connect_urls need its port).
func (cl *cluster) listen() error {
	cl.mu.Lock()
	bound := cl.mu.ln != nil
	cl.mu.Unlock()
	if bound {
		return nil
	}
	addr := net.JoinHostPort(cl.opts.Host, strconv.Itoa(cl.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: cluster: listen on %s: %w", addr, err)
	}
	cl.routeHost = cl.opts.Host
	cl.routePort = ln.Addr().(*net.TCPAddr).Port
	own := cl.srv.clientConnectURLs()
	cl.mu.Lock()
	if cl.mu.closed {
		cl.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	cl.mu.ln = ln
	cl.mu.ownURLs = own
	cl.mu.Unlock()
	cl.refreshClientInfo()
	return nil
}

// start listens on the route port (unless listen did), then accepts routes
// and connects to the configured ones.
func (cl *cluster) start() error {
	if err := cl.listen(); err != nil {
		return err
	}
	cl.mu.Lock()
	ln := cl.mu.ln
	cl.mu.Unlock()
	cl.srv.logger.Info("Cluster name is " + cl.clusterName())
	if cl.dynamic.Load() {
		cl.srv.logger.Warn("Cluster name was dynamically generated, consider setting one")
	}
	cl.srv.logger.Info("Listening for route connections on " + net.JoinHostPort(cl.opts.Host, strconv.Itoa(cl.routePort)))
	cl.srv.wg.Add(1)
	go cl.acceptLoop(ln)
	for _, u := range cl.opts.Routes {
		cl.startDialer(u, true)
	}
	return nil
}

func (cl *cluster) acceptLoop(ln net.Listener) {
	defer cl.srv.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		conn, err := ln.Accept()
		if err != nil {
			if cl.stopped() || errors.Is(err, net.ErrClosed) {
				return
			}
			cl.srv.logger.Error("route accept error", "err", err)
			select {
			case <-time.After(backoff):
			case <-cl.quit:
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if cl.opts.Raft != nil {
			go cl.sniff(conn)
			continue
		}
		cl.createRoute(conn, nil)
	}
}

func (cl *cluster) stopped() bool {
	select {
	case <-cl.quit:
		return true
	default:
		return false
	}
}

// stop closes the listener and every route and stops the dialers. Called
// by Shutdown before it waits for the connection goroutines.
func (cl *cluster) stop() {
	cl.mu.Lock()
	if cl.mu.closed {
		cl.mu.Unlock()
		return
	}
	cl.mu.closed = true
	close(cl.quit)
	ln := cl.mu.ln
	conns := make([]*client, 0, len(cl.mu.conns))
	for c := range cl.mu.conns {
		conns = append(conns, c)
	}
	cl.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, c := range conns {
		c.close(closeServerShutdown, "")
	}
}

// createRoute starts a route on conn: accepted when d is nil, solicited by
// dialer d otherwise. It returns nil when the server is closing.
func (cl *cluster) createRoute(raw net.Conn, d *routeDialer) *client {
	conn := raw
	if tc := cl.opts.TLSConfig; tc != nil {
		if d == nil {
			conn = tls.Server(raw, tc)
		} else {
			conn = tls.Client(raw, cl.clientTLS(d.url.Hostname()))
		}
	}
	return cl.startRoute(conn, raw, d, nil)
}

// clientTLS is the TLS configuration of a connection this server opens to
// another server's route port (a route or a raft connection): it presents
// this server's certificate and verifies the remote's against RootCAs, or
// ClientCAs (the ca_file) when RootCAs is nil.
func (cl *cluster) clientTLS(host string) *tls.Config {
	cfg := cl.opts.TLSConfig.Clone()
	if cfg.RootCAs == nil {
		cfg.RootCAs = cfg.ClientCAs
	}
	cfg.ServerName = host
	return cfg
}

// startRoute is createRoute on conn, which is raw or TLS over raw. secured
// is the TLS connection under conn when its handshake is already done (an
// accepted connection sniff looked into), nil otherwise.
func (cl *cluster) startRoute(conn, raw net.Conn, d *routeDialer, secured *tls.Conn) *client {
	s := cl.srv
	c := newClient(s, conn, s.nextID.Add(1))
	c.authn, c.nonce = nil, ""
	r := &routeConn{solicited: d != nil, dialer: d, secured: secured, done: make(chan struct{})}
	r.limits = limits{
		maxControlLine: s.opts.MaxControlLine * routeControlLineFactor,
		maxPayload:     cl.opts.MaxPayload,
	}
	r.headers.Store(true)
	c.route = r
	cl.mu.Lock()
	if cl.mu.closed {
		cl.mu.Unlock()
		_ = raw.Close()
		close(r.done)
		return nil
	}
	cl.mu.conns[c] = struct{}{}
	s.wg.Add(2)
	cl.mu.Unlock()
	if s.opts.Debug {
		s.logger.Debug("route connection created", "rid", c.id, "addr", c.addr, "solicited", d != nil)
	}
	cl.startHandshakeTimer(c)
	go c.routeStart(raw)
	return c
}

// routeStart completes TLS when configured, sends CONNECT (solicited) and
// INFO, and serves the route. It runs as the route's read goroutine.
func (c *client) routeStart(raw net.Conn) {
	cl := c.srv.cluster
	if tc, ok := c.conn.(*tls.Conn); ok {
		_ = raw.SetDeadline(time.Now().Add(cl.opts.TLSTimeout))
		err := tc.Handshake()
		_ = raw.SetDeadline(time.Time{})
		if err != nil {
			if c.close(closeTLSHandshake, "") {
				c.srv.logger.Error("route TLS handshake error", "rid", c.id, "addr", c.addr, "err", err)
			}
			_ = raw.Close()
			c.srv.wg.Done() // the writer that never started
			c.srv.wg.Done()
			return
		}
		c.noteTLS(tc)
	} else if tc := c.route.secured; tc != nil {
		c.noteTLS(tc)
	}
	if c.route.solicited {
		c.queueProto(cl.connectLine(c.route.dialer))
	}
	c.queueProto(cl.infoLine())
	go c.writeLoop()
	c.kickWriter()
	c.readLoop()
}

// noteTLS records the route's TLS version and cipher for monitoring.
func (c *client) noteTLS(tc *tls.Conn) {
	st := tc.ConnectionState()
	c.tlsInfo.Store(&tlsInfo{version: tls.VersionName(st.Version), cipher: tls.CipherSuiteName(st.CipherSuite)})
}

// startHandshakeTimer closes a route that has not completed CONNECT and
// INFO within AuthTimeout.
func (cl *cluster) startHandshakeTimer(c *client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.authTimer = time.AfterFunc(cl.opts.AuthTimeout, func() {
		if !c.route.registered.Load() && !c.authed.Load() && c.close(closeAuthTimeout, textAuthTimeout) {
			cl.srv.logger.Warn("route handshake timeout", "rid", c.id, "addr", c.addr)
		}
	})
}

// processRouteInput parses and runs every complete route operation.
func (c *client) processRouteInput() {
	r := c.route
	if perr := c.in.parseRoute(r.limits, &r.cmd, c); perr != errNone {
		c.srv.logger.Warn("route protocol error", "rid", c.id, "addr", c.addr, "err", perr.text(), "near", snippet(c.in.unparsed()))
		c.closeFromReader(closeProtocolViolation, perr.text())
	}
}

func (c *client) handleRoute(cmd *routeCmd) bool {
	c.dispatchRoute(cmd)
	return !c.closed.Load()
}

func (c *client) dispatchRoute(cmd *routeCmd) {
	r := c.route
	if c.trace {
		c.traceRouteIn(cmd)
	}
	if !r.solicited && !r.gotConnect && cmd.op != rOpConnect {
		// An accepted route speaks CONNECT first.
		c.srv.logger.Warn("route sent "+cmd.op.String()+" before CONNECT", "rid", c.id, "addr", c.addr)
		c.closeFromReader(closeAuthViolation, textAuthViolation)
		return
	}
	switch cmd.op {
	case rOpConnect:
		c.processRouteConnect(cmd.arg)
	case rOpInfo:
		c.processRouteInfo(cmd.arg)
	case rOpPing:
		c.queueOwn("PONG\r\n")
	case rOpPong:
		c.pingsOut.Store(0)
	case rOpOK:
	case rOpErr:
		c.srv.logger.Warn("route error", "rid", c.id, "addr", c.addr, "err", string(cmd.arg))
		c.closeFromReader(closeProtocolViolation, "")
	default:
		if !r.registered.Load() {
			c.srv.logger.Warn("route sent "+cmd.op.String()+" before its INFO", "rid", c.id, "addr", c.addr)
			c.closeFromReader(closeProtocolViolation, textUnknownOp)
			return
		}
		switch cmd.op {
		case rOpSub:
			c.processRemoteSub(cmd)
		case rOpUnsub:
			c.processRemoteUnsub(cmd)
		case rOpMsg, rOpHMsg:
			c.processRoutedMsg(cmd)
		}
	}
}

// routeClosed unregisters a route as it closes: its remote interest goes,
// its client URLs leave the INFO clients get, and its dialer (if any)
// hears of it. Called once, from doClose.
func (s *Server) routeClosed(c *client) {
	cl, r := s.cluster, c.route
	r.mu.Lock()
	r.mu.closed = true
	id := r.mu.remoteID
	subs := r.mu.subs
	r.mu.subs = nil
	changed := make(map[*Account]bool)
	for _, rs := range subs {
		_ = rs.acc.remote.Remove(rs.subject, rs.queue, rs)
		changed[rs.acc] = true
	}
	urls := r.mu.connectURLs
	r.mu.Unlock()

	cl.mu.Lock()
	delete(cl.mu.conns, c)
	was := id != "" && cl.mu.routes[id] == c
	if was {
		delete(cl.mu.routes, id)
		cl.noteChangedLocked()
	}
	cl.mu.Unlock()
	cl.dropBroadcast(c)
	for a := range changed {
		a.interestChanged()
	}
	if was {
		cl.active.Add(-1)
		s.logger.Info("route connection closed", "rid", c.id, "remote", id)
		if !cl.opts.NoAdvertise {
			cl.removeURLs(urls)
		}
	}
	close(r.done)
}

// noteChangedLocked wakes everyone waiting for the registry to change.
// cl.mu held.
func (cl *cluster) noteChangedLocked() {
	close(cl.mu.changed)
	cl.mu.changed = make(chan struct{})
}

// outcome returns how the route ended (valid once done is closed).
func (r *routeConn) outcome() (routeOutcome, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.outcome, r.mu.remoteID
}

// routePingInterval is the keepalive interval of routes: the client one,
// at most 30s, as in nats-server.
func (s *Server) routePingInterval() time.Duration {
	return min(s.opts.PingInterval, maxRoutePingInterval)
}
