package config

import (
	"github.com/jetwal/jetwal/server/auth"
)

// The system account in jetwal's older single-account form: an accounts
// block declaring just the account that system_account names, with users
// (with other accounts, see accounts.go):
//
//	accounts { SYS: { users: [ {user: admin, password: secret} ] } }
//	system_account: SYS
//
// Those users log in to the system account (Account set to its name),
// where the server requests of package sysreq and the connection events
// live, apart from the application's accounts as nats-server's $SYS is.
// They keep jetwal's fixed permissions there: publish to $SYS.>,
// subscribe to _INBOX.> (their answers) and $SYS.>, nothing else.

// SystemPublish and SystemSubscribe are the system account users'
// permissions.
var (
	SystemPublish   = []string{"$SYS.>"}
	SystemSubscribe = []string{"_INBOX.>", "$SYS.>"}
)

func (c *Config) applySystemAccount(name string, v value) error {
	s, err := v.str(name)
	if err == nil && s == "" {
		return v.errorf("%s: empty account name", name)
	}
	c.SystemAccount, c.systemAt = s, v
	return err
}

// resolveSystemOnly handles an accounts block that declares the system
// account alone: its users join Auth, bound to the system account, with
// the system permissions.
func (c *Config) resolveSystemOnly() error {
	if c.SystemAccount == "" {
		return nil
	}
	d := c.accounts[c.SystemAccount]
	if d != nil && d.js != nil {
		return d.jsAt.errorf("accounts.%s.jetstream: the system account cannot have JetStream", c.SystemAccount)
	}
	if d == nil {
		if c.SystemAccount == "$SYS" {
			return nil // nats-server's default name, with no users
		}
		return c.systemAt.errorf("system_account: account %q is not declared in accounts { }", c.SystemAccount)
	}
	var err error
	for _, u := range d.users {
		if u.Permissions, err = c.systemUserPermissions(d, u.Permissions, "user", u.Username); err != nil {
			return err
		}
		u.Account = c.SystemAccount
		c.Auth.Users = append(c.Auth.Users, u)
	}
	for _, u := range d.nkeys {
		if u.Permissions, err = c.systemUserPermissions(d, u.Permissions, "nkey user", u.Nkey); err != nil {
			return err
		}
		u.Account = c.SystemAccount
		c.Auth.Nkeys = append(c.Auth.Nkeys, u)
	}
	return nil
}

// systemUserPermissions returns the fixed permissions of a user of the
// system account d (kind and id name it in the error), which must not
// give permissions of its own.
func (c *Config) systemUserPermissions(d *declaredAccount, own *auth.Permissions, kind, id string) (*auth.Permissions, error) {
	if own != nil {
		return nil, d.at.errorf("accounts.%s: %s %q: system account users have fixed permissions in jetwal (publish $SYS.>, subscribe _INBOX.> and $SYS.>)", c.SystemAccount, kind, id)
	}
	return systemPermissions(), nil
}

func systemPermissions() *auth.Permissions {
	return &auth.Permissions{
		Publish:   &auth.SubjectPermission{Allow: append([]string(nil), SystemPublish...)},
		Subscribe: &auth.SubjectPermission{Allow: append([]string(nil), SystemSubscribe...)},
	}
}
