package monitor

import "github.com/jetwal/jetwal/server"

// AccountSource is where the monitor (and package sysreq, through it)
// learns the server's accounts. It is the one place that knows them:
// /accountz, the account requests over NATS, /jsz's account filter and the
// per-account statistics all ask it.
type AccountSource interface {
	// Accounts returns the name of every account the server has.
	Accounts() []string
	// SystemAccount names the system account, "" when there is none.
	SystemAccount() string
	// ConnAccount names the account a client connection belongs to.
	ConnAccount(ci *server.ConnInfo) string
}

// globalOnly is the AccountSource of a server with the global account
// only, the default.
type globalOnly struct{}

func (globalOnly) Accounts() []string                  { return []string{GlobalAccount} }
func (globalOnly) SystemAccount() string               { return "" }
func (globalOnly) ConnAccount(*server.ConnInfo) string { return GlobalAccount }

func (m *Monitor) accounts() AccountSource {
	if m.opts.Accounts == nil {
		return globalOnly{}
	}
	return m.opts.Accounts
}

// hasAccount reports whether the server has the account name.
func (m *Monitor) hasAccount(name string) bool {
	for _, a := range m.accounts().Accounts() {
		if a == name {
			return true
		}
	}
	return false
}

// AccountOf names the account of the client connection cid, "" when no
// such client is connected (an internal publisher, or a client of another
// server).
func (m *Monitor) AccountOf(cid uint64) string {
	for _, ci := range m.opts.Server.Connections() {
		if ci.CID == cid {
			return m.accounts().ConnAccount(&ci)
		}
	}
	return ""
}
