package serve

// CommandLine: `jetwal serve`'s flags (nats-server's names) parsed and
// merged with the configuration file by FromConfig.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/server"
)

// CommandLine is a parsed `jetwal serve` command line: the server's
// Options (the configuration file with the flags on top), and what only
// the command does with them.
type CommandLine struct {
	Options
	Args     []string // the command line, parsed again on reload
	TestOnly bool     // -t: check the configuration and exit
	Signal   string   // --signal: send a signal to a running server instead
}

// ConfigError is a problem with the configuration file or the security
// settings (jetwal exits with status 1 for it; 2 is for bad usage).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// ParseCommandLine parses the arguments of `jetwal serve` (after the
// subcommand name), printing usage and flag errors to stderr, and loads
// the configuration file they name (unless --signal is given). version is
// jetwal's own, for the startup report. -h returns flag.ErrHelp; a bad
// configuration file a ConfigError; any other error is bad usage.
func ParseCommandLine(args []string, version string, stderr io.Writer) (*CommandLine, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f Flags
	var configFile, maxPayload, maxPending, syncFlag, signalSpec string
	var dv, testConfig bool
	var profPort int
	// Each flag has the names nats-server gives it; key is the one
	// Flags.Given knows it by (the last name, but "host").
	key := map[string]string{"a": "host", "addr": "host", "net": "host"}
	names := func(names []string) []string {
		for _, n := range names {
			if key[n] == "" {
				key[n] = names[len(names)-1]
			}
		}
		return names
	}
	intVar := func(p *int, def int, usage string, ns ...string) {
		for _, n := range names(ns) {
			fs.IntVar(p, n, def, usage)
		}
	}
	strVar := func(p *string, def, usage string, ns ...string) {
		for _, n := range names(ns) {
			fs.StringVar(p, n, def, usage)
		}
	}
	boolVar := func(p *bool, usage string, ns ...string) {
		for _, n := range names(ns) {
			fs.BoolVar(p, n, false, usage)
		}
	}
	durVar := func(p *time.Duration, def time.Duration, usage, n string) {
		fs.DurationVar(p, n, def, usage)
		key[n] = n
	}
	strVar(&configFile, "", "configuration file (nats-server format); flags override it", "c", "config")
	strVar(&signalSpec, "", "send a signal to a running jetwal and exit: reload=PID, ldm=PID (lame duck mode), quit=PID, term=PID, stop=PID", "sl", "signal")
	intVar(&f.Port, server.DefaultPort, "client port", "p", "port")
	strVar(&f.Host, server.DefaultHost, "listen address", "a", "addr", "net")
	strVar(&f.ServerName, "", "server name (default: the server id)", "n", "name", "server_name")
	boolVar(&f.JetStream, "enable JetStream", "js", "jetstream")
	strVar(&f.StoreDir, DefaultStoreDir(), "JetStream store directory", "sd", "store_dir")
	strVar(&syncFlag, "always", "JetStream fsync policy: always, never or an interval such as 200ms", "sync")
	strVar(&maxPayload, "1MB", "maximum message payload", "max_payload")
	strVar(&maxPending, "64MB", "outbound bytes queued per client before it is cut off as a slow consumer", "max_pending")
	intVar(&f.MaxConnections, server.DefaultMaxConnections, "maximum client connections", "max_connections")
	intVar(&f.MaxControlLine, server.DefaultMaxControlLine, "maximum protocol control line", "max_control_line")
	durVar(&f.PingInterval, server.DefaultPingInterval, "keepalive PING interval", "ping_interval")
	intVar(&f.MaxPingsOut, server.DefaultMaxPingsOut, "unanswered PINGs before a client is stale", "ping_max")
	durVar(&f.WriteDeadline, server.DefaultWriteDeadline, "socket write deadline", "write_deadline")
	strVar(&f.User, "", "user required for connections", "user")
	strVar(&f.Pass, "", "password required for connections", "pass")
	strVar(&f.Token, "", "authorization token required for connections", "auth")
	boolVar(&f.TLS, "enable TLS (needs --tlscert and --tlskey)", "tls")
	strVar(&f.TLSCert, "", "server certificate file", "tlscert")
	strVar(&f.TLSKey, "", "private key for the server certificate", "tlskey")
	strVar(&f.TLSCA, "", "client certificate CA for verification", "tlscacert")
	boolVar(&f.TLSVerify, "enable TLS and require and verify client certificates", "tlsverify")
	intVar(&f.HTTPPort, 0, "HTTP monitoring port (0 = off, -1 = random)", "m", "http_port")
	intVar(&profPort, 0, "Go profiling (net/http/pprof) port on 127.0.0.1, as nats-server's --profile (0 = off)", "profile")
	boolVar(&f.Debug, "debug logging", "D", "debug")
	boolVar(&f.Trace, "protocol trace logging", "V", "trace")
	boolVar(&dv, "debug and trace logging", "DV", "VD")
	boolVar(&testConfig, "test the configuration (file and flags) and exit", "t")
	strVar(&f.LogFile, "", "log to this file instead of stderr", "l", "log")
	strVar(&f.PortsFileDir, "", "write the ports the server listens on to <dir>/<program>_<pid>.ports, as nats-server does", "ports_file_dir")
	strVar(&f.ClusterListen, "", "cluster (route) listen URL, e.g. nats://0.0.0.0:6222", "cluster_listen", "cluster")
	strVar(&f.Routes, "", "comma-separated route URLs of other servers, e.g. nats://10.0.0.2:6222", "routes")
	strVar(&f.ClusterName, "", "cluster name (default: generated)", "cluster_name")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: jetwal serve [flags]\n\nFlags (one or two dashes):\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	f.Given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.Given[key[fl.Name]] = true })
	if dv {
		f.Debug, f.Trace, f.Given["debug"], f.Given["trace"] = true, true, true, true
	}
	var err error
	if f.MaxPayload, err = config.ParseSize(maxPayload); err != nil {
		return nil, fmt.Errorf("--max_payload: %w", err)
	}
	if f.MaxPayload <= 0 || f.MaxPayload > 64<<20 {
		return nil, fmt.Errorf("--max_payload %d: want 1 byte to 64MB", f.MaxPayload)
	}
	if f.MaxPending, err = config.ParseSize(maxPending); err != nil {
		return nil, fmt.Errorf("--max_pending: %w", err)
	}
	if f.Sync, err = parseSync(syncFlag); err != nil {
		return nil, err
	}
	if f.Port < config.RandomPort || f.Port > 65535 {
		return nil, fmt.Errorf("--port %d out of range (-1: any free port)", f.Port)
	}
	if f.HTTPPort < -1 || f.HTTPPort > 65535 {
		return nil, fmt.Errorf("--http_port %d out of range", f.HTTPPort)
	}
	if profPort < 0 || profPort > 65535 {
		return nil, fmt.Errorf("--profile %d out of range", profPort)
	}
	if !f.TLS && !f.TLSVerify && (f.Given["tlscert"] || f.Given["tlskey"] || f.Given["tlscacert"]) {
		return nil, errors.New("--tlscert, --tlskey and --tlscacert need --tls or --tlsverify")
	}
	c := &CommandLine{Args: args, Signal: signalSpec, TestOnly: testConfig}
	if signalSpec == "" {
		if c.Options, err = FromConfig(configFile, f); err != nil {
			return nil, ConfigError{err}
		}
	}
	c.ConfigFile, c.ProfPort, c.Loaded, c.Version = configFile, profPort, time.Now(), version
	return c, nil
}

// parseSync parses --sync: "always", "never" or a duration such as 200ms.
func parseSync(s string) (durable.Policy, error) {
	p, err := durable.Parse(s)
	if err != nil {
		return p, fmt.Errorf("--sync: %w", err)
	}
	return p, nil
}
