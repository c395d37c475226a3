package config

import "time"

// Cluster is the cluster block: routes to the other servers of a cluster
// (nats-server's cluster { name, listen (or host and port), routes,
// authorization, tls }).
type Cluster struct {
	Name   string
	Host   string
	Port   int
	Routes []string // nats://host:port (or tls://host:port) URLs
	// Username and Password (authorization { user, password }) are asked
	// of incoming routes and sent on routes learned by gossip.
	Username, Password string
	// AuthTimeout (authorization { timeout }) bounds an incoming route's
	// handshake; 0 = the server's default.
	AuthTimeout time.Duration
	// TLS is the routes' tls { } block; nil = routes in plain text.
	TLS         *TLS
	NoAdvertise bool
}

func (c *Config) applyCluster(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	cl := &c.Cluster
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "name":
			cl.Name, err = v.str(n)
		case "listen":
			var h string
			h, cl.Port, err = listen(v, n)
			if h != "" {
				cl.Host = h
			}
		case "host", "net":
			cl.Host, err = v.str(n)
		case "port":
			var p int64
			p, err = v.integer(n, RandomPort, 65535)
			cl.Port = int(p)
		case "routes":
			cl.Routes, err = v.strings(n)
		case "no_advertise":
			cl.NoAdvertise, err = v.boolean(n)
		case "authorization":
			err = c.applyClusterAuthorization(n, v)
		case "tls":
			cl.TLS, err = c.parseTLS(secClusterTLS, n, v)
		default:
			var known bool
			if known, err = c.unsupported(secCluster, k, n, v); !known {
				err = unknownField(n, v)
			}
		}
		return err
	})
}

// applyClusterAuthorization reads cluster { authorization { } }: the one
// user and password routes present, and the handshake timeout. Every
// other field is refused: tokens, user lists and callouts as nats-server
// refuses them, the rest because all of this block is route security.
func (c *Config) applyClusterAuthorization(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	cl := &c.Cluster
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "user", "username":
			cl.Username, err = v.str(n)
		case "password", "pass":
			cl.Password, err = v.str(n)
		case "timeout":
			cl.AuthTimeout, err = v.duration(n)
		default:
			var known bool
			if known, err = c.unsupported(secClusterAuth, k, n, v); !known {
				err = v.errorf("%s: not a cluster authorization field jetwal knows (user, password, timeout); refusing to start rather than ignore part of the routes' authentication", n)
			}
		}
		return err
	})
}
