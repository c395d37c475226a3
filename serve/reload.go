package serve

import (
	"errors"
	"slices"
)

// Reload applies what a configuration reload may change while running
// (n: the options read again, e.g. by FromConfig): authentication and
// authorization — users, passwords, tokens, nkeys and permissions — for
// every connection made from then on; connections already up keep the
// identity and permissions they logged in with. Other settings take effect
// at the next restart. Options that change the accounts or the system
// account (fixed at start) are refused and change nothing.
func (s *Server) Reload(n Options) error {
	if err := n.ResolveAccounts(); err != nil {
		return err
	}
	if !slices.Equal(n.Server.Accounts, s.opts.Server.Accounts) || n.Server.SystemAccount != s.opts.Server.SystemAccount {
		// Users bound to accounts the server does not have would be refused.
		return errors.New("the accounts or the system account changed: that takes a restart")
	}
	if n.Server.Auth == nil {
		s.SetAuthenticator(nil)
	} else {
		s.SetAuthenticator(n.Server.Auth)
	}
	if n.Server.Websocket != nil {
		s.SetWebsocketAuthenticator(n.Server.Websocket.Auth)
	}
	return nil
}
