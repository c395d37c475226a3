package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/cluster"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/sysreq"
)

// shutdownTimeout bounds the cleanup of a Start that fails half way.
const shutdownTimeout = 10 * time.Second

// Server is a whole jetwal server (see the package doc).
type Server struct {
	opts    Options
	log     *slog.Logger
	core    *server.Server
	handoff *cluster.Handoff // raft connections, with clustered JetStream
	node    atomic.Pointer[cluster.Node]

	mu      sync.Mutex
	started bool
	ready   chan struct{} // closed when Start has finished
	mon     *monitor.Monitor
	sys     *sysreq.Service
	prof    *http.Server // ProfPort's listener, nil without one
	jss     jetStreams   // one per account with JetStream, once started (tests look inside)
	stopped bool
}

// New checks o and makes the server; nothing listens and nothing touches
// the store before Start.
func New(o Options) (*Server, error) {
	o = o.withDefaults()
	if err := o.ResolveAccounts(); err != nil {
		return nil, err
	}
	if err := o.Store.Encryption.Validate(); err != nil {
		return nil, err
	}

	if o.JetStream {
		o.Server.JetStream = true
		o.Server.APILevel = api.Level
	}
	s := &Server{log: o.Logger, ready: make(chan struct{})}
	if o.JetStream && o.Server.Cluster != nil {
		co := *o.Server.Cluster
		s.handoff = &cluster.Handoff{}
		co.Raft = s.handoff.Serve
		o.Server.Cluster = &co
	}
	core, err := server.New(o.Server)
	if err != nil {
		return nil, err
	}
	s.opts, s.core = o, core
	return s, nil
}

// Core returns the NATS core server (accounts, in-process subscriptions,
// statistics).
func (s *Server) Core() *server.Server { return s.core }

// Options returns the options the server runs with (defaults filled in).
func (s *Server) Options() Options { return s.opts }

