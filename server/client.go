package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/server/sublist"
	"github.com/jetwal/jetwal/server/websocket"
	"github.com/jetwal/jetwal/subject"
)

// closeReason says why a connection ended (for logs).
type closeReason uint8

const (
	closeClientClosed closeReason = iota + 1
	closeReadError
	closeWriteError
	closeProtocolViolation
	closeSlowConsumerPending
	closeSlowConsumerWrite
	closeStale
	closeMaxConnections
	closeServerShutdown
	closeInternalError
	closeAuthViolation
	closeAuthTimeout
	closeTLSHandshake
)

func (r closeReason) String() string {
	switch r {
	case closeClientClosed:
		return "Client Closed"
	case closeReadError:
		return "Read Error"
	case closeInternalError:
		return "Internal Error"
	case closeWriteError:
		return "Write Error"
	case closeProtocolViolation:
		return "Protocol Violation"
	case closeSlowConsumerPending:
		return "Slow Consumer (Pending Bytes)"
	case closeSlowConsumerWrite:
		return "Slow Consumer (Write Deadline)"
	case closeStale:
		return "Stale Connection"
	case closeMaxConnections:
		return "Maximum Connections Exceeded"
	case closeServerShutdown:
		return "Server Shutdown"
	case closeAuthViolation:
		return "Authentication Failure"
	case closeAuthTimeout:
		return "Authentication Timeout"
	case closeTLSHandshake:
		return "TLS Handshake Failure"
	}
	return "Unknown"
}

// connectOpts is the JSON a client sends with CONNECT. Unknown fields (jwt
// and the like) are ignored. The secrets are cleared once checked.
type connectOpts struct {
	User         string `json:"user"`
	Pass         string `json:"pass"`
	Token        string `json:"auth_token"`
	Nkey         string `json:"nkey"`
	Sig          string `json:"sig"`
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	Name         string `json:"name"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	Protocol     int    `json:"protocol"`
	Echo         bool   `json:"echo"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
}

// defaultConnectOpts apply before CONNECT and to fields CONNECT leaves out,
// as in nats-server.
var defaultConnectOpts = connectOpts{Verbose: true, Pedantic: true, Echo: true}

// client is one TCP connection.
//
// Ownership: fields under "read goroutine" are touched only by the
// connection's read goroutine. headers, closed, pingsOut and lastIn are
// atomics read by other goroutines. subs is guarded by mu. The outbound
// queue has its own lock (see outbound).
type client struct {
	srv  *Server
	id   uint64
	conn net.Conn        // a *tls.Conn with TLS, or ws
	ws   *websocket.Conn // a WebSocket client's connection (ws.go); nil for TCP
	// readDone is closed when the read goroutine of a WebSocket client
	// ends (the writer lingers on the socket after that); nil for TCP.
	readDone chan struct{}
	ip       string
	addr     string // ip:port, for logs
	trace    bool

	authn Authenticator // nil = no authentication; fixed at accept
	nonce string        // sent in INFO when authn needs one
	user  string        // authenticated user name (read goroutine)
	// identityPerms are the permissions the user authenticated with (read
	// goroutine; for monitoring and USER.INFO).
	identityPerms *auth.Permissions

	authed atomic.Bool                 // CONNECT passed authentication
	acc    atomic.Pointer[Account]     // $G until authentication names another
	perms  atomic.Pointer[clientPerms] // nil = no restriction; set at CONNECT

	start   time.Time                  // accepted at
	meta    atomic.Pointer[clientMeta] // from CONNECT, for monitoring
	tlsInfo atomic.Pointer[tlsInfo]    // set after the TLS handshake
	stats   counters                   // for monitoring (stats.go)
	counts  pendingCounts              // read goroutine: not yet in stats

	headers  atomic.Bool  // the client accepts HMSG
	closed   atomic.Bool  // close has run
	pingsOut atomic.Int32 // server PINGs not yet answered
	pinged   atomic.Bool  // the first keepalive PING went out
	lastIn   atomic.Int64 // unix nanos of the last read

	// read goroutine
	in            inbuf
	cmd           command
	opts          connectOpts
	connected     bool        // CONNECT seen
	announced     atomic.Bool // the connect event was reported (conn_events.go)
	firstPongSent bool
	pending       []*client // writers fed directly, to wake after this chunk
	deferred      []Flusher // handlers' work deferred to the end of this chunk (defer.go)
	stages        []stage   // per-receiver staged output (stage.go)
	lastStage     int
	stalled       time.Duration
	memo          matchMemo
	scratch       []byte // no-responders header
	msg           Msg    // reused for internal handlers

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		subs      map[string]*subscription // by sid
		pingTimer *time.Timer
		authTimer *time.Timer
	}

	out outbound

	route     *routeConn  // set for a route connection (route.go)
	fwd       *forwarding // read goroutine: forwarding scratch in a cluster (route_deliver.go)
	asyncInfo atomic.Bool // takes INFO updates (protocol >= 1, past the first PING)
}

