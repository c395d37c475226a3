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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	jetwal "github.com/jetwal/jetwal/serve"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// shutdownTimeout bounds a graceful shutdown after SIGINT/SIGTERM.
const shutdownTimeout = 10 * time.Second

// parseSync parses --sync: "always", "never" or a duration such as 200ms.
func parseSync(s string) (durable.Policy, error) {
	p, err := durable.Parse(s)
	if err != nil {
		return p, fmt.Errorf("--sync: %w", err)
	}
	return p, nil
}

// parseSize parses a byte count with an optional K/M/G suffix (KB, KiB and
// so on; all powers of 1024, as nats-server reads sizes).
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"GB", 1 << 30}, {"G", 1 << 30}, {"MIB", 1 << 20}, {"MB", 1 << 20}, {"M", 1 << 20},
		{"KIB", 1 << 10}, {"KB", 1 << 10}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a byte count like 1048576 or 1MB", s)
	}
	return n * mult, nil
}

// serveOptions is the parsed command line of `jetwal serve`, merged with
// the configuration file when one is given: the server's options (package
// serve) and what only the command does with them.
type serveOptions struct {
	jetwal.Options
	debug    bool
	trace    bool
	logFile  string
	profPort int      // --profile: pprof on 127.0.0.1 (0 = off)
	args     []string // the command line, parsed again on reload
	testOnly bool     // -t: check the configuration and exit
	signal   string   // --signal: send a signal to a running server instead
}

// resolveAccounts fills in the server's accounts (see
// jetwal.Options.ResolveAccounts) with JetStream as the flags and file say.
func (o *serveOptions) resolveAccounts(js bool) error {
	o.JetStream = js
	return o.ResolveAccounts()
}

// configError is a problem with the configuration file or the security
// settings: jetwal exits with status 1 for it (2 is for bad usage).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

