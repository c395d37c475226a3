package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/durable"
	jetwal "github.com/jetwal/jetwal/serve"
	"github.com/jetwal/jetwal/server"
)

// shutdownTimeout bounds a graceful shutdown after SIGINT/SIGTERM.
const shutdownTimeout = 10 * time.Second

// serveOptions is the parsed command line of `jetwal serve`, merged with
// the configuration file by serve.FromConfig, and what only the command
// does with it.
type serveOptions struct {
	jetwal.Options
	args     []string // the command line, parsed again on reload
	testOnly bool     // -t: check the configuration and exit
	signal   string   // --signal: send a signal to a running server instead
}

// configError is a problem with the configuration file or the security
// settings: jetwal exits with status 1 for it (2 is for bad usage).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

func parseServeFlags(args []string, stderr io.Writer) (*serveOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f jetwal.Flags
	var configFile, maxPayload, maxPending, syncFlag, signalSpec string
	var dv, testConfig bool
	var profPort int
	// Each flag has the names nats-server gives it; key is the one
	// serve.Flags.Given knows it by (the last name, but "host").
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
	strVar(&f.StoreDir, jetwal.DefaultStoreDir(), "JetStream store directory", "sd", "store_dir")
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
	o := &serveOptions{args: args, signal: signalSpec, testOnly: testConfig}
	if signalSpec == "" {
		if o.Options, err = jetwal.FromConfig(configFile, f); err != nil {
			return nil, configError{err}
		}
	}
	o.ConfigFile, o.ProfPort, o.Loaded, o.Version = configFile, profPort, time.Now(), version
	return o, nil
}

// parseSync parses --sync: "always", "never" or a duration such as 200ms.
func parseSync(s string) (durable.Policy, error) {
	p, err := durable.Parse(s)
	if err != nil {
		return p, fmt.Errorf("--sync: %w", err)
	}
	return p, nil
}

func serveCommand() command {
	return command{summary: "run the NATS / JetStream server", run: runServe}
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseServeFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var cerr configError
	if err != nil {
		fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
		if errors.As(err, &cerr) {
			return 1
		}
		return 2
	}
	if o.signal != "" {
		if err := sendSignal(o.signal); err != nil {
			fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
			return 1
		}
		return 0
	}
	if o.testOnly {
		for _, w := range o.Warnings {
			fmt.Fprintf(stdout, "warning: %s\n", w)
		}
		fmt.Fprintf(stdout, "jetwal: configuration %s test is successful\n", cmp.Or(o.ConfigFile, "(flags only)"))
		return 0
	}
	logOut := stderr
	if o.LogFile != "" {
		f, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
			return 1
		}
		defer f.Close()
		logOut = f
	}
	log := slog.New(jetwal.NewLogHandler(logOut, o.Server.Debug, o.Server.Trace))
	if err := serve(ctx, o, log); err != nil {
		log.Error("fatal", "err", err)
		return 1
	}
	return 0
}

// serve runs the server until ctx is cancelled (then shuts it down) or
// SIGUSR2 (then lame duck mode, as nats-server's).
func serve(ctx context.Context, o *serveOptions, log *slog.Logger) error {
	opts := o.Options
	opts.Logger = log
	srv, err := jetwal.New(opts)
	if err != nil {
		return err
	}
	// The signal handlers go in before Start: once "Server is ready" is
	// logged, a SIGHUP or SIGUSR2 must reach them, not the default action
	// (which ends the process).
	stopReload := make(chan struct{})
	watchReload(o, srv, log, stopReload)
	defer close(stopReload)
	ldm := make(chan os.Signal, 1)
	signal.Notify(ldm, syscall.SIGUSR2)
	defer signal.Stop(ldm)
	if err := srv.Start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-ldm:
		opts := srv.Options()
		lctx, cancel := context.WithTimeout(context.Background(), opts.LameDuckGrace+opts.LameDuckDuration+shutdownTimeout)
		defer cancel()
		if err := srv.LameDuck(lctx); err != nil {
			return err
		}
		log.Info("Server Exiting..")
		return nil
	}
	log.Info("Initiating Shutdown...")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	log.Info("Server Exiting..")
	return nil
}
