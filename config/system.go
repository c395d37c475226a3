package config

import (
	"sort"

	"github.com/jetwal/jetwal/server/auth"
)

// The system account. jetwal has a single account, so of nats-server's
// accounts { } it accepts one form only: an accounts block declaring just
// the account that system_account names, with users:
//
//	accounts { SYS: { users: [ {user: admin, password: secret} ] } }
//	system_account: SYS
//
// Those users log in to jetwal's one account with fixed permissions:
// publish to $SYS.> (the server requests of package sysreq), subscribe to
// _INBOX.> (their answers) and $SYS.> (the connection events), nothing
// else. They are not isolated from
// the application's subjects the way nats-server's $SYS account is, which
// is why they may not be given permissions of their own. Any other
// account, or any other field of the system account, is refused.

// SystemPublish and SystemSubscribe are the system account users'
// permissions.
var (
	SystemPublish   = []string{"$SYS.>"}
	SystemSubscribe = []string{"_INBOX.>", "$SYS.>"}
)

// declaredAccount is one account of the accounts block, resolved once the
// whole file is read (system_account may come after it).
type declaredAccount struct {
	at    value
	users []auth.User
	nkeys []auth.NkeyUser
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
		am, err := av.block(n)
		if err != nil {
			return err
		}
		d := &declaredAccount{at: av}
		tmp := &Config{File: c.File, Set: make(map[string]bool)}
		err = eachKey(am, av.pos, func(k string, fv value) error {
			if lower(k) != "users" {
				return fv.errorf("%s.%s: not supported by jetwal; only the system account's users may be declared", n, k)
			}
			return tmp.applyUsers(n+"."+k, fv)
		})
		if err != nil {
			return err
		}
		c.Warnings = append(c.Warnings, tmp.Warnings...)
		d.users, d.nkeys = tmp.Auth.Users, tmp.Auth.Nkeys
		c.accounts[acc] = d
		return nil
	})
}

func (c *Config) applySystemAccount(name string, v value) error {
	s, err := v.str(name)
	if err == nil && s == "" {
		return v.errorf("%s: empty account name", name)
	}
	c.SystemAccount, c.systemAt = s, v
	return err
}

// resolveAccounts checks the accounts block against system_account and
// adds the system account's users to Auth with the system permissions.
func (c *Config) resolveAccounts() error {
	names := make([]string, 0, len(c.accounts))
	for n := range c.accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n != c.SystemAccount {
			return c.accounts[n].at.errorf("accounts.%s: jetwal has a single account; only the account named by system_account may be declared", n)
		}
	}
	if c.SystemAccount == "" {
		return nil
	}
	d := c.accounts[c.SystemAccount]
	if d == nil {
		if c.SystemAccount == "$SYS" {
			return nil // nats-server's default name, with no users
		}
		return c.systemAt.errorf("system_account: account %q is not declared in accounts { }", c.SystemAccount)
	}
	for _, u := range d.users {
		if u.Permissions != nil {
			return d.at.errorf("accounts.%s: user %q: system account users have fixed permissions in jetwal (publish $SYS.>, subscribe _INBOX.> and $SYS.>)", c.SystemAccount, u.Username)
		}
		u.Permissions = systemPermissions()
		c.Auth.Users = append(c.Auth.Users, u)
	}
	for _, u := range d.nkeys {
		if u.Permissions != nil {
			return d.at.errorf("accounts.%s: nkey user %q: system account users have fixed permissions in jetwal (publish $SYS.>, subscribe _INBOX.> and $SYS.>)", c.SystemAccount, u.Nkey)
		}
		u.Permissions = systemPermissions()
		c.Auth.Nkeys = append(c.Auth.Nkeys, u)
	}
	return nil
}

func systemPermissions() *auth.Permissions {
	return &auth.Permissions{
		Publish:   &auth.SubjectPermission{Allow: append([]string(nil), SystemPublish...)},
		Subscribe: &auth.SubjectPermission{Allow: append([]string(nil), SystemSubscribe...)},
	}
}
