package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"
)

// Defaults, equal to nats-server's where nats-server has the setting.
const (
	DefaultHost           = "0.0.0.0"
	DefaultPort           = 4222 // used by the command; Options.Port 0 picks a random port
	DefaultMaxPayload     = 1 << 20
	DefaultMaxConnections = 64 * 1024
	DefaultMaxControlLine = 4096
	DefaultMaxPending     = 64 << 20
	DefaultPingInterval   = 2 * time.Minute
	DefaultMaxPingsOut    = 2
	DefaultWriteDeadline  = 10 * time.Second

	// DefaultVersion is the server version reported in INFO. Clients gate
	// features on it (natscli asks $SYS.REQ.USER.INFO only from 2.10.0 on),
	// so it names the nats-server release whose protocol we follow.
	DefaultVersion = "2.14.0"

	// firstPingDelay is when the first server PING goes out after a client
	// connects (nats-server measures the RTT with it), unless PingInterval is
	// shorter.
	firstPingDelay = 2 * time.Second
)

// Options configure a Server. The zero value means nats-server's defaults,
// except that Port 0 listens on a random free port.
type Options struct {
	Host string // listen address; "" means DefaultHost
	Port int    // 0 (or negative) = random, for tests

	MaxPayload     int32         // largest message (header+data) a client may publish; 0 = 1 MiB
	MaxConnections int           // 0 = 64Ki
	MaxControlLine int           // longest protocol line argument; 0 = 4096
	MaxPending     int64         // outbound bytes queued for one client before it is cut off as a slow consumer; 0 = 64 MiB
	PingInterval   time.Duration // 0 = 2m
	MaxPingsOut    int           // unanswered server PINGs before "Stale Connection"; 0 = 2
	WriteDeadline  time.Duration // a blocked socket write longer than this cuts the client off; 0 = 10s

	JetStream bool // advertise "jetstream":true in INFO
	APILevel  int  // JetStream API level advertised as "api_lvl" (only with JetStream; 0 = omitted)

	ServerName string   // "" = the generated server id
	Tags       []string // server_tags (normalized by config): /varz, $SYS replies, stream placement
	Version    string   // version reported in INFO; "" = DefaultVersion

	// Auth checks every client's CONNECT credentials (see authn.go); nil
	// means clients need none. AuthTimeout bounds the time from accept (or
	// from the end of the TLS handshake) to an authenticated CONNECT; 0 = 2s.
	Auth        Authenticator
	AuthTimeout time.Duration

	// Accounts names the accounts besides $G (account.go). A client is in
	// the account its identity names; an identity naming an account not
	// listed here is refused at CONNECT.
	Accounts []string
	// SystemAccount names the account (of Accounts) whose clients INFO
	// calls the system account's ("acc_is_sys"); "" = none.
	SystemAccount string

	// TLSConfig, when set, makes every client connection TLS (see tls.go):
	// INFO goes out in the clear with "tls_required":true and the client
	// starts the handshake, or with TLSHandshakeFirst the handshake comes
	// first and INFO is sent over TLS. A ClientAuth of
	// tls.RequireAndVerifyClientCert is announced as "tls_verify":true.
	TLSConfig         *tls.Config
	TLSHandshakeFirst bool
	TLSTimeout        time.Duration // bound on the handshake; 0 = 2s

	// Websocket, when set, also listens for WebSocket clients (ws.go).
	Websocket *WebsocketOptions

	// Cluster, when set, listens for routes from other servers and
	// connects to them (route.go); nil = a standalone server.
	Cluster *ClusterOptions

	Logger *slog.Logger // nil = discard
	Debug  bool         // log connection events at debug level
	Trace  bool         // log every protocol operation at LevelTrace
}

// LevelTrace is the slog level used for protocol traces (Options.Trace).
const LevelTrace = slog.Level(-8)

// withDefaults returns a copy of o with zero values replaced by defaults.
func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Port < 0 {
		o.Port = 0
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxControlLine == 0 {
		o.MaxControlLine = DefaultMaxControlLine
	}
	if o.MaxPending == 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.MaxPingsOut == 0 {
		o.MaxPingsOut = DefaultMaxPingsOut
	}
	if o.WriteDeadline == 0 {
		o.WriteDeadline = DefaultWriteDeadline
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.AuthTimeout == 0 {
		o.AuthTimeout = DefaultAuthTimeout
	}
	if o.TLSTimeout == 0 {
		o.TLSTimeout = DefaultTLSTimeout
	}
	if o.Cluster != nil {
		o.Cluster = o.Cluster.withDefaults(o)
	}
	if o.Websocket != nil {
		o.Websocket = o.Websocket.withDefaults(o)
	}
	return o
}

// Validate reports the first setting that cannot work.
func (o Options) Validate() error {
	switch {
	case o.Port > 65535:
		return fmt.Errorf("server: options: port %d out of range", o.Port)
	case o.MaxPayload < 0:
		return fmt.Errorf("server: options: max payload %d is negative", o.MaxPayload)
	case o.MaxConnections < 0:
		return fmt.Errorf("server: options: max connections %d is negative", o.MaxConnections)
	case o.MaxControlLine < 0:
		return fmt.Errorf("server: options: max control line %d is negative", o.MaxControlLine)
	case o.MaxPending < 0:
		return fmt.Errorf("server: options: max pending %d is negative", o.MaxPending)
	case o.PingInterval < 0:
		return fmt.Errorf("server: options: ping interval %v is negative", o.PingInterval)
	case o.MaxPingsOut < 0:
		return fmt.Errorf("server: options: max pings out %d is negative", o.MaxPingsOut)
	case o.WriteDeadline < 0:
		return fmt.Errorf("server: options: write deadline %v is negative", o.WriteDeadline)
	case o.AuthTimeout < 0:
		return fmt.Errorf("server: options: auth timeout %v is negative", o.AuthTimeout)
	case o.TLSTimeout < 0:
		return fmt.Errorf("server: options: TLS timeout %v is negative", o.TLSTimeout)
	case o.TLSHandshakeFirst && o.TLSConfig == nil:
		return fmt.Errorf("server: options: TLS handshake first needs a TLS configuration")
	case o.TLSConfig != nil && len(o.TLSConfig.Certificates) == 0 && o.TLSConfig.GetCertificate == nil:
		return fmt.Errorf("server: options: TLS configuration has no certificate")
	}
	if o.Websocket != nil {
		if err := o.Websocket.Validate(); err != nil {
			return err
		}
	}
	if o.Cluster != nil {
		return o.Cluster.Validate()
	}
	return nil
}