// Start binds the listeners, opens JetStream (and joins the cluster) and
// starts accepting clients, routes, monitoring and $SYS requests. It
// returns once the server is ready for clients, or with the first error,
// having released everything it took.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("serve: Start called twice")
	}
	s.started = true
	s.mu.Unlock()
	o, log, srv := &s.opts, s.log, s.core
	abort := func(err error) error {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		s.mu.Lock()
		mon, sys := s.mon, s.sys
		s.mu.Unlock()
		if mon != nil {
			_ = mon.Shutdown(ctx)
		}
		_ = srv.Shutdown(ctx)
		if sys != nil {
			sys.Stop()
		}
		return err
	}
	s.report()
	// Bind the port before touching the store: a busy port must leave
	// nothing behind on disk.
	if err := srv.Listen(); err != nil {
		return err
	}
	var jsStats monitor.JetStream
	var raft monitor.RaftGroups
	if o.JetStream {
		log.Info("Starting JetStream")
		log.Info("---------------- JETSTREAM ----------------")
		log.Info(fmt.Sprintf("  Store Directory: %q", o.Store.Dir))
		log.Info("  Sync:            " + o.Store.Sync.String())
		if e := o.Store.Encryption; e.Enabled() {
			c := e.Cipher
			if c == crypt.None {
				c = crypt.ChaCha
			}
			log.Info("  Encryption:      " + c.String())
			if e.PrevKey != "" {
				log.Info("  Key rotation:    streams wrapped by prev_key are rewrapped with key as they open")
			}
		}
		log.Info("-------------------------------------------")
		var jc *jsCluster // nil without a cluster
		if s.handoff != nil {
			node, err := startClusterNode(srv, o.Server.Cluster, storeRoot(o.Store.Dir), o.Store.Encryption, s.handoff, log)
			if err != nil {
				return abort(fmt.Errorf("start jetstream: %w", err))
			}
			router, err := newMetaRouter(node, srv)
			if err != nil {
				_ = node.Close()
				return abort(fmt.Errorf("start jetstream: %w", err))
			}
			jc = &jsCluster{Node: node, srv: srv, router: router, account: server.GlobalAccount}
			s.node.Store(node)
			raft = raftGroups{node: node, system: o.systemAccount()}
			srv.OnShutdown(func() {
				if err := node.Close(); err != nil {
					log.Error("closing the JetStream cluster", "err", err)
				}
			})
		}
		jss, err := startJetStreams(srv, o, jc, log)
		if err != nil {
			return abort(fmt.Errorf("start jetstream: %w", err))
		}
		s.mu.Lock()
		s.jss = jss
		s.mu.Unlock()
		switch len(jss) {
		case 0:
		case 1:
			jsStats = jss[0]
		default:
			jsStats = jetStreams(jss)
		}
		if jc != nil {
			// The meta leader's system account requests: its step-down
			// (jetstream/cluster_stepdown.go), a server's removal from the
			// meta group and its evacuation (cluster_server_remove.go).
			sys := srv.Account(o.systemAccount())
			for _, serveOp := range []func() (*server.Subscription, error){
				func() (*server.Subscription, error) { return jss[0].ServeMetaStepDown(sys) },
				func() (*server.Subscription, error) { return jss[0].ServeServerRemove(sys, jss) },
				func() (*server.Subscription, error) { return jss[0].ServeServerEvacuate(sys, jss) },
			} {
				sub, err := serveOp()
				if err != nil {
					for _, js := range jss {
						_ = js.Close()
					}
					return abort(fmt.Errorf("start jetstream: %w", err))
				}
				if sub != nil {
					srv.OnShutdown(sub.Unsubscribe)
				}
			}
		}
		srv.OnShutdown(func() {
			for _, js := range jss {
				if err := js.Close(); err != nil {
					log.Error("closing JetStream", "err", err)
				}
			}
		})
	}
	if err := srv.Start(); err != nil {
		return abort(err)
	}
	opts := srv.Options()
	if opts.TLSConfig != nil {
		log.Info("TLS required for client connections")
	}
	if d := describeAuth(o.Auth); d != "" && opts.Auth != nil {
		log.Info("Authentication required: " + d)
	}
	log.Info("Listening for client connections on " + listenAddr(opts.Host, srv))
	if opts.Auth == nil && !isLoopback(opts.Host) {
		log.Warn("No authentication configured and listening on " + opts.Host + ": anyone who can reach this address can connect, publish and read JetStream data")
	}
	if ws := opts.Websocket; ws != nil {
		log.Info("Listening for websocket clients on " + srv.WebsocketURL())
		if ws.TLSConfig == nil {
			log.Warn("Websocket not configured with TLS. DO NOT USE IN PRODUCTION!")
		}
		if ws.Auth == nil && opts.Auth == nil && !isLoopback(ws.Host) {
			log.Warn("No authentication configured and listening for websocket clients on " + ws.Host + ": anyone who can reach this address can connect")
		}
	}
	accounts := o.accountSource(srv)
	var mon *monitor.Monitor
	if o.HTTPPort != 0 {
		port := max(o.HTTPPort, 0) // -1 = a random port
		log.Info("Starting http monitor on " + net.JoinHostPort(o.HTTPHost, strconv.Itoa(port)))
		var err error
		mon, err = monitor.Start(monitor.Options{Host: o.HTTPHost, Port: port, Server: srv, JetStream: jsStats,
			Accounts: accounts, Raft: raft, ConfigLoadTime: o.Loaded, Logger: log})
		if err != nil {
			return abort(err)
		}
		s.mu.Lock()
		s.mon = mon
		s.mu.Unlock()
		log.Info("Monitoring listening on " + mon.Addr().String())
	}
	if mon == nil {
		// The $SYS requests answer with the monitor's documents; without
		// an HTTP listener they get a monitor of their own.
		var err error
		if mon, err = monitor.New(monitor.Options{Server: srv, JetStream: jsStats, Accounts: accounts, Raft: raft, ConfigLoadTime: o.Loaded, Logger: log}); err != nil {
			return abort(err)
		}
	}
	domain := ""
	if o.JetStream {
		domain = o.Store.Domain
	}
	sys, err := sysreq.Start(sysreq.Options{Server: srv, Account: srv.Account(o.systemAccount()), Monitor: mon, JetStream: o.JetStream, Domain: domain, Logger: log})
	if err != nil {
		return abort(err)
	}
	s.mu.Lock()
	s.sys = sys
	s.mu.Unlock()
	if err := s.writePorts(); err != nil {
		return abort(err)
	}
	log.Info("Server is ready")
	close(s.ready)
	if o.ProfPort != 0 {
		// As before this moved here from the command: a profiling port
		// that cannot be bound is logged, and the server keeps running.
		prof, err := startProfiler(o.ProfPort, log)
		if err != nil {
			log.Error("profiling port", "err", err)
		}
		s.mu.Lock()
		s.prof = prof
		s.mu.Unlock()
	}
	return nil
}

