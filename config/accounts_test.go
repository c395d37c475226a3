package config

import (
	"testing"
)

// TestAccounts: declared accounts become server accounts with their users
// bound to them; authorization { } users stay in $G; no_auth_user may name
// a user of any account.
func TestAccounts(t *testing.T) {
	c := load(t, "a.conf", `
authorization { users: [ {user: g, password: g} ] }
accounts {
  A: { users: [ {user: a, password: pa, permissions: { publish: "a.>" }} ], jetstream: enabled }
  B: {
    users: [ {user: b, password: pb}, {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4} ]
    jetstream: { max_mem: 1MB, max_file: 2MB, max_streams: 3, max_consumers: 4, max_ack_pending: 5 }
  }
  C: { users: [ {user: c, password: pc} ] }
  SYS: { users: [ {user: admin, password: s} ] }
}
system_account: SYS
no_auth_user: b
`)
	if !c.MultiAccount() || len(c.Accounts) != 4 {
		t.Fatalf("accounts %+v", c.Accounts)
	}
	byName := map[string]Account{}
	for _, a := range c.Accounts {
		byName[a.Name] = a
	}
	if js := byName["A"].JetStream; js == nil || js.MaxMemory != -1 || js.MaxStore != -1 || js.MaxStreams != -1 || js.MaxConsumers != -1 || js.MaxAckPending != -1 {
		t.Fatalf("A's jetstream %+v", js)
	}
	if js := byName["B"].JetStream; js == nil || js.MaxMemory != 1<<20 || js.MaxStore != 2<<20 || js.MaxStreams != 3 || js.MaxConsumers != 4 || js.MaxAckPending != 5 {
		t.Fatalf("B's jetstream %+v", js)
	}
	if byName["C"].JetStream != nil || byName["SYS"].JetStream != nil {
		t.Fatal("C or SYS has JetStream")
	}
	users := map[string]string{}
	for _, u := range c.Auth.Users {
		users[u.Username] = u.Account
	}
	want := map[string]string{"g": "", "a": "A", "b": "B", "c": "C", "admin": "SYS"}
	for u, acc := range want {
		if got, ok := users[u]; !ok || got != acc {
			t.Errorf("user %s in account %q, want %q", u, got, acc)
		}
	}
	for _, u := range c.Auth.Users {
		if u.Username == "admin" && u.Permissions != nil {
			t.Errorf("a system account user of a real account got fixed permissions: %+v", u.Permissions)
		}
		if u.Username == "a" && (u.Permissions == nil || u.Permissions.Publish.Allow[0] != "a.>") {
			t.Errorf("a's permissions %+v", u.Permissions)
		}
	}
	if len(c.Auth.Nkeys) != 1 || c.Auth.Nkeys[0].Account != "B" {
		t.Fatalf("nkeys %+v", c.Auth.Nkeys)
	}
	if c.Auth.NoAuthUser != "b" {
		t.Fatalf("no_auth_user %q", c.Auth.NoAuthUser)
	}
}