// matchMemo remembers the last subject this client published to, so a
// publisher hammering one subject skips the sublist entirely.
type matchMemo struct {
	acc  *Account
	subj []byte
	gen  uint64
	res  *result
}

func newClient(s *Server, conn net.Conn, id uint64) *client {
	c := &client{srv: s, id: id, conn: conn, trace: s.opts.Trace, opts: defaultConnectOpts}
	c.acc.Store(s.gacc)
	c.out.kick = make(chan struct{}, 1)
	c.mu.subs = make(map[string]*subscription)
	a := s.authenticator()
	if ws, ok := conn.(*websocket.Conn); ok {
		c.ws, c.readDone = ws, make(chan struct{})
		a = s.wsAuthenticator()
	}
	if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		c.ip = ta.IP.String()
	} else if conn.RemoteAddr() != nil {
		c.ip = conn.RemoteAddr().String()
	}
	if conn.RemoteAddr() != nil {
		c.addr = conn.RemoteAddr().String()
	}
	if a != nil {
		c.authn = a
		if a.NeedsNonce() {
			c.nonce = newNonce()
		}
	}
	c.start = time.Now()
	c.lastIn.Store(c.start.UnixNano())
	return c
}

func (c *client) limits() limits {
	return limits{maxControlLine: c.srv.opts.MaxControlLine, maxPayload: int64(c.srv.opts.MaxPayload)}
}

// readLoop reads and processes input until the connection ends. Runs in
// its own goroutine.
func (c *client) readLoop() {
	defer c.srv.wg.Done()
	if c.readDone != nil {
		defer close(c.readDone)
	}
	defer c.recoverPanic()
	lim := c.limits()
	for {
		space := c.in.space()
		n, err := c.conn.Read(space)
		if n > 0 {
			c.lastIn.Store(time.Now().UnixNano())
			c.in.commit(n, len(space))
			c.processInput(lim)
			c.flushPending()
		}
		if c.closed.Load() {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.close(closeClientClosed, "")
			} else {
				c.close(closeReadError, "")
			}
			return
		}
	}
}

// recoverPanic ends a connection whose goroutine panicked (in the server or
// in an in-process subscription handler that ran on it): the panic is a bug,
// logged with its stack, and costs this connection only, never the process.
func (c *client) recoverPanic() {
	p := recover()
	if p == nil {
		return
	}
	c.srv.logger.Error("connection goroutine panicked", "cid", c.id, "panic", p, "stack", string(debug.Stack()))
	c.runDeferred() // held work (a stream's batch) goes without this chunk's end
	c.close(closeInternalError, "")
}

// processInput parses and runs every complete operation in the read buffer.
func (c *client) processInput(lim limits) {
	c.stalled = 0
	if c.route != nil {
		c.processRouteInput()
	} else if perr := c.in.parse(lim, &c.cmd, c); perr != errNone {
		c.protocolError(perr)
	}
	c.flushCounts()
}

