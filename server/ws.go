package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/server/websocket"
)

// WebSocket clients (Options.Websocket). A second listener takes
// connections that start with an HTTP/1.1 upgrade request (over TLS
// unless NoTLS) and then speak the NATS client protocol inside binary
// WebSocket messages (package websocket). Once upgraded, the connection is
// an ordinary client: the same parser, accounts, permissions, limits
// (max_payload, max_connections, which counts both listeners), JetStream
// and monitoring; only authentication may differ, as in nats-server: the
// websocket block can give its own user, token or no_auth_user
// (WebsocketOptions.Auth), and its tls { verify_and_map } replaces the
// client listener's.
//
// The TLS handshake and the upgrade run on the connection's read
// goroutine, both bounded by HandshakeTimeout; a client that fails either
// is closed without counting as a client. The authentication timeout
// starts after the upgrade.

// wsLinger bounds the wait for a WebSocket client to close its side after
// the server's close frame.
const wsLinger = time.Second

// DefaultWebsocketHandshakeTimeout bounds the TLS handshake and the
// upgrade request when WebsocketOptions.HandshakeTimeout is 0. (nats-server
// has no default bound; an unbounded handshake would let idle sockets
// pile up.)
const DefaultWebsocketHandshakeTimeout = 2 * time.Second

// WebsocketOptions configure the WebSocket listener (nats-server's
// websocket { } block).
type WebsocketOptions struct {
	// Host "" = Options.Host (nats-server defaults to 0.0.0.0; jetwal keeps
	// the WebSocket port on the clients' interface unless told otherwise).
	Host string
	Port int // 0 or -1 = a random free port

	// TLSConfig makes the listener wss://; without one NoTLS must be set
	// (nats-server refuses a plain listener unless no_tls is given).
	TLSConfig *tls.Config
	NoTLS     bool

	Compression    bool     // accept permessage-deflate
	SameOrigin     bool     // a browser's Origin must be this listener's scheme, host and port
	AllowedOrigins []string // and, when not empty, one of these (http or https URLs)
	Headers        [][2]string
	// HandshakeTimeout bounds the TLS handshake and the upgrade request;
	// 0 = DefaultWebsocketHandshakeTimeout.
	HandshakeTimeout time.Duration
	// PingInterval is the keepalive PING interval of WebSocket clients;
	// 0 = Options.PingInterval.
	PingInterval time.Duration

	// Auth checks the CONNECT of WebSocket clients; nil = the same as
	// the TCP clients' (Options.Auth, or SetAuthenticator's).
	// AuthTimeout: 0 = Options.AuthTimeout.
	Auth        Authenticator
	AuthTimeout time.Duration
}

// Validate reports the first setting that cannot work.
func (o *WebsocketOptions) Validate() error {
	switch {
	case o.Port > 65535:
		return fmt.Errorf("server: options: websocket port %d out of range", o.Port)
	case o.TLSConfig == nil && !o.NoTLS:
		return errors.New("server: options: websocket requires TLS configuration (or no_tls)")
	case o.TLSConfig != nil && len(o.TLSConfig.Certificates) == 0 && o.TLSConfig.GetCertificate == nil:
		return errors.New("server: options: websocket TLS configuration has no certificate")
	case o.HandshakeTimeout < 0:
		return fmt.Errorf("server: options: websocket handshake timeout %v is negative", o.HandshakeTimeout)
	case o.AuthTimeout < 0:
		return fmt.Errorf("server: options: websocket auth timeout %v is negative", o.AuthTimeout)
	case o.PingInterval < 0:
		return fmt.Errorf("server: options: websocket ping interval %v is negative", o.PingInterval)
	}
	if _, err := websocket.NewOrigins(o.SameOrigin, o.AllowedOrigins); err != nil {
		return fmt.Errorf("server: options: websocket: %w", err)
	}
	for _, h := range o.Headers {
		if err := websocket.CheckHeader(h[0], h[1]); err != nil {
			return fmt.Errorf("server: options: websocket: %w", err)
		}
	}
	return nil
}

func (o WebsocketOptions) withDefaults(top Options) *WebsocketOptions {
	if o.Host == "" {
		o.Host = top.Host
	}
	if o.Port < 0 {
		o.Port = 0
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultWebsocketHandshakeTimeout
	}
	if o.AuthTimeout == 0 {
		o.AuthTimeout = top.AuthTimeout
	}
	if o.PingInterval == 0 {
		o.PingInterval = top.PingInterval
	}
	return &o
}

// wsAuthenticator returns the Authenticator of new WebSocket clients.
func (s *Server) wsAuthenticator() Authenticator {
	if b := s.wsAuth.Load(); b != nil {
		return b.a
	}
	return s.authenticator()
}

