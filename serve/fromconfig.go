package serve

// FromConfig: a configuration file with a command line on top, as
// `jetwal serve -c FILE --flag ...` runs (nats-server's precedence: every
// flag given replaces the file's setting).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/server/auth"
)

// Flags are the settings of `jetwal serve`'s command line that a
// configuration file also has. Each holds the flag's value (its default
// when not given); Given names the ones the command line gave, by the
// name in the field's comment, and only those replace the file's.
type Flags struct {
	Host           string        // "host"
	Port           int           // "port"
	ServerName     string        // "server_name"
	MaxPayload     int64         // "max_payload"
	MaxPending     int64         // "max_pending"
	MaxConnections int           // "max_connections"
	MaxControlLine int           // "max_control_line"
	PingInterval   time.Duration // "ping_interval"
	MaxPingsOut    int           // "ping_max"
	WriteDeadline  time.Duration // "write_deadline"
	Debug, Trace   bool          // "debug", "trace"
	LogFile        string        // "log"
	PortsFileDir   string        // "ports_file_dir"
	HTTPPort       int           // "http_port"

	JetStream bool           // "jetstream"
	StoreDir  string         // "store_dir"
	Sync      durable.Policy // "sync"

	// User, Pass and Token ("user", "pass", "auth") replace the file's
	// authorization settings of the same name.
	User, Pass, Token string
	// TLS or TLSVerify replace the file's tls block with one of TLSCert,
	// TLSKey and TLSCA ("tlscert", "tlskey", "tlscacert"), which mean
	// nothing without one of them.
	TLS, TLSVerify         bool
	TLSCert, TLSKey, TLSCA string
	// ClusterListen ("cluster", nats://host:port), Routes ("routes", a
	// comma-separated list of URLs) and ClusterName ("cluster_name").
	ClusterListen, Routes, ClusterName string

	Given map[string]bool
}

