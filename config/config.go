package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/conf"

	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/server/auth"
)

// Config is what a configuration file says. Only fields named in Set were
// given by the file; the others hold zero values.
type Config struct {
	File string // absolute path of the file

	Host       string
	Port       int
	ServerName string
	// Tags are server_tags: trimmed, lower-cased and without duplicates,
	// as nats-server keeps them (stream placement matches them).
	Tags           []string
	MaxPayload     int64
	MaxConnections int
	MaxControlLine int
	MaxPending     int64
	PingInterval   time.Duration
	MaxPingsOut    int
	WriteDeadline  time.Duration

	JetStream JetStream
	Cluster   Cluster // the cluster block: routes

	Auth auth.Options // authorization { }, no_auth_user, the system account's users
	// SystemAccount is system_account (see system.go).
	SystemAccount string
	accounts      map[string]*declaredAccount
	userAt        map[string]pos // where each user name (or nkey) was declared
	// Accounts are the declared accounts (accounts.go); nil when the file
	// declares none, or only the system account in the older form.
	Accounts    []Account
	systemAt    value
	AuthTimeout time.Duration

	TLS *TLS // nil = no tls { } block

	// Websocket is the websocket block (websocket.go); nil = none, or no
	// port in it.
	Websocket *Websocket

	HTTPHost string // monitoring listener
	HTTPPort int

	// LameDuckDuration and LameDuckGrace are lame_duck_duration and
	// lame_duck_grace_period (0 = not given).
	LameDuckDuration, LameDuckGrace time.Duration

	// PortsFileDir is ports_file_dir: where the server writes the ports
	// it listens on, as nats-server does ("" = no ports file).
	PortsFileDir string

	Debug, Trace bool
	LogFile      string

	// Set holds the names of the settings the file gave, by their
	// canonical name (the first name listed for each in fields.go), e.g.
	// "port", "max_payload", "jetstream", "authorization", "tls", "http".
	Set map[string]bool

	Warnings []Warning
}

// JetStream is the jetstream { } block (or jetstream: true).
type JetStream struct {
	Enabled  bool
	StoreDir string
	// MaxMemory and MaxStore bound all memory and file streams; 0 = no
	// limit given.
	MaxMemory, MaxStore int64
	// Sync is sync_interval ("always" or a duration); nil = not given.
	Sync *durable.Policy
	// Domain is the JetStream domain; "" = none.
	Domain string
	// UniqueTag is unique_tag, trimmed and lower-cased: stream placement
	// puts no two replicas on servers sharing the value of the server tag
	// with this prefix; "" = none.
	UniqueTag string
	// Encryption is encryption at rest (encryption.go); Key "" = off.
	Encryption Encryption
}

// Load parses the file at path.
func Load(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Reason: err.Error()}
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, &Error{File: path, Reason: err.Error()}
	}
	m, err := conf.ParseFileWithChecks(abs)
	if err != nil {
		return nil, parseError(abs, err)
	}
	c := &Config{File: abs, Set: make(map[string]bool)}
	if err := c.apply(m, pos{file: abs}); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// apply maps the top level of the file, in file order.
func (c *Config) apply(m map[string]any, at pos) error {
	return eachKey(m, at, func(k string, v value) error {
		f, ok := topLevel[lower(k)]
		if !ok {
			known, err := c.unsupported(secTop, k, k, v)
			if !known {
				return unknownField(k, v)
			}
			return err
		}
		if err := f.apply(c, k, v); err != nil {
			return err
		}
		c.Set[f.canonical] = true
		return nil
	})
}

func (c *Config) warn(v value, format string, args ...any) {
	c.Warnings = append(c.Warnings, Warning{File: v.pos.file, Line: v.pos.line, Col: v.pos.col, Message: fmt.Sprintf(format, args...)})
}

// unknownField refuses a name nats-server v2.15 does not have either, as
// nats-server does: a misspelled block (autorization { }) must not leave
// the server running without what it meant to configure.
func unknownField(n string, v value) error {
	return v.errorf("%s: unknown field", n)
}

func (c *Config) validate() error {
	if err := c.resolveAccounts(); err != nil {
		return err
	}
	if e := c.JetStream.Encryption; e.Key == "" && (e.PrevKey != "" || e.Cipher != "") {
		return &Error{File: c.File, Reason: "jetstream: prev_key or cipher without a key: give the key (key, ek or encryption_key)"}
	}
	if c.Auth.NoAuthUser != "" && len(c.Auth.Users) == 0 {
		return &Error{File: c.File, Reason: fmt.Sprintf("no_auth_user %q: there is no users list", c.Auth.NoAuthUser)}
	}
	if err := c.validateWebsocket(); err != nil {
		return err
	}
	if _, err := auth.New(c.Auth); err != nil {
		return &Error{File: c.File, Reason: err.Error()}
	}
	return nil
}

// RandomPort is a port of -1: any free port, as nats-server reads it
// (test harnesses start servers this way and learn the ports from the
// ports file, ports_file_dir).
const RandomPort = -1

// listen parses "host:port", ":port" or "port"; the port may be
// RandomPort.
func listen(v value, name string) (host string, port int, err error) {
	switch x := v.v.(type) {
	case int64:
		if x < RandomPort || x > 65535 {
			return "", 0, v.errorf("%s: port %d out of range", name, x)
		}
		return "", int(x), nil
	case string:
		h, p, err := net.SplitHostPort(x)
		if err != nil {
			return "", 0, v.errorf("%s: %q is not host:port", name, x)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < RandomPort || n > 65535 {
			return "", 0, v.errorf("%s: bad port in %q", name, x)
		}
		return h, n, nil
	}
	return "", 0, v.errorf("%s: expected host:port or a port, got %s", name, describe(v.v))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