// handle runs one parsed operation; it reports whether to keep parsing.
func (c *client) handle(cmd *command) bool {
	c.dispatch(cmd)
	return !c.closed.Load()
}

// protocolError answers a parser error and closes the connection.
func (c *client) protocolError(perr protoErr) {
	if c.srv.opts.Debug || c.trace {
		c.srv.logger.Debug("protocol error", "cid", c.id, "err", perr.text(), "near", snippet(c.in.unparsed()))
	}
	c.closeFromReader(closeProtocolViolation, perr.text())
}

func snippet(b []byte) string {
	if len(b) > 32 {
		b = b[:32]
	}
	return strconv.Quote(string(b))
}

func (c *client) dispatch(cmd *command) {
	if c.trace {
		c.traceIn(cmd)
	}
	if c.authn != nil && !c.authed.Load() && cmd.op != opConnect {
		c.authViolation(cmd.op)
		return
	}
	switch cmd.op {
	case opPub, opHPub:
		c.processPub(cmd)
	case opSub:
		c.processSub(cmd)
	case opUnsub:
		c.processUnsub(cmd)
	case opPing:
		c.processPing()
	case opPong:
		c.pingsOut.Store(0)
	case opConnect:
		c.processConnect(cmd.arg)
	case opErr:
		c.srv.logger.Debug("client sent an error", "cid", c.id, "err", string(cmd.arg))
		c.closeFromReader(closeProtocolViolation, "")
	case opInfo, opOK:
		// Nothing to do.
	}
}

func (c *client) sendErrLine(text string) {
	c.queueOwn("-ERR '" + text + "'\r\n")
}

func (c *client) processConnect(arg []byte) {
	opts := defaultConnectOpts
	if err := json.Unmarshal(arg, &opts); err != nil {
		c.srv.logger.Debug("bad CONNECT", "cid", c.id, "err", err)
		c.closeFromReader(closeProtocolViolation, textUnknownOp)
		return
	}
	if c.authn != nil && !c.authed.Load() && !c.authenticate(&opts) {
		return
	}
	opts.Pass, opts.Token, opts.Sig = "", "", ""
	if opts.Protocol < 0 || opts.Protocol > 1 {
		c.closeFromReader(closeProtocolViolation, textBadProtocol)
		return
	}
	if opts.NoResponders && !opts.Headers {
		c.closeFromReader(closeProtocolViolation, textNoRespNoHeaders)
		return
	}
	first := !c.connected
	c.meta.Store(&clientMeta{name: opts.Name, lang: opts.Lang, version: opts.Version, user: c.user, perms: c.identityPerms})
	c.opts = opts
	c.connected = true
	c.headers.Store(opts.Headers)
	if first {
		if c.srv.opts.Debug {
			c.srv.logger.Debug("client connected", "cid", c.id, "ip", c.ip,
				"name", opts.Name, "lang", opts.Lang, "version", opts.Version)
		}
		if c.announced.CompareAndSwap(false, true) {
			c.srv.connEvent(c, true, 0)
		}
	}
	if opts.Verbose {
		c.queueOwn("+OK\r\n")
	}
}

func (c *client) processPing() {
	c.queueOwn("PONG\r\n")
	if c.connected && !c.firstPongSent {
		c.firstPongSent = true
		if c.opts.Protocol >= 1 {
			c.queueOwn(c.srv.infoLine(c, true))
			c.asyncInfo.Store(true)
		}
	}
}

