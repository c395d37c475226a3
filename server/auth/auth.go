package auth

import (
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// ErrAuthentication is the error every failed login wraps; the text after
// it says why, for the server log.
var ErrAuthentication = errors.New("authentication error")

// User is a user name and password. A password starting with "$2a$",
// "$2b$" or "$2y$" is a bcrypt hash (as made by `nats server passwd`).
type User struct {
	Username    string
	Password    string
	Permissions *Permissions // nil = Options.Permissions
	Account     string       // the user's account; "" = the global account
	// ConnectionTypes, when not empty, are the only kinds of connection
	// the user may log in on (allowed_connection_types: ConnStandard,
	// ConnWebsocket, ...; upper case).
	ConnectionTypes []string
}

// NkeyUser is a user who proves it holds the private key of Nkey (a public
// user key, "U...") by signing the server's nonce.
type NkeyUser struct {
	Nkey            string
	Permissions     *Permissions // nil = Options.Permissions
	Account         string       // the user's account; "" = the global account
	ConnectionTypes []string     // as User's
}

// Connection types (nats-server's allowed_connection_types names) of the
// two listeners jetwal has.
const (
	ConnStandard  = "STANDARD"
	ConnWebsocket = "WEBSOCKET"
)

// Options configure an Authenticator. Exactly one way of logging in is
// allowed at a time for Token and Username, as in nats-server: a token
// excludes users, a single Username excludes the Users list. Nkeys may be
// combined with Users.
type Options struct {
	Token       string // a single shared secret (may be bcrypt-hashed)
	Username    string // a single user (authorization { user, password })
	Password    string
	Users       []User
	Nkeys       []NkeyUser
	NoAuthUser  string       // a client sending no credentials logs in as this user from Users
	Permissions *Permissions // default permissions (authorization { permissions })
	// MapCerts logs a client in by its verified TLS certificate: the user
	// whose name equals one of the certificate's e-mail addresses, DNS
	// names or its subject (RFC 2253), as tls { verify_and_map }.
	MapCerts bool
}

// Enabled reports whether o asks for any authentication.
func (o Options) Enabled() bool {
	return o.Token != "" || o.Username != "" || len(o.Users) > 0 || len(o.Nkeys) > 0 || o.MapCerts
}

// Credentials are what a client presented: the CONNECT fields and, with
// TLS, its verified certificate chain.
type Credentials struct {
	User, Password, Token string
	Nkey, Sig             string // public nkey and signature of Nonce
	Nonce                 []byte // the nonce the server sent in INFO
	PeerCerts             []*x509.Certificate
	// ConnectionType is the listener the client came in on (ConnStandard
	// or ConnWebsocket; "" = ConnStandard), checked against a user's
	// ConnectionTypes.
	ConnectionType string
}

func (c Credentials) empty() bool {
	return c.User == "" && c.Password == "" && c.Token == "" && c.Nkey == "" && c.Sig == ""
}

// Identity is an authenticated client.
type Identity struct {
	User        string       // user name, nkey, or "" for a token
	Permissions *Permissions // nil = no restriction
	Account     string       // the account the client belongs to; "" = the global account
}

// Authenticator checks credentials against a fixed set of users. It is
// safe for concurrent use and never changes after New.
type Authenticator struct {
	opts  Options
	users map[string]*User
	nkeys map[string]*NkeyUser
}

// New checks o and returns an Authenticator.
func New(o Options) (*Authenticator, error) {
	a := &Authenticator{opts: o, users: make(map[string]*User), nkeys: make(map[string]*NkeyUser)}
	if o.Token != "" && (o.Username != "" || len(o.Users) > 0) {
		return nil, errors.New("auth: a token cannot be combined with users")
	}
	if o.Username != "" && len(o.Users) > 0 {
		return nil, errors.New("auth: a single user cannot be combined with a users list")
	}
	if err := o.Permissions.Validate(); err != nil {
		return nil, fmt.Errorf("auth: default permissions: %w", err)
	}
	if o.Username != "" {
		a.users[o.Username] = &User{Username: o.Username, Password: o.Password}
	}
	for i := range o.Users {
		u := o.Users[i]
		if u.Username == "" {
			return nil, fmt.Errorf("auth: user %d has no name", i+1)
		}
		if _, dup := a.users[u.Username]; dup {
			return nil, fmt.Errorf("auth: duplicate user %q", u.Username)
		}
		if err := u.Permissions.Validate(); err != nil {
			return nil, fmt.Errorf("auth: user %q: %w", u.Username, err)
		}
		a.users[u.Username] = &u
	}
	for i := range o.Nkeys {
		u := o.Nkeys[i]
		if !nkeys.IsValidPublicUserKey(u.Nkey) {
			return nil, fmt.Errorf("auth: %q is not a public user nkey", u.Nkey)
		}
		if _, dup := a.nkeys[u.Nkey]; dup {
			return nil, fmt.Errorf("auth: duplicate nkey %q", u.Nkey)
		}
		if err := u.Permissions.Validate(); err != nil {
			return nil, fmt.Errorf("auth: nkey %q: %w", u.Nkey, err)
		}
		a.nkeys[u.Nkey] = &u
	}
	if o.NoAuthUser != "" {
		if _, ok := a.users[o.NoAuthUser]; !ok || o.Username != "" {
			return nil, fmt.Errorf("auth: no_auth_user %q is not in the users list", o.NoAuthUser)
		}
	}
	return a, nil
}

// NeedsNonce reports whether INFO must carry a nonce (nkey users exist).
func (a *Authenticator) NeedsNonce() bool { return len(a.nkeys) > 0 }

// Authenticate checks c. The error wraps ErrAuthentication and names the
// user (never the secret) for the log.
func (a *Authenticator) Authenticate(c Credentials) (*Identity, error) {
	id, types, err := a.identify(c)
	if err != nil {
		return nil, err
	}
	if len(types) > 0 {
		ct := c.ConnectionType
		if ct == "" {
			ct = ConnStandard
		}
		if !slices.Contains(types, ct) {
			return nil, fmt.Errorf("%w: user %q: connection type %s not allowed", ErrAuthentication, id.User, ct)
		}
	}
	return id, nil
}

// identify finds who c is, and the connection types that user is
// limited to.
func (a *Authenticator) identify(c Credentials) (*Identity, []string, error) {
	switch {
	case a.opts.MapCerts && len(c.PeerCerts) > 0:
		return a.byCert(c.PeerCerts[0])
	case a.opts.MapCerts:
		return nil, nil, fmt.Errorf("%w: no client certificate to map", ErrAuthentication)
	case c.Nkey != "" && len(a.nkeys) > 0:
		return a.byNkey(c)
	case a.opts.Token != "":
		if c.Token == "" {
			return nil, nil, fmt.Errorf("%w: no token", ErrAuthentication)
		}
		if !passwordMatches(a.opts.Token, c.Token) {
			return nil, nil, fmt.Errorf("%w: bad token", ErrAuthentication)
		}
		return &Identity{Permissions: a.opts.Permissions}, nil, nil
	case c.empty() && a.opts.NoAuthUser != "":
		u := a.users[a.opts.NoAuthUser]
		return &Identity{User: u.Username, Permissions: a.perms(u.Permissions), Account: u.Account}, u.ConnectionTypes, nil
	case c.User != "":
		u, ok := a.users[c.User]
		if !ok {
			return nil, nil, fmt.Errorf("%w: unknown user %q", ErrAuthentication, c.User)
		}
		if !passwordMatches(u.Password, c.Password) {
			return nil, nil, fmt.Errorf("%w: bad password for user %q", ErrAuthentication, c.User)
		}
		return &Identity{User: u.Username, Permissions: a.perms(u.Permissions), Account: u.Account}, u.ConnectionTypes, nil
	}
	return nil, nil, fmt.Errorf("%w: no credentials", ErrAuthentication)
}

func (a *Authenticator) perms(p *Permissions) *Permissions {
	if p == nil {
		return a.opts.Permissions
	}
	return p
}

func (a *Authenticator) byNkey(c Credentials) (*Identity, []string, error) {
	u, ok := a.nkeys[c.Nkey]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown nkey %q", ErrAuthentication, c.Nkey)
	}
	sig, err := base64.RawURLEncoding.DecodeString(c.Sig)
	if err != nil {
		sig, err = base64.StdEncoding.DecodeString(c.Sig)
	}
	if err != nil || len(c.Nonce) == 0 {
		return nil, nil, fmt.Errorf("%w: nkey %q: malformed signature", ErrAuthentication, c.Nkey)
	}
	pub, err := nkeys.FromPublicKey(c.Nkey)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: nkey %q: %v", ErrAuthentication, c.Nkey, err)
	}
	if err := pub.Verify(c.Nonce, sig); err != nil {
		return nil, nil, fmt.Errorf("%w: nkey %q: signature does not verify", ErrAuthentication, c.Nkey)
	}
	return &Identity{User: u.Nkey, Permissions: a.perms(u.Permissions), Account: u.Account}, u.ConnectionTypes, nil
}

// byCert maps a verified certificate to a user, trying its e-mail
// addresses, DNS names, URIs and then its RFC 2253 subject.
func (a *Authenticator) byCert(cert *x509.Certificate) (*Identity, []string, error) {
	var names []string
	names = append(names, cert.EmailAddresses...)
	names = append(names, cert.DNSNames...)
	for _, u := range cert.URIs {
		names = append(names, u.String())
	}
	names = append(names, cert.Subject.String())
	for _, n := range names {
		if u, ok := a.users[n]; ok {
			return &Identity{User: u.Username, Permissions: a.perms(u.Permissions), Account: u.Account}, u.ConnectionTypes, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: no user for certificate %q", ErrAuthentication, cert.Subject.String())
}

// IsBcrypt reports whether s looks like a bcrypt hash.
func IsBcrypt(s string) bool {
	return strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")
}

// passwordMatches compares a configured secret (plain or bcrypt) with what
// the client sent, in constant time for plain secrets.
func passwordMatches(configured, given string) bool {
	if IsBcrypt(configured) {
		return bcrypt.CompareHashAndPassword([]byte(configured), []byte(given)) == nil
	}
	return subtle.ConstantTimeCompare([]byte(configured), []byte(given)) == 1
}
