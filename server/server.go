package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/server/websocket"
)

// ErrServerClosed is returned by Start after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Server is a NATS core protocol server.
type Server struct {
	opts Options // defaults applied; read-only after New
	// stallMark is the queue length past which a publisher stalls for a
	// receiver (outbound.go): the smaller of 3/4 of MaxPending and
	// stallMarkMax.
	stallMark int64
	logger    *slog.Logger
	id        string
	name      string
	gacc      *Account            // $G (account.go)
	accounts  map[string]*Account // every account by name, $G included; fixed at New
	internal  *Account            // InternalAccount, not in accounts
	cluster   *cluster            // nil without Options.Cluster (route.go)

	nextID        atomic.Uint64
	slowConsumers atomic.Int64
	connHook      atomic.Pointer[func(ConnEvent)]
	msgTrace      msgTraceHooks           // message tracing (msgtrace.go)
	infoPrefix    atomic.Pointer[string]  // INFO up to the per-client fields; set by Start
	wsInfoPrefix  atomic.Pointer[string]  // the same for WebSocket clients (ws.go)
	wsAuth        atomic.Pointer[authBox] // nil = WebSocket clients use auth
	wsOrigins     *websocket.Origins      // the WebSocket origin policy; nil = any
	lameDuck      atomic.Bool             // in lame duck mode (lameduck.go): INFO says "ldm"
	auth          atomic.Pointer[authBox] // nil = no authentication
	stats         counters                // server-wide message counts (stats.go)
	staleConns    atomic.Int64
	start         time.Time
	authThrottle  auth.Throttle

	wg sync.WaitGroup // accept loop and every client goroutine

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		ln       net.Listener
		wsln     net.Listener // the WebSocket listener (ws.go); nil = none
		clients  map[uint64]*client
		hooks    []func()
		started  bool
		shutdown bool
	}
	shutdownDone chan struct{}
	shutdownErr  error
}

// New checks opts and returns a server that is not listening yet.
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Server{
		opts:         opts,
		stallMark:    min(opts.MaxPending/4*3, stallMarkMax),
		logger:       opts.Logger,
		id:           newServerID(),
		shutdownDone: make(chan struct{}),
		start:        time.Now(),
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.name = opts.ServerName
	if s.name == "" {
		s.name = s.id
	}
	s.mu.clients = make(map[uint64]*client)
	if err := s.initAccounts(opts.Accounts); err != nil {
		return nil, err
	}
	if opts.Auth != nil {
		s.auth.Store(&authBox{opts.Auth})
	}
	if ws := opts.Websocket; ws != nil {
		s.wsOrigins, _ = websocket.NewOrigins(ws.SameOrigin, ws.AllowedOrigins) // Validate checked them
		if ws.Auth != nil {
			s.wsAuth.Store(&authBox{ws.Auth})
		}
	}
	if opts.Cluster != nil {
		if a := opts.Cluster.Account; a != "" && a != GlobalAccount && s.accounts[a] != nil || a == InternalAccount {
			return nil, fmt.Errorf("server: options: cluster account %q (the wire name of $G) is also the name of an account", a)
		}
		cl, err := newCluster(s, opts.Cluster)
		if err != nil {
			return nil, err
		}
		s.cluster = cl
	}
	return s, nil
}

// authBox holds the Authenticator in an atomic pointer.
type authBox struct{ a Authenticator }

// authenticator returns the Authenticator new clients use, or nil.
func (s *Server) authenticator() Authenticator {
	if b := s.auth.Load(); b != nil {
		return b.a
	}
	return nil
}

// SetAuthenticator replaces the Authenticator for clients that connect from
// now on (nil turns authentication off); connected clients keep the
// identity they logged in with. It is how a configuration reload changes
// users.
func (s *Server) SetAuthenticator(a Authenticator) {
	if a == nil {
		s.auth.Store(nil)
	} else {
		s.auth.Store(&authBox{a})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ln != nil {
		prefix := s.buildInfoPrefix(s.mu.ln.Addr().(*net.TCPAddr).Port)
		s.infoPrefix.Store(&prefix)
	}
	s.refreshWSInfoLocked() // WebSocket clients may use this authenticator
}

// newServerID returns an id shaped like nats-server's: 'N' and 55 base32
// characters.
func newServerID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var raw [55]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails on supported platforms
	id := make([]byte, 0, 56)
	id = append(id, 'N')
	for _, b := range raw {
		id = append(id, alphabet[b&31])
	}
	return string(id)
}

// ID returns the server id sent in INFO.
func (s *Server) ID() string { return s.id }

// Name returns the server name sent in INFO.
func (s *Server) Name() string { return s.name }

// Version returns the version sent in INFO.
func (s *Server) Version() string { return s.opts.Version }

// Options returns the options in effect (defaults applied).
func (s *Server) Options() Options { return s.opts }

// Listen binds the client port without accepting connections yet, so that
// a caller can fail on a busy port before it creates anything else (a store
// directory, say); Start then accepts. Start alone does both.
func (s *Server) Listen() error {
	s.mu.Lock()
	err := s.listenLocked()
	s.mu.Unlock()
	if err != nil || s.cluster == nil {
		return err
	}
	// The cluster reads the client address (connect_urls): not under s.mu.
	return s.cluster.listen()
}

