package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/sysreq"
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

// jsConfig is what the JetStream layer gets from the command line.
type jsConfig struct {
	StoreDir   string
	Sync       durable.Policy
	MaxPayload int32
	// MaxMemory and MaxStore bound all memory (file) streams together; 0 =
	// no limit (jetstream { max_memory_store, max_file_store }).
	MaxMemory, MaxStore int64
	// Domain is the JetStream domain (jetstream { domain }); "" = none.
	Domain string
}

// defaultStoreDir is the store used without -sd: jetwal/jetstream in the
// OS temp directory.
func defaultStoreDir() string { return filepath.Join(os.TempDir(), "jetwal", "jetstream") }

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
// the configuration file when one is given.
type serveOptions struct {
	srv        server.Options
	js         bool
	jsCfg      jsConfig
	debug      bool
	trace      bool
	logFile    string
	configFile string
	warnings   []config.Warning // ignored configuration fields, logged at startup
	authOpts   auth.Options     // what srv.Auth was built from (for the startup report)
	httpHost   string           // monitoring listener; httpPort 0 = off
	httpPort   int              // -1 = a random port
	profPort   int              // --profile: pprof on 127.0.0.1 (0 = off)
	loaded     time.Time        // when the configuration was read
	sysAccount string           // system_account, "" when none
	args       []string         // the command line, parsed again on reload
	testOnly   bool             // -t: check the configuration and exit
	signal     string           // --signal: send a signal to a running server instead
	// accounts are the file's accounts (accounts.go); nil = $G only.
	accounts []config.Account
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
	strVar(&signalSpec, "", "send a signal to a running jetwal and exit: reload=PID, quit=PID, term=PID, stop=PID", "sl", "signal")
	intVar(&port, server.DefaultPort, "client port", "p", "port")
	strVar(&host, server.DefaultHost, "listen address", "a", "addr", "net")
	strVar(&name, "", "server name (default: the server id)", "n", "name", "server_name")
	boolVar(&js, "enable JetStream", "js", "jetstream")
	strVar(&storeDir, defaultStoreDir(), "JetStream store directory", "sd", "store_dir")
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
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("--port %d out of range", port)
	}
	if httpPort < -1 || httpPort > 65535 {
		return nil, fmt.Errorf("--http_port %d out of range", httpPort)
	}
	if profPort < 0 || profPort > 65535 {
		return nil, fmt.Errorf("--profile %d out of range", profPort)
	}
	o := &serveOptions{configFile: configFile, httpPort: httpPort, profPort: profPort, loaded: time.Now(), args: args, signal: signalSpec}
	if signalSpec != "" {
		return o, nil
	}
	var authTimeout time.Duration
	var tlsConf *config.TLS
	var fileCluster *config.Cluster

	// The file first, then every flag given on the command line on top.
	if configFile != "" {
		cfg, err := config.Load(configFile)
		if err != nil {
			return nil, configError{err}
		}
		o.warnings = cfg.Warnings
		o.sysAccount = cfg.SystemAccount
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
		if cfg.Set["jetstream"] && !flagSet("js", "jetstream") {
			js = cfg.JetStream.Enabled
		}
		if (cfg.Set["jetstream"] || cfg.Set["store_dir"]) && cfg.JetStream.StoreDir != "" && !flagSet("sd", "store_dir") {
			storeDir = cfg.JetStream.StoreDir
		}
		if !flagSet("sync") && cfg.JetStream.Sync != nil {
			sp = *cfg.JetStream.Sync
		}
		o.jsCfg.MaxMemory, o.jsCfg.MaxStore = cfg.JetStream.MaxMemory, cfg.JetStream.MaxStore
		o.jsCfg.Domain = cfg.JetStream.Domain
		if cfg.Set["http"] && !flagSet("m", "http_port") {
			o.httpPort = cfg.HTTPPort
		}
		o.httpHost = cfg.HTTPHost
		o.authOpts = cfg.Auth
		if cfg.MultiAccount() {
			o.accounts = cfg.Accounts
		}
		authTimeout = cfg.AuthTimeout
		tlsConf = cfg.TLS
		if cfg.Set["cluster"] {
			fileCluster = &cfg.Cluster
		}
	}
	if o.srv.Cluster, err = clusterOptions(cf, flagSet, fileCluster); err != nil {
		return nil, configError{err}
	}

	// Security flags, as nats-server's: --user/--pass/--auth replace those
	// settings of the file; --tls or --tlsverify replace its tls block.
	if flagSet("user") {
		o.authOpts.Username = user
	}
	if flagSet("pass") {
		o.authOpts.Password = pass
	}
	if flagSet("auth") {
		o.authOpts.Token = token
	}
	if tlsOn || tlsVerify {
		tlsConf = &config.TLS{CertFile: tlsCert, KeyFile: tlsKey, CAFile: tlsCA, Verify: tlsVerify}
		o.authOpts.MapCerts = false
	} else if flagSet("tlscert", "tlskey", "tlscacert") {
		return nil, errors.New("--tlscert, --tlskey and --tlscacert need --tls or --tlsverify")
	}
	if err := o.setAccounts(js); err != nil {
		return nil, configError{err}
	}
	if o.authOpts.Enabled() {
		a, err := auth.New(o.authOpts)
		if err != nil {
			return nil, configError{err}
		}
		o.srv.Auth = a
		o.srv.AuthTimeout = authTimeout
	}
	if tlsConf != nil {
		tc, err := tlsConf.Config()
		if err != nil {
			return nil, configError{err}
		}
		o.srv.TLSConfig = tc
		o.srv.TLSHandshakeFirst = tlsConf.HandshakeFirst
		o.srv.TLSTimeout = tlsConf.Timeout
	}

	if storeDir == "" {
		storeDir = defaultStoreDir()
	}
	if abs, err := filepath.Abs(storeDir); err == nil {
		storeDir = abs
	}
	if o.httpHost == "" {
		o.httpHost = host
	}
	o.srv.Host = host
	o.srv.Port = port
	o.srv.MaxPayload = int32(mp)
	o.srv.MaxConnections = maxConns
	o.srv.MaxControlLine = maxCL
	o.srv.MaxPending = pend
	o.srv.PingInterval = pingInterval
	o.srv.MaxPingsOut = maxPingsOut
	o.srv.WriteDeadline = writeDeadline
	o.srv.ServerName = name
	o.srv.Debug = debug || dv
	o.srv.Trace = trace || dv
	o.js = js
	o.jsCfg.StoreDir, o.jsCfg.Sync, o.jsCfg.MaxPayload = storeDir, sp, int32(mp)
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
		for _, w := range o.warnings {
			fmt.Fprintf(stdout, "warning: %s\n", w)
		}
		fmt.Fprintf(stdout, "jetwal: configuration %s test is successful\n", cmp.Or(o.configFile, "(flags only)"))
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
	o.srv.Logger = log
	if o.js {
		if err := configureJetStream(&o.srv, o.jsCfg); err != nil {
			return err
		}
	}
	var handoff *raftHandoff
	if o.js && o.srv.Cluster != nil {
		handoff = prepareCluster(o.srv.Cluster)
	}
	srv, err := server.New(o.srv)
	if err != nil {
		return err
	}
	opts := srv.Options()
	log.Info("Starting jetwal")
	if o.configFile != "" {
		log.Info("  Using configuration file: " + o.configFile)
	}
	for _, w := range o.warnings {
		log.Warn(w.String())
	}
	log.Info("  Version:  " + version)
	log.Info("  NATS:     " + srv.Version() + " (protocol 1)")
	log.Debug("  Go build: " + runtime.Version())
	log.Info("  Name:     " + srv.Name())
	log.Info("  ID:       " + srv.ID())
	log.Info("  Max Payload:     " + humanBytes(int64(opts.MaxPayload)))
	log.Info("  Max Pending:     " + humanBytes(opts.MaxPending))
	log.Info("  Max Connections: " + strconv.Itoa(opts.MaxConnections))
	log.Info("  Max Control Line: " + strconv.Itoa(opts.MaxControlLine))
	// Bind the port before touching the store: a busy port must leave
	// nothing behind on disk.
	if err := srv.Listen(); err != nil {
		return err
	}
	var jsStats monitor.JetStream
	if o.js {
		log.Info("Starting JetStream")
		log.Info("---------------- JETSTREAM ----------------")
		log.Info(fmt.Sprintf("  Store Directory: %q", o.jsCfg.StoreDir))
		log.Info("  Sync:            " + o.jsCfg.Sync.String())
		log.Info("-------------------------------------------")
		var jc jetstream.Cluster
		if handoff != nil {
			node, err := startClusterNode(srv, o.srv.Cluster, storeRoot(o.jsCfg.StoreDir), handoff, log)
			if err != nil {
				srv.Shutdown(context.Background())
				return fmt.Errorf("start jetstream: %w", err)
			}
			jc = jsCluster{Node: node, srv: srv}
			srv.OnShutdown(func() {
				if err := node.Close(); err != nil {
					log.Error("closing the JetStream cluster", "err", err)
				}
			})
		}
		jss, err := startJetStreams(srv, o, jc, log)
		if err != nil {
			srv.Shutdown(context.Background())
			return fmt.Errorf("start jetstream: %w", err)
		}
		switch len(jss) {
		case 0:
		case 1:
			jsStats = jss[0]
		default:
			jsStats = jetStreams(jss) // accounts_monitor.go
		}
		srv.OnShutdown(func() {
			for _, js := range jss {
				if err := js.Close(); err != nil {
					log.Error("closing JetStream", "err", err)
				}
			}
		})
	}
	if err := srv.Start(); err != nil {
		return err
	}
	if opts.TLSConfig != nil {
		log.Info("TLS required for client connections")
	}
	if d := describeAuth(o.authOpts); d != "" && opts.Auth != nil {
		log.Info("Authentication required: " + d)
	}
	log.Info("Listening for client connections on " + listenAddr(opts.Host, srv))
	if opts.Auth == nil && !isLoopback(opts.Host) {
		log.Warn("No authentication configured and listening on " + opts.Host + ": anyone who can reach this address can connect, publish and read JetStream data")
	}
	if o.profPort != 0 {
		if err := startProfiler(o.profPort, log); err != nil {
			log.Error("profiling port", "err", err)
		}
	}
	var mon *monitor.Monitor
	if o.httpPort != 0 {
		port := max(o.httpPort, 0) // -1 = a random port
		log.Info("Starting http monitor on " + net.JoinHostPort(o.httpHost, strconv.Itoa(port)))
		mon, err = monitor.Start(monitor.Options{Host: o.httpHost, Port: port, Server: srv, JetStream: jsStats,
			Accounts: o.accountSource(srv), ConfigLoadTime: o.loaded, Logger: log})
		if err != nil {
			sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			_ = srv.Shutdown(sctx)
			return err
		}
		log.Info("Monitoring listening on " + mon.Addr().String())
	}
	domain := ""
	if o.js {
		domain = o.jsCfg.Domain
	}
	sys, err := startSysReq(srv, o.systemAccountOf(srv), mon, jsStats, o.js, o.accountSource(srv), domain, o.loaded, log)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return err
	}
	defer sys.Stop()
	log.Info("Server is ready")

	stopReload := make(chan struct{})
	watchReload(o, srv, log, stopReload)
	defer close(stopReload)
	<-ctx.Done()
	log.Info("Initiating Shutdown...")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if mon != nil {
		if err := mon.Shutdown(sctx); err != nil {
			log.Error("closing the http monitor", "err", err)
		}
	}
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("Server Exiting..")
	return nil
}

