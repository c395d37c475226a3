package config

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jetwal/jetwal/server/auth"
)

// Websocket is the websocket block (nats-server's websocket { }, also
// spelled ws): a listener for WebSocket clients. Without a port it opens
// nothing, as in nats-server.
type Websocket struct {
	Host             string
	Port             int // RandomPort = any free port; 0 = no listener
	NoTLS            bool
	TLS              *TLS // tls { }; required unless NoTLS
	Compression      bool
	SameOrigin       bool
	AllowedOrigins   []string
	HandshakeTimeout time.Duration
	PingInterval     time.Duration
	Headers          [][2]string // added to the upgrade answer, in file order
	// The websocket authorization override: when any of Username, Token
	// or NoAuthUser is set, WebSocket clients log in with these instead of
	// the top-level user, password, token and no_auth_user (users and
	// nkeys still apply), as in nats-server.
	Username, Password, Token string
	NoAuthUser                string
	AuthTimeout               time.Duration

	at value // the block, for errors found after it is read
}

// AuthOverride reports whether the block overrides authentication.
func (w *Websocket) AuthOverride() bool {
	return w.Username != "" || w.Token != "" || w.NoAuthUser != ""
}

// connectionTypeNames are nats-server's connection type names
// (allowed_connection_types).
var connectionTypeNames = []string{"STANDARD", "WEBSOCKET", "LEAFNODE", "LEAFNODE_WS", "MQTT", "MQTT_WS", "IN_PROCESS"}

func (c *Config) applyWebsocket(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	w := &Websocket{at: v}
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "listen":
			var h string
			h, w.Port, err = listen(v, n)
			if h != "" {
				w.Host = h
			}
		case "port":
			var p int64
			p, err = v.integer(n, RandomPort, 65535)
			w.Port = int(p)
		case "host", "net":
			w.Host, err = v.str(n)
		case "no_tls":
			w.NoTLS, err = v.boolean(n)
		case "tls":
			w.TLS, err = c.parseTLS(secWSTLS, n, v)
		case "compress", "compression":
			w.Compression, err = v.boolean(n)
		case "same_origin":
			w.SameOrigin, err = v.boolean(n)
		case "allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin":
			if w.AllowedOrigins, err = v.strings(n); err == nil {
				err = checkOrigins(n, v, w.AllowedOrigins)
			}
		case "handshake_timeout":
			w.HandshakeTimeout, err = v.duration(n)
		case "ping_interval":
			if w.PingInterval, err = v.duration(n); err == nil && w.PingInterval <= 0 {
				err = v.errorf("%s: must be positive", n)
			}
		case "headers":
			w.Headers, err = wsHeaders(n, v)
		case "authorization", "authentication":
			err = c.applyWebsocketAuth(w, n, v)
		case "no_auth_user":
			w.NoAuthUser, err = v.str(n)
		default:
			var known bool
			if known, err = c.unsupported(secWebsocket, k, n, v); !known {
				err = unknownField(n, v)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if w.Port == 0 {
		c.warn(v, "%s: no port: no websocket listener is opened (as in nats-server)", name)
		return nil
	}
	if w.TLS == nil && !w.NoTLS {
		return v.errorf("%s: websocket requires TLS configuration: give tls { cert_file, key_file } or no_tls: true", name)
	}
	c.Websocket = w
	return nil
}

// applyWebsocketAuth reads websocket { authorization { } }: one user and
// password or a token, and the authentication timeout.
func (c *Config) applyWebsocketAuth(w *Websocket, name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	return eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		switch lower(k) {
		case "user", "username":
			w.Username, err = v.str(n)
		case "pass", "password":
			w.Password, err = v.str(n)
		case "token":
			w.Token, err = v.str(n)
		case "timeout":
			w.AuthTimeout, err = v.duration(n)
		default:
			err = v.errorf("%s: not a websocket authorization field (user, password, token, timeout); refusing to start rather than ignore part of the WebSocket clients' authentication", n)
		}
		return err
	})
}

// validateWebsocket checks the websocket block against the rest of the
// file, as nats-server does.
func (c *Config) validateWebsocket() error {
	w := c.Websocket
	if w == nil {
		return nil
	}
	if w.Username != "" && w.Token != "" {
		return w.at.errorf("websocket.authorization: a user cannot be combined with a token")
	}
	if len(c.Auth.Users) > 0 || len(c.Auth.Nkeys) > 0 {
		if w.Username != "" {
			return w.at.errorf("websocket authentication username not compatible with presence of users/nkeys")
		}
		if w.Token != "" {
			return w.at.errorf("websocket authentication token not compatible with presence of users/nkeys")
		}
	}
	if u := w.NoAuthUser; u != "" && !slices.ContainsFunc(c.Auth.Users, func(x auth.User) bool { return x.Username == u }) {
		return w.at.errorf("websocket.no_auth_user %q: not in the users list", u)
	}
	return nil
}

// checkOrigins refuses an allowed origin nats-server refuses: it must be
// an absolute http or https URL with a host.
func checkOrigins(name string, v value, list []string) error {
	for _, o := range list {
		u, err := url.ParseRequestURI(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return v.errorf("%s: %q: allowed origins must be absolute http or https URLs with a host", name, o)
		}
	}
	return nil
}

// wsHeaders reads headers { Name: value }, refusing the names the upgrade
// answer sets itself (nats-server's list) and line breaks.
func wsHeaders(name string, v value) ([][2]string, error) {
	m, err := v.block(name)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	err = eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		s, err := v.str(n)
		if err != nil {
			return err
		}
		lk := lower(k)
		switch {
		case lk == "host" || lk == "content-length" || lk == "connection" || lk == "upgrade" || lk == "nats-no-masking":
			return v.errorf("%s: header %q not allowed", n, k)
		case strings.HasPrefix(lk, "sec-websocket-"):
			return v.errorf("%s: header %q: the \"Sec-WebSocket-\" prefix is not allowed", n, k)
		case strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(s, "\r\n"):
			return v.errorf("%s: a header name is a token and its value one line", n)
		}
		out = append(out, [2]string{k, s})
		return nil
	})
	return out, err
}

// connectionTypes reads allowed_connection_types: nats-server's names,
// upper-cased. jetwal serves STANDARD and WEBSOCKET; a user limited to
// other types cannot log in at all, as on a nats-server without those
// listeners.
func connectionTypes(name string, v value) ([]string, error) {
	list, err := v.strings(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		t := strings.ToUpper(strings.TrimSpace(s))
		if !slices.Contains(connectionTypeNames, t) {
			return nil, v.errorf("%s: unknown connection type %q (known: %s)", name, s, strings.Join(connectionTypeNames, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}