func (s *Server) listenLocked() error {
	if s.mu.shutdown {
		return ErrServerClosed
	}
	if s.mu.ln != nil {
		return nil
	}
	addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", addr, err)
	}
	s.mu.ln = ln
	prefix := s.buildInfoPrefix(ln.Addr().(*net.TCPAddr).Port)
	s.infoPrefix.Store(&prefix)
	if err := s.listenWSLocked(); err != nil {
		_ = ln.Close()
		s.mu.ln = nil
		return err
	}
	return nil
}

// Start listens (unless Listen did) and accepts clients in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if s.mu.started {
		s.mu.Unlock()
		return errors.New("server: already started")
	}
	if err := s.listenLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.mu.started = true
	s.wg.Add(1)
	go s.acceptLoop(s.mu.ln, s.createClient)
	if s.mu.wsln != nil {
		s.wg.Add(1)
		go s.acceptLoop(s.mu.wsln, s.acceptWS)
	}
	s.mu.Unlock()
	// The cluster reads the client address (connect_urls): not under s.mu.
	if s.cluster != nil {
		return s.cluster.start()
	}
	return nil
}

// Addr returns the listen address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ln == nil {
		return nil
	}
	return s.mu.ln.Addr()
}

// ClientURL returns a URL clients on this host can connect to.
func (s *Server) ClientURL() string {
	return localURL("nats", s.opts.Host, s.Addr())
}

// localURL is the URL a client on this host reaches a listener bound to
// host at addr by: a wildcard or empty host is dialled as 127.0.0.1. It is
// "" before the listener is bound.
func localURL(scheme, host string, addr net.Addr) string {
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(a.Port))
}

func (s *Server) acceptLoop(ln net.Listener, serve func(net.Conn)) {
	defer s.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isShuttingDown() || errors.Is(err, net.ErrClosed) {
				return
			}
			s.logger.Error("accept error", "err", err)
			time.Sleep(backoff) // e.g. out of file descriptors; retry
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		serve(conn)
	}
}

func (s *Server) isShuttingDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.shutdown
}

func (s *Server) createClient(raw net.Conn) {
	conn := raw
	if s.opts.TLSConfig != nil {
		conn = tls.Server(raw, s.opts.TLSConfig)
	}
	c := newClient(s, conn, s.nextID.Add(1))
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		_ = raw.Close()
		return
	}
	tooMany := len(s.mu.clients) >= s.opts.MaxConnections
	if tooMany && conn != raw {
		// No clear-text error to a TLS client: just refuse it.
		s.mu.Unlock()
		s.logger.Warn("maximum connections exceeded", "max", s.opts.MaxConnections, "addr", c.addr)
		_ = raw.Close()
		return
	}
	if !tooMany {
		s.mu.clients[c.id] = c
	}
	s.wg.Add(2)
	s.mu.Unlock()

	if s.opts.Debug {
		s.logger.Debug("client connection created", "cid", c.id, "addr", c.addr)
	}
	if conn != raw {
		go c.tlsStart(raw)
		return
	}
	c.queueProto(s.infoLine(c, false))
	if tooMany {
		s.logger.Warn("maximum connections exceeded", "max", s.opts.MaxConnections, "addr", c.addr)
		c.close(closeMaxConnections, textMaxConnections)
	} else {
		c.firstPing()
		c.startAuthTimer()
	}
	go c.writeLoop()
	go c.readLoop()
	c.kickWriter()
}

func (s *Server) removeClient(c *client) {
	s.mu.Lock()
	if s.mu.clients[c.id] == c {
		delete(s.mu.clients, c.id)
	}
	s.mu.Unlock()
}

// NumClients returns the number of connected clients.
func (s *Server) NumClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.clients)
}

// NumSubscriptions returns the number of subscriptions, TCP and internal,
// of every account.
func (s *Server) NumSubscriptions() int {
	n := 0
	for _, a := range s.accounts {
		n += a.subs.Count()
	}
	return n
}

// SlowConsumers returns how many clients were cut off as slow consumers.
func (s *Server) SlowConsumers() int64 { return s.slowConsumers.Load() }

// OnShutdown registers fn to run during Shutdown, after all clients are
// closed. Hooks run in registration order.
func (s *Server) OnShutdown(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.hooks = append(s.mu.hooks, fn)
}

// Shutdown stops accepting, closes every client after flushing what is
// queued for it, waits for the connection goroutines, and runs the shutdown
// hooks. If ctx ends first, the remaining sockets are closed at once; the
// hooks still run and ctx's error is returned. Calling it again waits for
// the first call.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		select {
		case <-s.shutdownDone:
			return s.shutdownErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.shutdown = true
	ln, wsln := s.mu.ln, s.mu.wsln
	clients := make([]*client, 0, len(s.mu.clients))
	for _, c := range s.mu.clients {
		clients = append(clients, c)
	}
	hooks := s.mu.hooks
	s.mu.Unlock()

	if ln != nil {
		_ = ln.Close()
	}
	if wsln != nil {
		_ = wsln.Close()
	}
	if s.cluster != nil {
		s.cluster.stop()
	}
	for _, c := range clients {
		c.close(closeServerShutdown, "")
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		for _, c := range clients {
			_ = c.conn.Close()
		}
		<-done
	}
	for _, fn := range hooks {
		fn()
	}
	s.shutdownErr = err
	close(s.shutdownDone)
	return err
}

// SetInterestHook sets the interest hook of $G (Account.SetInterestHook).
func (s *Server) SetInterestHook(fn func()) { s.gacc.SetInterestHook(fn) }
