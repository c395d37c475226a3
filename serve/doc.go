// Package serve assembles a whole jetwal server — the NATS core, its
// accounts, JetStream, the cluster and its raft groups, HTTP monitoring
// and the $SYS requests — from one Options value. `jetwal serve` builds
// that value from a configuration file and its flags (ParseCommandLine)
// and runs it (CommandLine.Run); a Go program (or a test) fills it directly and runs jetwal in process, the way programs
// embed nats-server with server.NewServer:
//
//	s, err := serve.New(serve.Options{
//		Server:    server.Options{Host: "127.0.0.1", Port: -1},
//		JetStream: true,
//		Store:     serve.Store{Dir: dir},
//	})
//	if err != nil { ... }
//	if err := s.Start(); err != nil { ... }
//	defer s.Shutdown(context.Background())
//	nc, err := nats.Connect(s.ClientURL())
//
// Start returns once the server accepts clients (ReadyForConnections
// reports the same); Shutdown closes clients, routes, JetStream and the
// cluster in that order and waits for them.
//
// # Source files
//
//   - doc.go: this overview.
//   - options.go: Options, Store and their defaults; the system account.
//   - server.go: New, Start, LameDuck, Shutdown and what they report.
//   - jetstream.go: the stores, one JetStream per account with JetStream.
//   - accounts.go: what the monitor and $SYS requests learn of accounts.
//   - cluster.go: clustered JetStream — the raft node on the route port,
//     its adapter to jetstream.Cluster, and the raft groups /raftz shows.
//   - cluster_accounts.go: each account's JetStream in a namespace of its
//     own of the one cluster node (meta keys, replicas, requests).
//   - ports.go: the ports file (ports_file_dir).
//   - banner.go: the startup report.
//   - fromconfig.go: FromConfig, a configuration file with `jetwal serve`'s
//     flags (Flags) on top, as Options.
//   - clusterflags.go: the route settings of the cluster block and flags.
//   - cmdline.go: ParseCommandLine, `jetwal serve`'s flags parsed and
//     merged with the configuration file (FromConfig); ConfigError.
//   - run.go: CommandLine.Run, a server from start to shutdown or lame
//     duck mode, reloading on demand; the -t report and the log file.
//   - signal.go: SendSignal, `jetwal serve --signal`.
//   - websocket_options.go: the websocket block as listener options, and
//     who WebSocket clients log in as.
//   - reload.go: Reload, what a configuration reload changes at once, and
//     CommandLine.Reload, which reads the configuration again.
//   - logging.go: NewLogHandler, nats-server style log lines.
//   - profile.go: the pprof listener of ProfPort.
package serve
