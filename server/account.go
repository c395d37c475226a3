package server

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/jetwal/jetwal/server/sublist"
)

// Accounts. Every client belongs to one account, chosen at CONNECT by its
// identity (auth.Identity.Account; "" or no authentication = the global
// account $G). An account has its own subscriptions: a message published
// in one account reaches subscribers of that account only, here and, in a
// cluster, on other servers (the account travels in RS+, RS- and RMSG).
// The accounts are fixed when the server is made (Options.Accounts); a
// client's account never changes.

// GlobalAccount is the account of every client while there are no accounts.
const GlobalAccount = "$G"

// InternalAccount names the server's internal account: the subject space
// of the cluster's own coordination (clustered JetStream's proposals and
// progress reports). No client is ever in it — no identity can name it and
// no configured account may take its name — so only the server's own
// internal subscriptions and the routes of the cluster (which passed the
// route authentication) publish or subscribe there.
const InternalAccount = "$JWAL"

// Account is one account's subject space. Its methods (Subscribe,
// Publish, ...) are the in-process client of that account; the Server's
// methods of the same names act on $G.
type Account struct {
	srv    *Server
	name   string
	wire   []byte                       // the name in route frames (cluster account for $G)
	subs   *sublist.List[*subscription] // local subscriptions, TCP and internal
	remote *sublist.List[*remoteSub]    // interest of other servers; nil without a cluster
	hook   atomic.Pointer[func()]       // interest hook (SetInterestHook)
	system bool                         // Options.SystemAccount
	// streams says which internal subscriptions are streams, for message
	// traces (msgtrace.go); set by the account's JetStream.
	streams atomic.Pointer[StreamTracer]
}

func newAccount(s *Server, name string) *Account {
	a := &Account{srv: s, name: name, wire: []byte(name), subs: sublist.New[*subscription](sublist.Options{})}
	return a
}

// Name returns the account's name.
func (a *Account) Name() string { return a.name }

// Server returns the server the account belongs to.
func (a *Account) Server() *Server { return a.srv }

// validAccountName reports whether n can name an account: one subject
// token of printable characters, usable as a directory name.
func validAccountName(n string) error {
	switch {
	case n == "":
		return fmt.Errorf("empty account name")
	case n == "." || n == "..":
		return fmt.Errorf("account %q cannot name a directory", n)
	case strings.ContainsAny(n, " \t\r\n./\\*>\x00"):
		return fmt.Errorf("account %q: want one subject token without wildcards, slashes or spaces", n)
	}
	return nil
}

// initAccounts makes $G and the accounts of opts.
func (s *Server) initAccounts(names []string) error {
	s.gacc = newAccount(s, GlobalAccount)
	s.accounts = map[string]*Account{GlobalAccount: s.gacc}
	s.internal = newAccount(s, InternalAccount)
	for _, n := range names {
		if n == GlobalAccount {
			continue
		}
		if n == InternalAccount {
			return fmt.Errorf("server: options: account name %q is reserved for the server's internal use", n)
		}
		if err := validAccountName(n); err != nil {
			return fmt.Errorf("server: options: %w", err)
		}
		if _, dup := s.accounts[n]; dup {
			return fmt.Errorf("server: options: account %q named twice", n)
		}
		s.accounts[n] = newAccount(s, n)
	}
	if n := s.opts.SystemAccount; n != "" {
		a := s.accounts[n]
		if a == nil {
			return fmt.Errorf("server: options: system account %q is not one of the accounts", n)
		}
		a.system = true
	}
	return nil
}

// Account returns the named account ("" = $G), or nil when the server has
// no such account.
func (s *Server) Account(name string) *Account {
	if name == "" {
		return s.gacc
	}
	return s.accounts[name]
}

// GlobalAccount returns $G.
func (s *Server) GlobalAccount() *Account { return s.gacc }

// InternalAccount returns the account no client can be in (see the
// InternalAccount constant). It is not among AccountNames.
func (s *Server) InternalAccount() *Account { return s.internal }

// AccountNames returns the names of every account, $G included, sorted.
func (s *Server) AccountNames() []string {
	out := make([]string, 0, len(s.accounts))
	for n := range s.accounts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// accountByWire returns the account a route frame names, or nil. last is
// the route's previous answer, tried first so that a stream of messages in
// one account costs no map lookup.
func (s *Server) accountByWire(name []byte, last *Account) *Account {
	if last != nil && string(last.wire) == string(name) {
		return last
	}
	if s.cluster != nil && string(name) == string(s.cluster.account) {
		return s.gacc
	}
	if string(name) == InternalAccount {
		return s.internal
	}
	if string(name) == GlobalAccount {
		return nil // $G under another wire name is not ours
	}
	return s.accounts[string(name)]
}

// SetInterestHook sets fn to be called after a subscription of this
// account is added or removed (here or, in a cluster, on another server)
// and after one of its clients closes. fn must not block. nil removes it.
func (a *Account) SetInterestHook(fn func()) {
	if fn == nil {
		a.hook.Store(nil)
		return
	}
	a.hook.Store(&fn)
}

func (a *Account) interestChanged() {
	if fn := a.hook.Load(); fn != nil {
		(*fn)()
	}
}

// NumSubscriptions returns the account's local subscriptions.
func (a *Account) NumSubscriptions() int { return a.subs.Count() }

// ServerName returns the server name sent in INFO (Server.Name). Server
// and Account both have it, so that either can host JetStream.
func (s *Server) ServerName() string { return s.name }

// ServerName returns the name of the account's server.
func (a *Account) ServerName() string { return a.srv.name }

// Version returns the server's version (Server.Version).
func (a *Account) Version() string { return a.srv.Version() }

// Options returns the server's options (Server.Options).
func (a *Account) Options() Options { return a.srv.Options() }

// Connection returns a snapshot of the connected client cid when it is a
// client of this account (Server.Connection).
func (a *Account) Connection(cid uint64) (ConnInfo, bool) {
	ci, ok := a.srv.Connection(cid)
	if !ok || ci.Account != a.name {
		return ConnInfo{}, false
	}
	return ci, true
}

// OnShutdown registers fn to run at server shutdown (Server.OnShutdown).
func (a *Account) OnShutdown(fn func()) { a.srv.OnShutdown(fn) }