func (c *client) processSub(cmd *command) {
	subj := string(cmd.subject)
	if !subject.ValidFilter(subj) {
		c.sendErrLine(textInvalidSubject)
		return
	}
	var deny *sublist.List[string]
	if p := c.perms.Load(); p != nil {
		ok, overlaps := p.sub.subscribeAllowed(subj)
		if !ok {
			c.srv.logger.Debug("subscription permission violation", "cid", c.id, "user", c.user, "subject", subj)
			c.sendErrLine(permSubViolation(cmd.subject))
			return
		}
		if overlaps {
			deny = p.sub.deny
		}
	}
	sub := &subscription{
		client:  c,
		subject: subj,
		queue:   string(cmd.queue),
		sid:     bytes.Clone(cmd.sid),
		deny:    deny,
	}
	sid := string(cmd.sid)
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return
	}
	_, dup := c.mu.subs[sid]
	if !dup {
		c.mu.subs[sid] = sub
	}
	c.mu.Unlock()
	if !dup {
		acc := c.acc.Load()
		if err := acc.insertSub(sub); err != nil {
			c.mu.Lock()
			delete(c.mu.subs, sid)
			c.mu.Unlock()
			c.sendErrLine(textInvalidSubject)
			return
		}
		if sub.closed.Load() {
			// close ran between our map insert and the sublist insert and
			// could not remove it from the sublist yet.
			_ = acc.removeSub(sub)
		}
		acc.interestChanged()
	}
	if c.opts.Verbose {
		c.queueOwn("+OK\r\n")
	}
}

func (c *client) processUnsub(cmd *command) {
	c.mu.Lock()
	sub := c.mu.subs[string(cmd.sid)]
	c.mu.Unlock()
	if sub != nil {
		if cmd.max > 0 && cmd.max > sub.delivered.Load() {
			sub.max.Store(cmd.max)
			// A delivery may have raced past the new limit.
			if sub.delivered.Load() >= cmd.max {
				c.removeSub(sub)
			}
		} else {
			c.removeSub(sub)
		}
	}
	if c.opts.Verbose {
		c.queueOwn("+OK\r\n")
	}
}

// removeSub drops one of this client's subscriptions. Safe from any
// goroutine; only the first call for a subscription has an effect.
func (c *client) removeSub(sub *subscription) {
	if !sub.closed.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	if c.mu.subs[string(sub.sid)] == sub {
		delete(c.mu.subs, string(sub.sid))
	}
	c.mu.Unlock()
	acc := c.acc.Load()
	_ = acc.removeSub(sub)
	acc.interestChanged()
}

func (c *client) processPub(cmd *command) {
	c.counts.inMsgs++
	c.counts.inBytes += int64(len(cmd.payload))
	if c.opts.Verbose {
		c.queueOwn("+OK\r\n")
	}
	if c.opts.Pedantic && !subject.ValidLiteral(string(cmd.subject)) {
		c.sendErrLine(textInvalidPubSubject)
	}
	if cmd.hdrLen > 0 && wantsTrace(cmd.payload[:cmd.hdrLen]) && c.tracePub(cmd) {
		return // traced (msgtrace.go)
	}
	if p := c.perms.Load(); p != nil && !p.canPublish(cmd.subject) {
		c.srv.logger.Debug("publish permission violation", "cid", c.id, "user", c.user, "subject", string(cmd.subject))
		c.sendErrLine(permPubViolation(cmd.subject))
		return
	}
	acc := c.acc.Load()
	d := delivery{
		pub:   c,
		acc:   acc,
		subj:  cmd.subject,
		reply: cmd.reply,
		hdr:   cmd.payload[:cmd.hdrLen],
		data:  cmd.payload[cmd.hdrLen:],
	}
	var a audience
	if cl := c.srv.cluster; cl != nil && cl.active.Load() > 0 {
		a.remote = c.matchRemote(acc, cmd.subject)
		a.f = c.fwd
	}
	delivered := c.srv.dispatch(&d, c.matchIn(acc, cmd.subject), &a)
	if a.f != nil && c.forwardAll(&d) {
		delivered = true
	}
	if !delivered && len(cmd.reply) > 0 && c.opts.NoResponders {
		c.noResponders(cmd.subject, cmd.reply)
	}
}

