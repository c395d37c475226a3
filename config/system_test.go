package config

import (
	"slices"
	"testing"
)

// TestSystemAccount: the system account's users join the users of
// authorization { } with the fixed system permissions, whichever of
// accounts and system_account comes first.
func TestSystemAccount(t *testing.T) {
	c := load(t, "s.conf", `
authorization { users: [ {user: app, password: app} ] }
accounts {
  SYS: { users: [ {user: admin, password: "s3cret"}, {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ] }
}
system_account: SYS
`)
	if c.SystemAccount != "SYS" || !c.Set["system_account"] || !c.Set["accounts"] {
		t.Fatalf("system account %q, set %v", c.SystemAccount, c.Set)
	}
	if len(c.Auth.Users) != 2 || c.Auth.Users[0].Username != "app" || c.Auth.Users[0].Permissions != nil {
		t.Fatalf("users %+v", c.Auth.Users)
	}
	admin := c.Auth.Users[1]
	if admin.Username != "admin" || admin.Permissions == nil ||
		!slices.Equal(admin.Permissions.Publish.Allow, []string{"$SYS.>"}) ||
		!slices.Equal(admin.Permissions.Subscribe.Allow, []string{"_INBOX.>", "$SYS.>"}) {
		t.Fatalf("system user %+v", admin)
	}
	if len(c.Auth.Nkeys) != 1 || c.Auth.Nkeys[0].Permissions == nil || c.Auth.Nkeys[0].Permissions.Publish.Allow[0] != "$SYS.>" {
		t.Fatalf("system nkey user %+v", c.Auth.Nkeys)
	}

	c = load(t, "s.conf", "system_account: SYS\naccounts { SYS: { users: [ {user: a, password: b} ] } }\n")
	if len(c.Auth.Users) != 1 || c.Auth.Users[0].Username != "a" {
		t.Fatalf("system_account before accounts: %+v", c.Auth.Users)
	}
	// nats-server's default name needs no declaration.
	c = load(t, "s.conf", "system_account: \"$SYS\"\n")
	if c.SystemAccount != "$SYS" || len(c.Auth.Users) != 0 {
		t.Fatalf("$SYS: %+v", c)
	}
}
