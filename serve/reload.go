package serve

// Configuration reload: SIGHUP (or `jetwal serve --signal reload=PID`,
// which sends it) makes a running server read its configuration file
// again, with the same command-line flags on top. What changes at once is
// authentication and authorization: users, passwords, tokens, nkeys and
// permissions apply to every connection made from then on; connections
// already up keep the identity and permissions they logged in with. Other
// settings take effect at the next restart. A configuration that does not
// load, or that changes the accounts (fixed at start), is logged and the
// server keeps its current settings.

import (
	"errors"
	"io"
	"log/slog"
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

// Reload reads c's configuration file again with c's flags on top and
// applies it to s (Server.Reload), logging the outcome to log: a file that
// does not load or a refused change keeps the current settings.
func (c *CommandLine) Reload(s *Server, log *slog.Logger) {
	if c.ConfigFile == "" {
		log.Warn("Reload requested, but the server was started without a configuration file")
		return
	}
	n, err := ParseCommandLine(c.Args, c.Version, io.Discard)
	if err == nil {
		for _, w := range n.Warnings {
			log.Warn(w.String())
		}
		err = s.Reload(n.Options)
	}
	if err != nil {
		log.Error("Reloading the configuration failed; keeping the current settings", "err", err)
		return
	}
	log.Info("Reloaded server configuration " + c.ConfigFile + " (authorization now; other changes at restart)")
}
