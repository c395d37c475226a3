package main

// Accounts: the file's accounts { } become server accounts, each with its
// own JetStream when it has one (jetstream/<account>/ in the store).

import (
	"cmp"
	"fmt"
	"log/slog"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
)

// defaultSystemAccount is nats-server's system account when system_account
// names none.
const defaultSystemAccount = "$SYS"

// setAccounts passes the accounts to the server options and refuses what
// jetwal cannot run: an account with JetStream in a cluster (clustered
// JetStream serves $G only). js is whether JetStream is on. As with
// nats-server, there is always a system account, where the server
// requests live (package sysreq): without an accounts block it is
// system_account, or "$SYS" with no users.
func (o *serveOptions) setAccounts(js bool) error {
	sys := cmp.Or(o.sysAccount, defaultSystemAccount)
	if o.accounts == nil {
		o.srv.Accounts, o.srv.SystemAccount = []string{sys}, sys
		return nil
	}
	names := make([]string, 0, len(o.accounts)+1)
	hasSys := false
	for _, a := range o.accounts {
		names = append(names, a.Name)
		hasSys = hasSys || a.Name == sys
		if js && a.JetStream != nil && o.srv.Cluster != nil {
			return fmt.Errorf("%s: accounts.%s.jetstream: clustered JetStream (--cluster with JetStream) serves the global account $G only; remove the account's jetstream or run without a cluster", o.configFile, a.Name)
		}
	}
	if !hasSys {
		names = append(names, sys)
	}
	o.srv.Accounts, o.srv.SystemAccount = names, sys
	return nil
}

// systemAccountOf is the account the server requests and connection
// events live in: the system account.
func (o *serveOptions) systemAccountOf(srv *server.Server) *server.Account {
	return srv.Account(cmp.Or(o.sysAccount, defaultSystemAccount))
}

// startJetStreams starts JetStream for every account that has it: $G alone
// without accounts (or in a cluster, where only $G may have it), else each
// account whose jetstream is on. The other accounts answer the JetStream
// API with nats-server's "JetStream not enabled for account". The first
// JetStream returned is the one the monitor reports.
func startJetStreams(srv *server.Server, o *serveOptions, cl jetstream.Cluster, log *slog.Logger) ([]*jetstream.JetStream, error) {
	if o.accounts == nil || cl != nil {
		js, err := startJetStream(srv, o.jsCfg, cl, log)
		if err != nil {
			return nil, err
		}
		if err := serveDisabled(srv, map[string]bool{server.GlobalAccount: true}); err != nil {
			_ = js.Close()
			return nil, err
		}
		return []*jetstream.JetStream{js}, nil
	}
	cfg := o.jsCfg
	root := storeRoot(cfg.StoreDir)
	if cfg.StoreDir == defaultStoreDir() {
		if err := claimDefaultStore(root); err != nil {
			return nil, err
		}
	}
	lock, err := jetstream.LockStore(nil, root)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	defer lock.Close() // the JetStreams hold their own references
	var out []*jetstream.JetStream
	fail := func(err error) ([]*jetstream.JetStream, error) {
		for _, js := range out {
			_ = js.Close()
		}
		return nil, err
	}
	enabled := make(map[string]bool)
	for _, a := range o.accounts {
		if a.JetStream == nil {
			continue
		}
		enabled[a.Name] = true
		l := a.JetStream
		jcfg := jetstream.Config{StoreDir: root, Account: a.Name, Logger: log.With("account", a.Name),
			MaxMemory: cfg.MaxMemory, MaxStore: cfg.MaxStore,
			AccountMaxMemory: l.MaxMemory, AccountMaxStore: l.MaxStore,
			MaxStreams: l.MaxStreams, MaxConsumers: l.MaxConsumers,
			Sync: cfg.Sync.Mode, SyncInterval: cfg.Sync.Interval, Domain: cfg.Domain, StoreLock: lock}
		acc := srv.Account(a.Name)
		js, err := jetstream.New(acc, jcfg)
		if err != nil {
			return fail(fmt.Errorf("jetstream of account %s: %w", a.Name, err))
		}
		acc.SetStreamTracer(js.TraceStream) // message traces name the capturing stream
		out = append(out, js)
	}
	if err := serveDisabled(srv, enabled); err != nil {
		return fail(err)
	}
	return out, nil
}

// serveDisabled answers the JetStream API with 10039 in every account not
// in enabled.
func serveDisabled(srv *server.Server, enabled map[string]bool) error {
	for _, name := range srv.AccountNames() {
		if enabled[name] {
			continue
		}
		sub, err := jetstream.ServeDisabled(srv.Account(name))
		if err != nil {
			return err
		}
		srv.OnShutdown(sub.Unsubscribe)
	}
	return nil
}
