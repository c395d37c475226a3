package main

import (
	"cmp"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// serverAccounts is the one place the monitor and the system requests
// learn the server's accounts from (monitor.AccountSource). Without an
// accounts block jetwal has the global account, plus the system account
// when system_account names one: its users log in to the global account
// (config/system.go), so every client connection is in $G. With accounts
// (accounts_serve.go), the server's accounts and each client's own.
type serverAccounts struct {
	system string         // system_account, "" when not configured
	srv    *server.Server // with accounts; nil without
}

// accountSource is the monitor's view of the accounts.
func (o *serveOptions) accountSource(srv *server.Server) serverAccounts {
	if o.accounts == nil {
		return serverAccounts{system: o.sysAccount}
	}
	return serverAccounts{system: cmp.Or(o.sysAccount, defaultSystemAccount), srv: srv}
}

// Accounts returns every account: with accounts the server's, else the
// system account (if any) and the global account.
func (a serverAccounts) Accounts() []string {
	if a.srv != nil {
		return a.srv.AccountNames()
	}
	if a.system == "" || a.system == monitor.GlobalAccount {
		return []string{monitor.GlobalAccount}
	}
	return []string{a.system, monitor.GlobalAccount}
}

// SystemAccount names the system account, "" when none is configured.
func (a serverAccounts) SystemAccount() string { return a.system }

// ConnAccount returns the account of the connection.
func (serverAccounts) ConnAccount(ci *server.ConnInfo) string {
	return cmp.Or(ci.Account, monitor.GlobalAccount)
}