// FromConfig returns the options of a server configured by the file
// ("" = none) with the flags f on top. It refuses what the server could
// not run as configured (a file that does not load, bad TLS files,
// accounts it cannot serve, a bad cluster block or route): every error is
// one of the configuration. PortsFile is named after this process, as
// nats-server names it.
func FromConfig(file string, f Flags) (Options, error) {
	o := Options{ConfigFile: file}
	var cfg *config.Config
	if file != "" {
		c, err := config.Load(file)
		if err != nil {
			return o, err
		}
		cfg = c
	}
	given := func(names ...string) bool {
		for _, n := range names {
			if f.Given[n] {
				return true
			}
		}
		return false
	}
	o.HTTPPort = f.HTTPPort
	var authTimeout time.Duration
	var tlsConf *config.TLS
	var fileCluster *config.Cluster
	var fileWS *config.Websocket
	if cfg != nil {
		o.Warnings = cfg.Warnings
		o.SystemAccount = cfg.SystemAccount
		// The file's setting (by its key) unless the flag was given.
		over(cfg, f.Given, "port", "port", &f.Port, cfg.Port)
		over(cfg, f.Given, "host", "host", &f.Host, cfg.Host)
		over(cfg, f.Given, "server_name", "server_name", &f.ServerName, cfg.ServerName)
		o.Server.Tags = cfg.Tags // server_tags: no flag
		over(cfg, f.Given, "max_payload", "max_payload", &f.MaxPayload, cfg.MaxPayload)
		over(cfg, f.Given, "max_pending", "max_pending", &f.MaxPending, cfg.MaxPending)
		over(cfg, f.Given, "max_connections", "max_connections", &f.MaxConnections, cfg.MaxConnections)
		over(cfg, f.Given, "max_control_line", "max_control_line", &f.MaxControlLine, cfg.MaxControlLine)
		over(cfg, f.Given, "ping_interval", "ping_interval", &f.PingInterval, cfg.PingInterval)
		over(cfg, f.Given, "ping_max", "ping_max", &f.MaxPingsOut, cfg.MaxPingsOut)
		over(cfg, f.Given, "write_deadline", "write_deadline", &f.WriteDeadline, cfg.WriteDeadline)
		over(cfg, f.Given, "debug", "debug", &f.Debug, cfg.Debug)
		over(cfg, f.Given, "trace", "trace", &f.Trace, cfg.Trace)
		over(cfg, f.Given, "logfile", "log", &f.LogFile, cfg.LogFile)
		over(cfg, f.Given, "ports_file_dir", "ports_file_dir", &f.PortsFileDir, cfg.PortsFileDir)
		o.LameDuckDuration, o.LameDuckGrace = cfg.LameDuckDuration, cfg.LameDuckGrace
		over(cfg, f.Given, "jetstream", "jetstream", &f.JetStream, cfg.JetStream.Enabled)
		if (cfg.Set["jetstream"] || cfg.Set["store_dir"]) && cfg.JetStream.StoreDir != "" && !given("store_dir") {
			f.StoreDir = cfg.JetStream.StoreDir
		}
		if !given("sync") && cfg.JetStream.Sync != nil {
			f.Sync = *cfg.JetStream.Sync
		}
		o.Store.MaxMemory, o.Store.MaxStore = cfg.JetStream.MaxMemory, cfg.JetStream.MaxStore
		if e := cfg.JetStream.Encryption; e.Key != "" {
			ci, err := crypt.ParseCipher(e.Cipher)
			if err != nil {
				return o, err
			}
			o.Store.Encryption = crypt.Config{Key: e.Key, PrevKey: e.PrevKey, Cipher: ci}
		}
		o.Store.Domain = cfg.JetStream.Domain
		o.Store.UniqueTag = cfg.JetStream.UniqueTag
		over(cfg, f.Given, "http", "http_port", &o.HTTPPort, cfg.HTTPPort)
		o.HTTPHost = cfg.HTTPHost
		o.Auth = cfg.Auth
		if cfg.MultiAccount() {
			o.Accounts = cfg.Accounts
		}
		authTimeout = cfg.AuthTimeout
		tlsConf = cfg.TLS
		if cfg.Set["cluster"] {
			fileCluster = &cfg.Cluster
		}
		fileWS = cfg.Websocket
	}
	var err error
	if o.Server.Cluster, err = clusterOptions(f, given, fileCluster); err != nil {
		return o, err
	}

	// Security flags, as nats-server's: --user/--pass/--auth replace those
	// settings of the file; --tls or --tlsverify replace its tls block.
	if given("user") {
		o.Auth.Username = f.User
	}
	if given("pass") {
		o.Auth.Password = f.Pass
	}
	if given("auth") {
		o.Auth.Token = f.Token
	}
	if f.TLS || f.TLSVerify {
		tlsConf = &config.TLS{CertFile: f.TLSCert, KeyFile: f.TLSKey, CAFile: f.TLSCA, Verify: f.TLSVerify}
		o.Auth.MapCerts = false
	} else if given("tlscert", "tlskey", "tlscacert") {
		return o, errors.New("--tlscert, --tlskey and --tlscacert need --tls or --tlsverify")
	}
	o.JetStream = f.JetStream
	if err := o.ResolveAccounts(); err != nil {
		return o, err
	}
	if o.Auth.Enabled() {
		a, err := auth.New(o.Auth)
		if err != nil {
			return o, err
		}
		o.Server.Auth = a
		o.Server.AuthTimeout = authTimeout
	}
	if fileWS != nil {
		if o.Server.Websocket, err = websocketOptions(fileWS, o.Auth); err != nil {
			return o, err
		}
	}
	if tlsConf != nil {
		tc, err := tlsConf.Config()
		if err != nil {
			return o, err
		}
		o.Server.TLSConfig = tc
		o.Server.TLSHandshakeFirst = tlsConf.HandshakeFirst
		o.Server.TLSTimeout = tlsConf.Timeout
	}

	if f.StoreDir == "" {
		f.StoreDir = DefaultStoreDir()
	}
	if abs, err := filepath.Abs(f.StoreDir); err == nil {
		f.StoreDir = abs
	}
	if o.HTTPHost == "" {
		o.HTTPHost = f.Host
	}
	o.Server.Host = f.Host
	o.Server.Port = f.Port
	o.Server.MaxPayload = int32(f.MaxPayload)
	o.Server.MaxConnections = f.MaxConnections
	o.Server.MaxControlLine = f.MaxControlLine
	o.Server.MaxPending = f.MaxPending
	o.Server.PingInterval = f.PingInterval
	o.Server.MaxPingsOut = f.MaxPingsOut
	o.Server.WriteDeadline = f.WriteDeadline
	o.Server.ServerName = f.ServerName
	o.Server.Debug = f.Debug
	o.Server.Trace = f.Trace
	o.Store.Dir, o.Store.Sync = f.StoreDir, f.Sync
	o.LogFile = f.LogFile
	if f.PortsFileDir != "" {
		o.PortsFile = filepath.Join(f.PortsFileDir, fmt.Sprintf("%s_%d.ports", filepath.Base(os.Args[0]), os.Getpid()))
	}
	return o, nil
}

// over sets *dst to v, the file's setting of key, when the file sets it
// and the command line did not give flag (nats-server's precedence).
func over[T any](cfg *config.Config, given map[string]bool, key, flag string, dst *T, v T) {
	if cfg.Set[key] && !given[flag] {
		*dst = v
	}
}
