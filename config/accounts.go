package config

import (
	"math"
	"sort"
	"strings"

	"github.com/jetwal/jetwal/server/auth"
)

// Accounts. accounts { } declares accounts with their users and JetStream:
//
//	accounts {
//	  A: { users: [ {user: a, password: pa} ], jetstream: enabled }
//	  B: { users: [ {nkey: U...} ], jetstream: { max_mem: 1G, max_file: 10G, max_streams: 10, max_consumers: 100, max_ack_pending: 500 } }
//	  SYS: { users: [ {user: admin, password: secret} ] }
//	}
//	system_account: SYS
//
// Each declared account is a server account of its own (Config.Accounts):
// its users' messages stay in it. The users of authorization { } stay in
// $G. A block that declares only the account system_account names keeps
// jetwal's older single-account form (system.go). Of nats-server's account
// fields, exports and imports (sharing between accounts) and the others
// not listed above are refused.

// Account is one declared account.
type Account struct {
	Name string
	// JetStream is the account's JetStream and its limits; nil = none.
	JetStream *AccountJetStream
}

// AccountJetStream is an account's jetstream setting. A limit of -1 means
// unlimited (nats-server's default). MaxAckPending bounds the
// max_ack_pending of the account's consumers (and is their default when
// lower than nats-server's 1000).
type AccountJetStream struct {
	MaxMemory, MaxStore      int64
	MaxStreams, MaxConsumers int
	MaxAckPending            int
}

// unlimitedJetStream is `jetstream: enabled`.
func unlimitedJetStream() *AccountJetStream {
	return &AccountJetStream{MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1}
}

// declaredAccount is one account of the accounts block, resolved once the
// whole file is read (system_account may come after it).
type declaredAccount struct {
	at    value
	users []auth.User
	nkeys []auth.NkeyUser
	js    *AccountJetStream
	jsAt  value
}

func (c *Config) applyAccounts(name string, v value) error {
	m, err := v.block(name)
	if err != nil {
		return err
	}
	if c.accounts == nil {
		c.accounts = make(map[string]*declaredAccount)
	}
	return eachKey(m, v.pos, func(acc string, av value) error {
		n := name + "." + acc
		if acc == "$G" {
			return av.errorf("%s: $G is the global account; its users are those of authorization { }", n)
		}
		if strings.ContainsAny(acc, " \t./\\*>") || acc == "" {
			return av.errorf("%s: an account name is one subject token without wildcards, dots, slashes or spaces", n)
		}
		am, err := av.block(n)
		if err != nil {
			return err
		}
		d := &declaredAccount{at: av}
		tmp := &Config{File: c.File, Set: make(map[string]bool), userAt: c.userAt}
		err = eachKey(am, av.pos, func(k string, fv value) error {
			fn := n + "." + k
			switch lower(k) {
			case "users":
				return tmp.applyUsers(fn, fv)
			case "jetstream":
				d.jsAt = fv
				d.js, err = accountJetStream(fn, fv)
				return err
			case "exports", "imports":
				return fv.errorf("%s: not supported by jetwal: accounts cannot share subjects or services (no exports or imports)", fn)
			default:
				return fv.errorf("%s: not supported by jetwal; an account has users and jetstream only", fn)
			}
		})
		if err != nil {
			return err
		}
		c.userAt = tmp.userAt
		c.Warnings = append(c.Warnings, tmp.Warnings...)
		d.users, d.nkeys = tmp.Auth.Users, tmp.Auth.Nkeys
		c.accounts[acc] = d
		return nil
	})
}

// accountJetStream parses an account's jetstream: enabled, disabled, or
// a block of limits.
func accountJetStream(name string, v value) (*AccountJetStream, error) {
	if _, ok := v.v.(map[string]any); !ok {
		on, err := v.boolean(name)
		if err != nil || !on {
			return nil, err
		}
		return unlimitedJetStream(), nil
	}
	m, _ := v.block(name)
	js := unlimitedJetStream()
	err := eachKey(m, v.pos, func(k string, v value) error {
		n := name + "." + k
		var err error
		var i int64
		switch lower(k) {
		case "max_mem", "max_memory", "max_memory_store", "max_mem_store":
			js.MaxMemory, err = limitSize(n, v)
		case "max_file", "max_store", "max_file_store":
			js.MaxStore, err = limitSize(n, v)
		case "max_streams":
			i, err = v.integer(n, -1, math.MaxInt32)
			js.MaxStreams = int(i)
		case "max_consumers":
			i, err = v.integer(n, -1, math.MaxInt32)
			js.MaxConsumers = int(i)
		case "max_ack_pending":
			i, err = v.integer(n, -1, math.MaxInt32)
			js.MaxAckPending = int(i)
		default:
			err = v.errorf("%s: not supported by jetwal; an account's jetstream has max_mem, max_file, max_streams, max_consumers and max_ack_pending", n)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return js, nil
}

// limitSize is a size, or -1 for unlimited.
func limitSize(name string, v value) (int64, error) {
	if n, ok := v.v.(int64); ok && n == -1 {
		return -1, nil
	}
	return v.size(name)
}

// noteUser records where user name was declared and refuses a second
// declaration, in whichever account.
func (c *Config) noteUser(name string, at value, what string) error {
	if prev, ok := c.userAt[name]; ok {
		return at.errorf("%s %q is already declared at %s; a user belongs to one account", what, name, prev)
	}
	if c.userAt == nil {
		c.userAt = make(map[string]pos)
	}
	c.userAt[name] = at.pos
	return nil
}

// resolveAccounts checks the accounts block against system_account. With
// accounts other than the system one, every declared account becomes a
// server account (Accounts) and its users join Auth bound to it;
// otherwise the older single-account form applies (resolveSystemOnly).
func (c *Config) resolveAccounts() error {
	names := make([]string, 0, len(c.accounts))
	multi := false
	for n := range c.accounts {
		names = append(names, n)
		if n != c.SystemAccount {
			multi = true
		}
	}
	sort.Strings(names)
	if !multi {
		return c.resolveSystemOnly()
	}
	if c.SystemAccount != "" && c.SystemAccount != "$SYS" && c.accounts[c.SystemAccount] == nil {
		return c.systemAt.errorf("system_account: account %q is not declared in accounts { }", c.SystemAccount)
	}
	for _, n := range names {
		d := c.accounts[n]
		a := Account{Name: n, JetStream: d.js}
		if n == c.SystemAccount && d.js != nil {
			return d.jsAt.errorf("accounts.%s.jetstream: the system account cannot have JetStream", n)
		}
		c.Accounts = append(c.Accounts, a)
		for _, u := range d.users {
			u.Account = n
			c.Auth.Users = append(c.Auth.Users, u)
		}
		for _, u := range d.nkeys {
			u.Account = n
			c.Auth.Nkeys = append(c.Auth.Nkeys, u)
		}
	}
	if c.SystemAccount == "$SYS" && c.accounts["$SYS"] == nil {
		c.Accounts = append(c.Accounts, Account{Name: "$SYS"})
	}
	return nil
}

// MultiAccount reports whether the file declares accounts of its own (and
// not only the system account's users in the older form).
func (c *Config) MultiAccount() bool { return len(c.Accounts) > 0 }