// SetWebsocketAuthenticator replaces the Authenticator of WebSocket
// clients that connect from now on; nil makes them use the TCP clients'.
func (s *Server) SetWebsocketAuthenticator(a Authenticator) {
	if a == nil {
		s.wsAuth.Store(nil)
	} else {
		s.wsAuth.Store(&authBox{a})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshWSInfoLocked()
}

// listenWSLocked opens the WebSocket listener. s.mu held.
func (s *Server) listenWSLocked() error {
	o := s.opts.Websocket
	if o == nil || s.mu.wsln != nil {
		return nil
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: websocket listen on %s: %w", addr, err)
	}
	s.mu.wsln = ln
	s.refreshWSInfoLocked()
	return nil
}

// refreshWSInfoLocked renders the INFO prefix of WebSocket clients: the
// listener's host and port, its own TLS ("tls_required" and
// "tls_available" for wss, as nats-server says) and authentication.
// s.mu held.
func (s *Server) refreshWSInfoLocked() {
	o := s.opts.Websocket
	if o == nil || s.mu.wsln == nil {
		return
	}
	port := s.mu.wsln.Addr().(*net.TCPAddr).Port
	secure := o.TLSConfig != nil
	verify := secure && o.TLSConfig.ClientAuth == tls.RequireAndVerifyClientCert
	p := s.renderInfoPrefix(o.Host, port, s.wsAuthenticator() != nil, secure, verify, secure)
	s.wsInfoPrefix.Store(&p)
}

// WebsocketAddr returns the WebSocket listen address, or nil.
func (s *Server) WebsocketAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.wsln == nil {
		return nil
	}
	return s.mu.wsln.Addr()
}

// WebsocketURL returns a ws:// (or wss://) URL clients on this host can
// connect to, or "" without the listener.
func (s *Server) WebsocketURL() string {
	addr := s.WebsocketAddr()
	if addr == nil {
		return ""
	}
	scheme := "ws"
	if s.opts.Websocket.TLSConfig != nil {
		scheme = "wss"
	}
	return localURL(scheme, s.opts.Websocket.Host, addr)
}

// acceptWS starts a WebSocket connection: its read goroutine does the
// handshakes, then serves it.
func (s *Server) acceptWS(raw net.Conn) {
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		_ = raw.Close()
		return
	}
	s.wg.Add(1) // the read goroutine; serveWS adds the writer
	s.mu.Unlock()
	go s.serveWS(raw)
}

// serveWS runs the TLS handshake and the upgrade, then serves the client
// on this goroutine.
func (s *Server) serveWS(raw net.Conn) {
	o := s.opts.Websocket
	_ = raw.SetDeadline(time.Now().Add(o.HandshakeTimeout))
	nc := raw
	var tc *tls.Conn
	if o.TLSConfig != nil {
		tc = tls.Server(raw, o.TLSConfig)
		if err := tc.Handshake(); err != nil {
			s.logger.Error("websocket TLS handshake error", "addr", raw.RemoteAddr().String(), "err", err)
			_ = raw.Close()
			s.wg.Done()
			return
		}
		nc = tc
	}
	ws, err := websocket.Accept(nc, websocket.Options{
		Compression: o.Compression,
		Origins:     s.wsOrigins,
		Secure:      tc != nil,
		Headers:     o.Headers,
		MaxMessage:  wsMaxMessage(s.opts.MaxPayload),
	})
	if err != nil {
		s.logger.Error("websocket handshake error", "addr", raw.RemoteAddr().String(), "err", err)
		_ = nc.Close()
		s.wg.Done()
		return
	}
	_ = raw.SetDeadline(time.Time{})

	c := newClient(s, ws, s.nextID.Add(1))
	if tc != nil {
		st := tc.ConnectionState()
		c.tlsInfo.Store(&tlsInfo{version: tls.VersionName(st.Version), cipher: tls.CipherSuiteName(st.CipherSuite)})
	}
	s.mu.Lock()
	if s.mu.shutdown {
		s.mu.Unlock()
		_ = ws.CloseWith(websocket.CloseGoingAway, closeServerShutdown.String())
		_ = nc.Close()
		s.wg.Done()
		return
	}
	tooMany := len(s.mu.clients) >= s.opts.MaxConnections
	if !tooMany {
		s.mu.clients[c.id] = c
	}
	s.wg.Add(1) // the writer
	s.mu.Unlock()
	if s.opts.Debug {
		s.logger.Debug("websocket client connection created", "cid", c.id, "addr", c.addr, "compression", ws.Compressed())
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
	c.kickWriter()
	c.readLoop()
}

// wsMaxMessage bounds one compressed client message (compressed and
// inflated): 8 × max_payload, at most 64 MiB (nats-server's bound).
func wsMaxMessage(maxPayload int32) int64 {
	return min(8*int64(maxPayload), websocket.DefaultMaxMessage)
}

// wsCloseStatus is the close frame status for why a client was closed
// (nats-server's mapping).
func wsCloseStatus(r closeReason) int {
	switch r {
	case closeClientClosed:
		return websocket.CloseNormal
	case closeAuthTimeout, closeAuthViolation, closeSlowConsumerPending, closeSlowConsumerWrite, closeMaxConnections:
		return websocket.ClosePolicyViolation
	case closeProtocolViolation:
		return websocket.CloseProtocolError
	case closeReadError, closeWriteError, closeStale, closeServerShutdown, closeTLSHandshake:
		return websocket.CloseGoingAway
	}
	return websocket.CloseInternalError
}
