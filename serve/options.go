package serve

import (
	"cmp"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// Options is everything a server is made of. The zero value of every
// field means its default: a core server on server.Options' defaults,
// without JetStream, monitoring or accounts.
type Options struct {
	// Server configures the NATS core: listen address, limits,
	// authentication (Server.Auth), TLS, and routes (Server.Cluster). Its
	// Accounts and SystemAccount are set from the fields below.
	Server server.Options

	// JetStream turns JetStream on, with its store configured by Store.
	JetStream bool
	Store     Store

	// Accounts are the configuration file's accounts; nil runs the global
	// account $G alone (JetStream in $G). SystemAccount names the system
	// account, where the $SYS requests are served; "" = nats-server's
	// default "$SYS" (with no users unless Server.Auth puts some there).
	Accounts      []config.Account
	SystemAccount string

	// HTTPPort serves the monitoring endpoints on HTTPHost (default
	// Server.Host); 0 = off, -1 = a random port (MonitorAddr tells which).
	HTTPHost string
	HTTPPort int

	// PortsFile, when set, is where Start writes the addresses the server
	// listens on (clients, monitoring, routes, WebSocket), nats-server's
	// ports file (JSON: {"nats": [...], "monitoring": [...], "cluster":
	// [...], "websocket": ["ws://..."]}), so a
	// program that started it with random ports (-1) learns them. Shutdown
	// removes it.
	PortsFile string

	// LameDuckGrace and LameDuckDuration shape LameDuck: the wait before
	// clients are closed, and the time they are closed over. Zero means
	// nats-server's defaults (10 s and 2 min).
	LameDuckGrace, LameDuckDuration time.Duration

	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// ProfPort serves Go's profiles (net/http/pprof) on 127.0.0.1:ProfPort
	// once the server is ready, as nats-server's --profile; 0 = off.
	// Loopback only: profiles show memory contents.
	ProfPort int

	// LogFile is where the program that built Logger writes it
	// (nats-server's logfile, jetwal serve's -l); New does not open it.
	LogFile string

	// What the startup report shows: the authentication Server.Auth was
	// built from (never a secret), the configuration file, its warnings
	// and when it was read, and jetwal's own version.
	Auth       auth.Options
	ConfigFile string
	Warnings   []config.Warning
	Loaded     time.Time
	Version    string
}

// Store configures JetStream's storage.
type Store struct {
	// Dir is the store directory; streams live in Dir/jetstream. ""
	// = DefaultStoreDir, a directory of this user in the temp directory.
	Dir string
	// Sync is the fsync policy of file streams; the zero value syncs
	// every write (durable.Always).
	Sync durable.Policy
	// MaxMemory and MaxStore bound all memory and file streams; 0 = no
	// limit.
	MaxMemory, MaxStore int64
	// Domain is the JetStream domain; "" = none.
	Domain string
	// UniqueTag is the unique tag prefix of replicated streams' placement
	// (jetstream { unique_tag }): no two servers of a stream share the
	// value of their tag with this prefix; "" = none.
	UniqueTag string
	// Encryption encrypts and authenticates what file streams write
	// (nats-server's jetstream { key, cipher, prev_key }); the zero value
	// stores in the clear.
	Encryption crypt.Config
}

// DefaultStoreDir is the store used when Store.Dir is empty:
// jetwal/jetstream in the OS temp directory.
func DefaultStoreDir() string { return filepath.Join(os.TempDir(), "jetwal", "jetstream") }

// nats-server's lame duck defaults (lame_duck_grace_period,
// lame_duck_duration).
const (
	DefaultLameDuckGrace    = 10 * time.Second
	DefaultLameDuckDuration = 2 * time.Minute
)

// defaultSystemAccount is nats-server's system account when none is named.
const defaultSystemAccount = "$SYS"

// systemAccount names the system account.
func (o *Options) systemAccount() string { return cmp.Or(o.SystemAccount, defaultSystemAccount) }

// ResolveAccounts sets Server.Accounts and Server.SystemAccount from
// Accounts and SystemAccount. As with nats-server there is always a system account: without
// an accounts block it is SystemAccount, or "$SYS" with no users. New
// calls it; calling it again changes nothing.
func (o *Options) ResolveAccounts() error {
	sys := o.systemAccount()
	if o.Accounts == nil {
		o.Server.Accounts, o.Server.SystemAccount = []string{sys}, sys
		return nil
	}
	names := make([]string, 0, len(o.Accounts)+1)
	hasSys := false
	for _, a := range o.Accounts {
		names = append(names, a.Name)
		hasSys = hasSys || a.Name == sys
	}
	if !hasSys {
		names = append(names, sys)
	}
	o.Server.Accounts, o.Server.SystemAccount = names, sys
	return nil
}

// withDefaults returns o with its defaults filled in.
func (o Options) withDefaults() Options {
	if o.Store.Dir == "" {
		o.Store.Dir = DefaultStoreDir()
	} else if abs, err := filepath.Abs(o.Store.Dir); err == nil {
		o.Store.Dir = abs
	}
	if o.HTTPHost == "" {
		o.HTTPHost = cmp.Or(o.Server.Host, server.DefaultHost)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LameDuckGrace <= 0 {
		o.LameDuckGrace = DefaultLameDuckGrace
	}
	if o.LameDuckDuration <= 0 {
		o.LameDuckDuration = DefaultLameDuckDuration
	}
	if o.Loaded.IsZero() {
		o.Loaded = time.Now()
	}
	o.Server.Logger = o.Logger
	return o
}
