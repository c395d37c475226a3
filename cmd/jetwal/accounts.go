package main

import (
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// serverAccounts is the one place the monitor and the system requests
// learn the server's accounts from (monitor.AccountSource). Today jetwal
// has the global account, plus the system account when system_account
// names one: its users log in to the global account (config/system.go),
// so every client connection is in $G.
type serverAccounts struct {
	system string // system_account, "" when not configured
}

// Accounts returns the system account (if any) and the global account.
func (a serverAccounts) Accounts() []string {
	if a.system == "" || a.system == monitor.GlobalAccount {
		return []string{monitor.GlobalAccount}
	}
	return []string{a.system, monitor.GlobalAccount}
}

// SystemAccount names the system account, "" when none is configured.
func (a serverAccounts) SystemAccount() string { return a.system }

// ConnAccount returns the global account: every client is in it.
func (serverAccounts) ConnAccount(*server.ConnInfo) string { return monitor.GlobalAccount }
