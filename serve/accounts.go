package serve

import (
	"cmp"

	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
)

// serverAccounts is the one place the monitor and the system requests
// learn the server's accounts from (monitor.AccountSource). Without an
// accounts block jetwal has the global account and the system account
// (SystemAccount, else nats-server's "$SYS"). With accounts, the server's
// accounts and each client's own.
type serverAccounts struct {
	system string         // the system account
	srv    *server.Server // with accounts; nil without
}

// accountSource is the monitor's view of the accounts.
func (o *Options) accountSource(srv *server.Server) serverAccounts {
	a := serverAccounts{system: o.systemAccount()}
	if o.Accounts != nil {
		a.srv = srv
	}
	return a
}

// Accounts returns every account: with accounts the server's, else the
// system account and the global account.
func (a serverAccounts) Accounts() []string {
	if a.srv != nil {
		return a.srv.AccountNames()
	}
	return []string{a.system, monitor.GlobalAccount}
}

// SystemAccount names the system account.
func (a serverAccounts) SystemAccount() string { return a.system }

// ConnAccount returns the account of the connection.
func (serverAccounts) ConnAccount(ci *server.ConnInfo) string {
	return cmp.Or(ci.Account, monitor.GlobalAccount)
}