// report logs the startup banner, in nats-server's shape.
func (s *Server) report() {
	o, log, srv := &s.opts, s.log, s.core
	opts := srv.Options()
	log.Info("Starting jetwal")
	if o.ConfigFile != "" {
		log.Info("  Using configuration file: " + o.ConfigFile)
	}
	for _, w := range o.Warnings {
		log.Warn(w.String())
	}
	if o.Version != "" {
		log.Info("  Version:  " + o.Version)
	}
	log.Info("  NATS:     " + srv.Version() + " (protocol 1)")
	log.Debug("  Go build: " + runtime.Version())
	log.Info("  Name:     " + srv.Name())
	log.Info("  ID:       " + srv.ID())
	log.Info("  Max Payload:     " + humanBytes(int64(opts.MaxPayload)))
	log.Info("  Max Pending:     " + humanBytes(opts.MaxPending))
	log.Info("  Max Connections: " + strconv.Itoa(opts.MaxConnections))
	log.Info("  Max Control Line: " + strconv.Itoa(opts.MaxControlLine))
}

// ReadyForConnections waits up to d for Start to finish and reports
// whether the server is accepting clients.
func (s *Server) ReadyForConnections(d time.Duration) bool {
	select {
	case <-s.ready:
		return true
	case <-time.After(d):
		return false
	}
}

// Addr is the client listener's address (after Start).
func (s *Server) Addr() net.Addr { return s.core.Addr() }

// ClientURL is the URL clients connect to (after Start), e.g.
// nats://127.0.0.1:4222.
func (s *Server) ClientURL() string { return s.core.ClientURL() }

// WebsocketURL is the URL WebSocket clients connect to (after Start),
// e.g. ws://127.0.0.1:8080; "" without a websocket listener.
func (s *Server) WebsocketURL() string { return s.core.WebsocketURL() }

// MonitorAddr is the HTTP monitoring listener's address, nil without one.
func (s *Server) MonitorAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mon == nil || s.opts.HTTPPort == 0 {
		return nil
	}
	return s.mon.Addr()
}

// SetAuthenticator replaces who may connect and what they may do, for
// connections made from now on (a configuration reload); nil turns
// authentication off.
func (s *Server) SetAuthenticator(a server.Authenticator) { s.core.SetAuthenticator(a) }

// SetWebsocketAuthenticator replaces who may connect on the WebSocket
// listener; nil = the same as the client listener (SetAuthenticator).
func (s *Server) SetWebsocketAuthenticator(a server.Authenticator) {
	s.core.SetWebsocketAuthenticator(a)
}

// LameDuck stops the server gently, as nats-server's lame duck mode (used
// for rolling restarts): it hands every raft leadership it holds to
// another server, stops accepting clients, tells its clients and the
// cluster, waits LameDuckGrace, closes its clients one after another over
// LameDuckDuration, then shuts down as Shutdown does. ctx bounds it all.
func (s *Server) LameDuck(ctx context.Context) error {
	if n := s.node.Load(); n != nil {
		if err := n.HandOver(); err != nil {
			s.log.Warn("lame duck: handing over raft leadership", "err", err)
		}
	}
	if err := s.core.LameDuck(ctx, s.opts.LameDuckGrace, s.opts.LameDuckDuration); err != nil {
		return fmt.Errorf("lame duck: %w", err)
	}
	return s.Shutdown(ctx)
}

// Shutdown hands the raft leaderships it holds to servers it still has a
// route to (cluster.Node.HandOverOnStop, at most a few seconds), stops the
// monitor and the $SYS requests, closes every client and route, then
// JetStream and the cluster, within ctx. Calling it again does nothing.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	mon, sys, prof := s.mon, s.sys, s.prof
	s.mu.Unlock()
	if n := s.node.Load(); n != nil {
		if err := n.HandOverOnStop(ctx); err != nil {
			s.log.Warn("shutdown: handing over raft leadership", "err", err)
		}
	}
	if prof != nil {
		_ = prof.Close()
	}
	if mon != nil && s.opts.HTTPPort != 0 {
		if err := mon.Shutdown(ctx); err != nil {
			s.log.Error("closing the http monitor", "err", err)
		}
	}
	s.removePorts()
	err := s.core.Shutdown(ctx)
	if sys != nil {
		sys.Stop()
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
