package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Route defaults, nats-server's where it has the setting.
const (
	DefaultRouteAccount        = "$G"             // the account of clients when there are no accounts
	DefaultRouteMaxPayload     = 64 << 20         // nats-server's largest allowed max_payload
	DefaultRouteReconnectDelay = time.Second      // nats-server's DEFAULT_ROUTE_RECONNECT
	DefaultRouteMaxBackoff     = 30 * time.Second // nats-server's DEFAULT_ROUTE_CONNECT_MAX
	DefaultRouteDialTimeout    = time.Second      // nats-server's DEFAULT_ROUTE_DIAL
	DefaultRouteHandshake      = 3 * time.Second  // CONNECT and INFO must arrive within this
	maxRoutePingInterval       = 30 * time.Second // nats-server caps route PINGs at 30s
	routeControlLineFactor     = 16               // routes take 16x max_control_line, as nats-server
)

// ClusterOptions configure routes to other servers (Options.Cluster). The
// zero value of every field but Port means the default.
type ClusterOptions struct {
	// Name is the cluster name. Servers with different names refuse each
	// other's routes. "" generates one (a "dynamic" name, which gives way
	// to a configured one, as in nats-server).
	Name string

	Host string // route listen address; "" = the client Host
	Port int    // route listen port; 0 = random (tests)

	// Routes are the servers to connect to (nats://[user:pass@]host:port);
	// the others are learned from them (gossip).
	Routes []*url.URL

	// Username and Password, when set, are required from every incoming
	// route and sent on routes learned by gossip.
	Username, Password string
	// AuthTimeout bounds the time from accept to a complete route
	// handshake (CONNECT and INFO); 0 = DefaultRouteHandshake.
	AuthTimeout time.Duration

	// TLSConfig, when set, makes every route TLS, handshake first, both
	// ways: accepted routes present its certificate (and verify the
	// remote's as ClientAuth says); solicited routes verify the remote
	// against RootCAs (or ClientCAs when RootCAs is nil) and present the
	// same certificate.
	TLSConfig  *tls.Config
	TLSTimeout time.Duration // 0 = DefaultTLSTimeout

	// Raft, when set, takes over accepted connections that open with a
	// raft preamble (route_raft.go): the raft groups of clustered
	// JetStream share the route port. Such a connection has passed the
	// same checks as a route before Raft sees it: the route TLS handshake
	// when TLSConfig is set, and the cluster credentials (Username and
	// Password) carried in its preamble. Raft gets the connection with
	// the preamble consumed and the group it names. Server.DialRaft opens
	// the other end.
	Raft func(conn net.Conn, group string)

	// NoAdvertise keeps other servers' client URLs out of this server's
	// INFO (and this server's out of theirs).
	NoAdvertise bool

	// ConnectRetries is how many times a route learned by gossip is
	// retried after a failed connect (configured routes are retried
	// forever).
	ConnectRetries int

	// ReconnectDelay is the wait before reconnecting a dropped route and
	// the first wait after a failed connect; it doubles on each failure up
	// to MaxBackoff. 0 = the defaults.
	ReconnectDelay time.Duration
	MaxBackoff     time.Duration

	// Account is the account name used on the wire (RS+, RMSG); "" = $G.
	Account string

	// MaxPayload bounds a message arriving on a route; 0 =
	// DefaultRouteMaxPayload. A larger one closes the route.
	MaxPayload int64
}

func (o *ClusterOptions) withDefaults(srv Options) *ClusterOptions {
	c := *o
	c.Routes = append([]*url.URL(nil), o.Routes...)
	if c.Host == "" {
		c.Host = srv.Host
	}
	if c.Port < 0 {
		c.Port = 0
	}
	if c.AuthTimeout == 0 {
		c.AuthTimeout = DefaultRouteHandshake
	}
	if c.TLSTimeout == 0 {
		c.TLSTimeout = DefaultTLSTimeout
	}
	if c.ReconnectDelay == 0 {
		c.ReconnectDelay = DefaultRouteReconnectDelay
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultRouteMaxBackoff
	}
	if c.MaxBackoff < c.ReconnectDelay {
		c.MaxBackoff = c.ReconnectDelay
	}
	if c.Account == "" {
		c.Account = DefaultRouteAccount
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = DefaultRouteMaxPayload
	}
	return &c
}

// Validate reports the first cluster setting that cannot work.
func (o *ClusterOptions) Validate() error {
	switch {
	case o.Port > 65535:
		return fmt.Errorf("server: cluster: port %d out of range", o.Port)
	case strings.ContainsAny(o.Name, " \t\r\n"):
		return fmt.Errorf("server: cluster: name %q contains spaces", o.Name)
	case o.Name == "_":
		return fmt.Errorf("server: cluster: name %q is reserved", o.Name)
	case strings.ContainsAny(o.Account, " \t\r\n"):
		return fmt.Errorf("server: cluster: account %q contains spaces", o.Account)
	case o.AuthTimeout < 0 || o.TLSTimeout < 0 || o.ReconnectDelay < 0 || o.MaxBackoff < 0:
		return fmt.Errorf("server: cluster: negative timeout or delay")
	case o.ConnectRetries < 0:
		return fmt.Errorf("server: cluster: connect retries %d is negative", o.ConnectRetries)
	case o.MaxPayload < 0:
		return fmt.Errorf("server: cluster: max payload %d is negative", o.MaxPayload)
	case o.Password != "" && o.Username == "":
		return fmt.Errorf("server: cluster: authorization has a password but no user")
	case o.TLSConfig != nil && len(o.TLSConfig.Certificates) == 0 && o.TLSConfig.GetCertificate == nil:
		return fmt.Errorf("server: cluster: TLS configuration has no certificate")
	}
	for _, u := range o.Routes {
		if err := checkRouteURL(u); err != nil {
			return err
		}
	}
	return nil
}

// checkRouteURL accepts nats://host:port (and nats-route://, as gossip
// sends).
func checkRouteURL(u *url.URL) error {
	if u == nil {
		return fmt.Errorf("server: cluster: empty route URL")
	}
	switch u.Scheme {
	case "nats", "nats-route", "tls":
	default:
		return fmt.Errorf("server: cluster: route %q: scheme must be nats://", u.Redacted())
	}
	if u.Hostname() == "" || u.Port() == "" {
		return fmt.Errorf("server: cluster: route %q: want nats://host:port", u.Redacted())
	}
	return nil
}

// ParseRouteURLs parses a comma-separated list of route URLs, as
// nats-server's --routes flag takes them.
func ParseRouteURLs(list string) ([]*url.URL, error) {
	var out []*url.URL
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", s, err)
		}
		if err := checkRouteURL(u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
