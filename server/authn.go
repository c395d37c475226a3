package server

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"regexp"
	"time"

	"github.com/jetwal/jetwal/server/auth"
)

// Authentication. When Options.Auth is set, INFO carries
// "auth_required":true (and a "nonce" when the authenticator has nkey
// users), the first operation must be CONNECT, and its credentials are
// checked before anything else in it. A failure is logged with the client's
// address (never the secret), answered with -ERR 'Authorization Violation'
// after a delay that grows with repeated failures from the same address
// (auth.Throttle), and closes the connection. A client that has not
// authenticated within AuthTimeout gets -ERR 'Authentication Timeout'.

// Authenticator checks the credentials of a CONNECT. *auth.Authenticator
// implements it.
type Authenticator interface {
	Authenticate(auth.Credentials) (*auth.Identity, error)
	NeedsNonce() bool
}

// DefaultAuthTimeout is nats-server's: a client must send its CONNECT
// within 2 s when authentication is required.
const DefaultAuthTimeout = 2 * time.Second

// -ERR texts of nats-server for authentication.
const (
	textAuthViolation = "Authorization Violation"
	textAuthTimeout   = "Authentication Timeout"
)

// nonceLen is the number of random bytes in a nonce (nats-server's).
const nonceLen = 11

func newNonce() string {
	var b [nonceLen]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// startAuthTimer arms the authentication timeout for a new client.
func (c *client) startAuthTimer() {
	if c.authn == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return
	}
	d := c.srv.opts.AuthTimeout
	if c.ws != nil {
		d = c.srv.opts.Websocket.AuthTimeout
	}
	c.mu.authTimer = time.AfterFunc(d, func() {
		if !c.authed.Load() && c.close(closeAuthTimeout, textAuthTimeout) {
			c.srv.logger.Debug("authentication timeout", "cid", c.id, "addr", c.addr)
		}
	})
}

func (c *client) stopAuthTimer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.authTimer != nil {
		c.mu.authTimer.Stop()
	}
}

// authenticate checks the first CONNECT's credentials; on success it
// installs the user's permissions. It reports whether the client may go
// on; on failure the connection is being closed.
func (c *client) authenticate(o *connectOpts) bool {
	creds := auth.Credentials{
		User: o.User, Password: o.Pass, Token: o.Token,
		Nkey: o.Nkey, Sig: o.Sig, Nonce: []byte(c.nonce),
	}
	conn, connType := c.conn, auth.ConnStandard
	if c.ws != nil {
		conn, connType = c.ws.NetConn(), auth.ConnWebsocket
	}
	creds.ConnectionType = connType
	if tc, ok := conn.(*tls.Conn); ok {
		creds.PeerCerts = tc.ConnectionState().PeerCertificates
	}
	o.Pass, o.Token, o.Sig = "", "", "" // keep no secret on the connection
	id, err := c.authn.Authenticate(creds)
	var acc *Account
	if err == nil {
		if acc = c.srv.Account(id.Account); acc == nil {
			err = fmt.Errorf("%w: user %q: account %q does not exist", auth.ErrAuthentication, id.User, id.Account)
		}
	}
	if err != nil {
		c.srv.logger.Error("authentication error", "cid", c.id, "addr", c.addr, "reason", err.Error())
		if d := c.srv.authThrottle.Failed(c.ip); d > 0 {
			c.stopAuthTimer() // the answer is Authorization Violation, however long it waits
			time.Sleep(d)
		}
		c.closeFromReader(closeAuthViolation, textAuthViolation)
		return false
	}
	c.srv.authThrottle.Succeeded(c.ip)
	c.user = id.User
	c.identityPerms = id.Permissions
	c.acc.Store(acc)
	if id.Permissions != nil {
		c.perms.Store(newClientPerms(id.Permissions))
	}
	c.authed.Store(true)
	c.stopAuthTimer()
	return true
}

// authViolation closes a client that sent something other than CONNECT
// before authenticating.
func (c *client) authViolation(op opcode) {
	c.srv.logger.Error("authentication error", "cid", c.id, "addr", c.addr, "reason", op.String()+" before CONNECT")
	c.closeFromReader(closeAuthViolation, textAuthViolation)
}

// redactRE finds the secret values of a CONNECT line for traces.
var redactRE = regexp.MustCompile(`("(?:pass|auth_token|sig)"\s*:\s*")(?:[^"\\]|\\.)*(")`)

// redactConnect hides passwords, tokens and signatures in a CONNECT line,
// as nats-server's traces do.
func redactConnect(line []byte) string {
	return redactRE.ReplaceAllString(string(line), "${1}[REDACTED]${2}")
}