// matchIn returns the subscriptions of account acc for subj, using the
// one-entry memo when the sublist has not changed since.
func (c *client) matchIn(acc *Account, subj []byte) *result {
	gen := acc.subs.Gen()
	m := &c.memo
	if m.res != nil && m.acc == acc && m.gen == gen && bytes.Equal(m.subj, subj) {
		return m.res
	}
	if oneOff(subj) {
		// Never published twice: caching it would only evict subjects that
		// repeat, and take the cache's write lock for every message.
		return acc.subs.MatchUncached(bytesView(subj))
	}
	res := acc.subs.Match(bytesView(subj))
	m.subj = append(m.subj[:0], subj...)
	m.acc, m.gen, m.res = acc, gen, res
	return res
}

// oneOff reports whether subj is a subject clients publish to once: a
// JetStream ack ($JS.ACK.<stream>.<consumer>.<delivery numbers>) or flow
// control reply ($JS.FC.…), one per message delivered. A fetch at 200k
// msgs/s publishes 200k distinct ack subjects a second.
func oneOff(subj []byte) bool {
	return bytes.HasPrefix(subj, []byte("$JS.ACK.")) || bytes.HasPrefix(subj, []byte("$JS.FC."))
}

// noResponders sends the publisher a 503 status on its own subscription for
// the reply subject, as nats-server does when nobody received a request.
func (c *client) noResponders(subj, reply []byte) {
	var sub *subscription
	for _, s := range c.acc.Load().subs.MatchOnce(bytesView(reply)).Plain {
		if s.client == c {
			sub = s
			break
		}
	}
	if sub == nil {
		return
	}
	h := natshdr.End(natshdr.AppendField(natshdr.AppendStart(c.scratch[:0], 503, ""), "Nats-Subject", subj))
	c.scratch = h
	if !c.stageMsg(c, sub.sid, reply, nil, h, nil) {
		if _, ok := c.queueMsg(sub.sid, reply, nil, h, nil); ok {
			c.addPending(c)
		}
	}
}

// close ends the connection once: it queues a final -ERR (when text is not
// empty), unregisters the client and its subscriptions, and lets the writer
// flush and close the socket. Safe from any goroutine.
// It reports whether this call did the closing.
func (c *client) close(reason closeReason, text string) bool {
	if !c.closed.CompareAndSwap(false, true) {
		return false
	}
	c.doClose(reason, text)
	return true
}

func (c *client) doClose(reason closeReason, text string) {
	c.out.mu.Lock()
	if reason == closeSlowConsumerPending {
		c.out.dropQueued() // what was queued will never be read in time
	}
	if text != "" {
		c.out.appendQueued("-ERR '" + text + "'\r\n")
	}
	if c.ws != nil {
		c.out.mu.wsStatus = wsCloseStatus(reason)
		if text == textMaxPayload {
			c.out.mu.wsStatus = websocket.CloseMessageTooBig
		}
		c.out.mu.wsReason = reason.String()
	}
	c.out.mu.closing = true
	c.releaseStall()
	c.out.mu.Unlock()
	if c.trace && text != "" {
		c.traceOut("-ERR '" + text + "'\r\n")
	}
	// Bound the final flush, and stop the read goroutine without closing
	// the socket under the writer.
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteDeadline))
	_ = c.conn.SetReadDeadline(time.Now())
	c.kickWriter()

	c.mu.Lock()
	if c.mu.pingTimer != nil {
		c.mu.pingTimer.Stop()
	}
	if c.mu.authTimer != nil {
		c.mu.authTimer.Stop()
	}
	subs := make([]*subscription, 0, len(c.mu.subs))
	for _, s := range c.mu.subs {
		subs = append(subs, s)
	}
	clear(c.mu.subs)
	c.mu.Unlock()
	acc := c.acc.Load()
	for _, s := range subs {
		if s.closed.CompareAndSwap(false, true) {
			_ = acc.removeSub(s)
		}
	}
	c.srv.removeClient(c)
	if c.route != nil {
		c.srv.routeClosed(c)
	} else if c.announced.Load() {
		c.srv.connEvent(c, false, reason)
	}
	if c.srv.opts.Debug || reason != closeClientClosed {
		c.srv.logger.Debug("client connection closed", "cid", c.id, "ip", c.ip, "reason", reason.String())
	}
	acc.interestChanged()
}
