package sysreq

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// TestUserInfoGlobal: a client of $G gets its user and $G, in the data
// shape of nats-server's capture (01-account-info).
func TestUserInfoGlobal(t *testing.T) {
	s := startNode(t, "solo", nil)
	nc := connect(t, s)
	m, err := nc.Request(UserInfoSubject, []byte("{}"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Server ServerInfo      `json:"server"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		t.Fatal(err)
	}
	if string(resp.Data) != `{"user":"app","account":"$G","account_name":"$G"}` || resp.Server.Name != "solo" {
		t.Fatalf("user info %s", m.Data)
	}
}

// startAccountsNode is startNode with users a (account A, with
// permissions), b (account A), g ($G) and admin (system account SYS), and
// no user for clients without credentials.
func startAccountsNode(t *testing.T, name string, co *server.ClusterOptions) *server.Server {
	t.Helper()
	a, err := auth.New(auth.Options{Users: []auth.User{
		{Username: "a", Password: "pw", Account: "A", Permissions: &auth.Permissions{
			Publish:  &auth.SubjectPermission{Allow: []string{"a.>", "$SYS.REQ.USER.INFO", "_INBOX.>", "$SYS.REQ.SERVER.PING"}},
			Response: &auth.ResponsePermission{MaxMsgs: 1, Expires: time.Minute},
		}},
		{Username: "b", Password: "pw", Account: "A"},
		{Username: "g", Password: "pw"},
		{Username: "admin", Password: "pw", Account: "SYS"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Options{ServerName: name, Host: "127.0.0.1", Auth: a, Accounts: []string{"A", "SYS"}, SystemAccount: "SYS", Cluster: co})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	startService(t, s, nil, Options{})
	return s
}

// TestSystemAccountRequests: with accounts, the server requests answer in
// the system account only; USER.INFO answers everywhere, from the
// requester's own server, naming its account.
func TestSystemAccountRequests(t *testing.T) {
	s0 := startAccountsNode(t, "s0", clusterOpts(t))
	s1 := startAccountsNode(t, "s1", clusterOpts(t, "nats://"+s0.ClusterAddr().String()))
	waitFor(t, "route", func() bool { return len(s0.Routes()) == 1 && len(s1.Routes()) == 1 })
	admin := connect(t, s0, nats.UserInfo("admin", "pw"))
	na := connect(t, s1, nats.UserInfo("a", "pw"))
	ng := connect(t, s1, nats.UserInfo("g", "pw"))

	waitFor(t, "both servers answer PING in SYS", func() bool { return answers(t, admin, "$SYS.REQ.SERVER.PING") == 2 })
	for _, nc := range []*nats.Conn{na, ng} {
		if _, err := nc.Request("$SYS.REQ.SERVER.PING", nil, 2*time.Second); err != nats.ErrNoResponders {
			t.Fatalf("PING from %s: %v, want no responders", nc.Opts.User, err)
		}
	}
	for _, c := range []struct {
		nc         *nats.Conn
		user, acct string
	}{{na, "a", "A"}, {ng, "g", "$G"}, {admin, "admin", "SYS"}} {
		inbox := nats.NewInbox()
		sub, err := c.nc.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.nc.PublishRequest(UserInfoSubject, inbox, nil); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("user info of %s: %v", c.user, err)
		}
		var resp struct {
			Server ServerInfo `json:"server"`
			Data   UserInfo   `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			t.Fatal(err)
		}
		if d := resp.Data; d.User != c.user || d.Account != c.acct || d.AccountName != c.acct || (d.Permissions != nil) != (c.user == "a") {
			t.Fatalf("user info of %s: %s", c.user, m.Data)
		}
		if c.user == "a" && !strings.Contains(string(m.Data), `"permissions":{"publish":{"allow":["a.\u003e","$SYS.REQ.USER.INFO","_INBOX.\u003e","$SYS.REQ.SERVER.PING"]},"responses":{"max":1,"ttl":60000000000}}`) {
			t.Fatalf("a's permissions: %s", m.Data)
		}
		// One answer only: the other server does not know the client. A
		// PING round trip on the same connection proves nothing else came.
		if err := c.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		if extra, err := sub.NextMsg(200 * time.Millisecond); err == nil {
			t.Fatalf("second user info answer for %s: %s", c.user, extra.Data)
		}
	}
}

// answers counts the answers to subj arriving within a second.
func answers(t *testing.T, nc *nats.Conn, subj string) int {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subj, inbox, nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := sub.NextMsg(time.Second); err != nil {
			return n
		}
		n++
	}
}