// startSysReq answers $SYS.REQ.SERVER requests with the documents of the
// HTTP monitor (one without a listener when -m is not given), in the
// system account sys only (package sysreq: other accounts get nats-server's
// imported requests about themselves).
func startSysReq(srv *server.Server, sys *server.Account, mon *monitor.Monitor, js monitor.JetStream, jsOn bool, accs monitor.AccountSource, domain string, loaded time.Time, log *slog.Logger) (*sysreq.Service, error) {
	if mon == nil {
		var err error
		mon, err = monitor.New(monitor.Options{Server: srv, JetStream: js, Accounts: accs, ConfigLoadTime: loaded, Logger: log})
		if err != nil {
			return nil, err
		}
	}
	return sysreq.Start(sysreq.Options{Server: srv, Account: sys, Monitor: mon, JetStream: jsOn, Domain: domain, Logger: log})
}

// listenAddr renders the listen address as host:port with the configured
// host (nats-server prints 0.0.0.0:4222, not [::]:4222).
func listenAddr(host string, srv *server.Server) string {
	if ta, ok := srv.Addr().(*net.TCPAddr); ok {
		return net.JoinHostPort(host, strconv.Itoa(ta.Port))
	}
	return srv.Addr().String()
}

// humanBytes prints a size like nats-server's banner ("1.0 MiB").
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// isLoopback reports whether host only accepts local connections.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// describeAuth names the ways of logging in (never a secret), for the
// startup banner.
func describeAuth(a auth.Options) string {
	var parts []string
	if a.Token != "" {
		parts = append(parts, "token")
	}
	if a.Username != "" {
		parts = append(parts, "user "+strconv.Quote(a.Username))
	}
	if n := len(a.Users); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" users")
	}
	if n := len(a.Nkeys); n > 0 {
		parts = append(parts, strconv.Itoa(n)+" nkey users")
	}
	if a.MapCerts {
		parts = append(parts, "client certificates mapped to users")
	}
	if a.NoAuthUser != "" {
		parts = append(parts, "no_auth_user "+strconv.Quote(a.NoAuthUser))
	}
	return strings.Join(parts, ", ")
}