func parseServeFlags(args []string, stderr io.Writer) (*serveOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		port, maxConns, maxCL, maxPingsOut, httpPort int
		host, name, storeDir, syncFlag, configFile   string
		maxPayload, maxPending, logFile              string
		user, pass, token, signalSpec                string
		tlsCert, tlsKey, tlsCA                       string
		js, debug, trace, dv, tlsOn, tlsVerify       bool
		testConfig                                   bool
		pingInterval, writeDeadline                  time.Duration
	)
	intVar := func(p *int, def int, usage string, names ...string) {
		for _, n := range names {
			fs.IntVar(p, n, def, usage)
		}
	}
	strVar := func(p *string, def, usage string, names ...string) {
		for _, n := range names {
			fs.StringVar(p, n, def, usage)
		}
	}
	boolVar := func(p *bool, usage string, names ...string) {
		for _, n := range names {
			fs.BoolVar(p, n, false, usage)
		}
	}
	strVar(&configFile, "", "configuration file (nats-server format); flags override it", "c", "config")
	strVar(&signalSpec, "", "send a signal to a running jetwal and exit: reload=PID, ldm=PID (lame duck mode), quit=PID, term=PID, stop=PID", "sl", "signal")
	intVar(&port, server.DefaultPort, "client port", "p", "port")
	strVar(&host, server.DefaultHost, "listen address", "a", "addr", "net")
	strVar(&name, "", "server name (default: the server id)", "n", "name", "server_name")
	boolVar(&js, "enable JetStream", "js", "jetstream")
	strVar(&storeDir, jetwal.DefaultStoreDir(), "JetStream store directory", "sd", "store_dir")
	strVar(&syncFlag, "always", "JetStream fsync policy: always, never or an interval such as 200ms", "sync")
	strVar(&maxPayload, "1MB", "maximum message payload", "max_payload")
	strVar(&maxPending, "64MB", "outbound bytes queued per client before it is cut off as a slow consumer", "max_pending")
	intVar(&maxConns, server.DefaultMaxConnections, "maximum client connections", "max_connections")
	intVar(&maxCL, server.DefaultMaxControlLine, "maximum protocol control line", "max_control_line")
	fs.DurationVar(&pingInterval, "ping_interval", server.DefaultPingInterval, "keepalive PING interval")
	intVar(&maxPingsOut, server.DefaultMaxPingsOut, "unanswered PINGs before a client is stale", "ping_max")
	fs.DurationVar(&writeDeadline, "write_deadline", server.DefaultWriteDeadline, "socket write deadline")
	strVar(&user, "", "user required for connections", "user")
	strVar(&pass, "", "password required for connections", "pass")
	strVar(&token, "", "authorization token required for connections", "auth")
	boolVar(&tlsOn, "enable TLS (needs --tlscert and --tlskey)", "tls")
	strVar(&tlsCert, "", "server certificate file", "tlscert")
	strVar(&tlsKey, "", "private key for the server certificate", "tlskey")
	strVar(&tlsCA, "", "client certificate CA for verification", "tlscacert")
	boolVar(&tlsVerify, "enable TLS and require and verify client certificates", "tlsverify")
	intVar(&httpPort, 0, "HTTP monitoring port (0 = off, -1 = random)", "m", "http_port")
	var profPort int
	intVar(&profPort, 0, "Go profiling (net/http/pprof) port on 127.0.0.1, as nats-server's --profile (0 = off)", "profile")
	boolVar(&debug, "debug logging", "D", "debug")
	boolVar(&trace, "protocol trace logging", "V", "trace")
	boolVar(&dv, "debug and trace logging", "DV", "VD")
	boolVar(&testConfig, "test the configuration (file and flags) and exit", "t")
	strVar(&logFile, "", "log to this file instead of stderr", "l", "log")
	var portsDir string
	strVar(&portsDir, "", "write the ports the server listens on to <dir>/<program>_<pid>.ports, as nats-server does", "ports_file_dir")
	var cf clusterFlags
	cf.register(strVar)
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
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	flagSet := func(names ...string) bool {
		for _, n := range names {
			if given[n] {
				return true
			}
		}
		return false
	}

	mp, err := parseSize(maxPayload)
	if err != nil {
		return nil, fmt.Errorf("--max_payload: %w", err)
	}
	if mp <= 0 || mp > 64<<20 {
		return nil, fmt.Errorf("--max_payload %d: want 1 byte to 64MB", mp)
	}
	pend, err := parseSize(maxPending)
	if err != nil {
		return nil, fmt.Errorf("--max_pending: %w", err)
	}
	sp, err := parseSync(syncFlag)
	if err != nil {
		return nil, err
	}
	if port < config.RandomPort || port > 65535 {
		return nil, fmt.Errorf("--port %d out of range (-1: any free port)", port)
	}
	if httpPort < -1 || httpPort > 65535 {
		return nil, fmt.Errorf("--http_port %d out of range", httpPort)
	}
	if profPort < 0 || profPort > 65535 {
		return nil, fmt.Errorf("--profile %d out of range", profPort)
	}
	o := &serveOptions{profPort: profPort, args: args, signal: signalSpec}
	o.ConfigFile, o.HTTPPort, o.Loaded, o.Version = configFile, httpPort, time.Now(), version
	if signalSpec != "" {
		return o, nil
	}
	var authTimeout time.Duration
	var tlsConf *config.TLS
	var fileCluster *config.Cluster
	var fileWS *config.Websocket

	// The file first, then every flag given on the command line on top.
	if configFile != "" {
		cfg, err := config.Load(configFile)
		if err != nil {
			return nil, configError{err}
		}
		o.Warnings = cfg.Warnings
		o.SystemAccount = cfg.SystemAccount
		from := func(key string, flags ...string) bool { return cfg.Set[key] && !flagSet(flags...) }
		if from("port", "p", "port") {
			port = cfg.Port
		}
		if from("host", "a", "addr", "net") {
			host = cfg.Host
		}
		if from("server_name", "n", "name", "server_name") {
			name = cfg.ServerName
		}
		o.Server.Tags = cfg.Tags
		if from("max_payload", "max_payload") {
			mp = cfg.MaxPayload
		}
		if from("max_pending", "max_pending") {
			pend = cfg.MaxPending
		}
		if from("max_connections", "max_connections") {
			maxConns = cfg.MaxConnections
		}
		if from("max_control_line", "max_control_line") {
			maxCL = cfg.MaxControlLine
		}
		if from("ping_interval", "ping_interval") {
			pingInterval = cfg.PingInterval
		}
		if from("ping_max", "ping_max") {
			maxPingsOut = cfg.MaxPingsOut
		}
		if from("write_deadline", "write_deadline") {
			writeDeadline = cfg.WriteDeadline
		}
		if from("debug", "D", "debug", "DV", "VD") {
			debug = cfg.Debug
		}
		if from("trace", "V", "trace", "DV", "VD") {
			trace = cfg.Trace
		}
		if from("logfile", "l", "log") {
			logFile = cfg.LogFile
		}
		if from("ports_file_dir", "ports_file_dir") {
			portsDir = cfg.PortsFileDir
		}
		o.LameDuckDuration, o.LameDuckGrace = cfg.LameDuckDuration, cfg.LameDuckGrace
		if cfg.Set["jetstream"] && !flagSet("js", "jetstream") {
			js = cfg.JetStream.Enabled
		}
		if (cfg.Set["jetstream"] || cfg.Set["store_dir"]) && cfg.JetStream.StoreDir != "" && !flagSet("sd", "store_dir") {
			storeDir = cfg.JetStream.StoreDir
		}
		if !flagSet("sync") && cfg.JetStream.Sync != nil {
			sp = *cfg.JetStream.Sync
		}
		o.Store.MaxMemory, o.Store.MaxStore = cfg.JetStream.MaxMemory, cfg.JetStream.MaxStore
		if e := cfg.JetStream.Encryption; e.Key != "" {
			ci, err := crypt.ParseCipher(e.Cipher)
			if err != nil {
				return nil, configError{err}
			}
			o.Store.Encryption = crypt.Config{Key: e.Key, PrevKey: e.PrevKey, Cipher: ci}
		}
		o.Store.Domain = cfg.JetStream.Domain
		if cfg.Set["http"] && !flagSet("m", "http_port") {
			o.HTTPPort = cfg.HTTPPort
		}
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
	if o.Server.Cluster, err = clusterOptions(cf, flagSet, fileCluster); err != nil {
		return nil, configError{err}
	}

	// Security flags, as nats-server's: --user/--pass/--auth replace those
	// settings of the file; --tls or --tlsverify replace its tls block.
	if flagSet("user") {
		o.Auth.Username = user
	}
	if flagSet("pass") {
		o.Auth.Password = pass
	}
	if flagSet("auth") {
		o.Auth.Token = token
	}
	if tlsOn || tlsVerify {
		tlsConf = &config.TLS{CertFile: tlsCert, KeyFile: tlsKey, CAFile: tlsCA, Verify: tlsVerify}
		o.Auth.MapCerts = false
	} else if flagSet("tlscert", "tlskey", "tlscacert") {
		return nil, errors.New("--tlscert, --tlskey and --tlscacert need --tls or --tlsverify")
	}
	if err := o.resolveAccounts(js); err != nil {
		return nil, configError{err}
	}
	if o.Auth.Enabled() {
		a, err := auth.New(o.Auth)
		if err != nil {
			return nil, configError{err}
		}
		o.Server.Auth = a
		o.Server.AuthTimeout = authTimeout
	}
	if fileWS != nil {
		if o.Server.Websocket, err = websocketOptions(fileWS, o.Auth); err != nil {
			return nil, configError{err}
		}
	}
	if tlsConf != nil {
		tc, err := tlsConf.Config()
		if err != nil {
			return nil, configError{err}
		}
		o.Server.TLSConfig = tc
		o.Server.TLSHandshakeFirst = tlsConf.HandshakeFirst
		o.Server.TLSTimeout = tlsConf.Timeout
	}

	if storeDir == "" {
		storeDir = jetwal.DefaultStoreDir()
	}
	if abs, err := filepath.Abs(storeDir); err == nil {
		storeDir = abs
	}
	if o.HTTPHost == "" {
		o.HTTPHost = host
	}
	o.Server.Host = host
	o.Server.Port = port
	o.Server.MaxPayload = int32(mp)
	o.Server.MaxConnections = maxConns
	o.Server.MaxControlLine = maxCL
	o.Server.MaxPending = pend
	o.Server.PingInterval = pingInterval
	o.Server.MaxPingsOut = maxPingsOut
	o.Server.WriteDeadline = writeDeadline
	o.Server.ServerName = name
	o.Server.Debug = debug || dv
	o.Server.Trace = trace || dv
	o.JetStream = js
	o.Store.Dir, o.Store.Sync = storeDir, sp
	if portsDir != "" {
		o.PortsFile = filepath.Join(portsDir, fmt.Sprintf("%s_%d.ports", filepath.Base(os.Args[0]), os.Getpid()))
	}
	o.debug, o.trace, o.logFile = debug || dv, trace || dv, logFile
	o.testOnly = testConfig
	return o, nil
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
	if errors.As(err, &cerr) {
		fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
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
	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "jetwal serve: %v\n", err)
			return 1
		}
		defer f.Close()
		logOut = f
	}
	log := slog.New(newLineHandler(logOut, logLevel(o.debug, o.trace)))
	if err := serve(ctx, o, log); err != nil {
		log.Error("fatal", "err", err)
		return 1
	}
	return 0
}

// serve runs the server until ctx is cancelled.
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
	if o.profPort != 0 {
		if err := startProfiler(o.profPort, log); err != nil {
			log.Error("profiling port", "err", err)
		}
	}
	select {
	case <-ctx.Done():
	case <-ldm:
		// Lame duck mode (SIGUSR2, --signal ldm=PID), as nats-server's.
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
