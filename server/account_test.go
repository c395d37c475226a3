package server

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/server/auth"
)

// accountAuth has users a (account A), b (account B) and g ($G), password
// "pw" each.
func accountAuth(t testing.TB) *auth.Authenticator {
	t.Helper()
	return newAuth(t, auth.Options{Users: []auth.User{
		{Username: "a", Password: "pw", Account: "A"},
		{Username: "b", Password: "pw", Account: "B"},
		{Username: "g", Password: "pw"},
	}})
}

// noMessage fails if ch receives anything within a short grace period.
// Used only after a later message on the same path proved delivery.
func noMessage(t testing.TB, ch chan *nats.Msg) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("unexpected message on %q: %q", m.Subject, m.Data)
	default:
	}
}

func TestAccountsIsolateClients(t *testing.T) {
	s := startServer(t, Options{Auth: accountAuth(t), Accounts: []string{"A", "B"}})
	na := connect(t, s, nats.UserInfo("a", "pw"))
	nb := connect(t, s, nats.UserInfo("b", "pw"))
	ng := connect(t, s, nats.UserInfo("g", "pw"))
	cha, _ := collect(t, na, "x.>", "")
	chg, _ := collect(t, ng, "x.>", "")
	// Publishes from B, then from A: A's subscriber must see only A's.
	for _, nc := range []*nats.Conn{nb, na} {
		if err := nc.Publish("x.1", []byte(nc.Opts.User)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if m := recv(t, cha); string(m.Data) != "a" {
		t.Fatalf("A's subscriber got %q, want only A's message", m.Data)
	}
	noMessage(t, cha)
	if err := ng.Publish("x.2", []byte("g")); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, chg); string(m.Data) != "g" {
		t.Fatalf("$G's subscriber got %q", m.Data)
	}
	// Request/reply stays in the account: B's responder is not A's.
	if _, err := nb.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond([]byte("from B")) }); err != nil {
		t.Fatal(err)
	}
	if err := nb.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := na.Request("svc", nil, 2*time.Second); err != nats.ErrNoResponders {
		t.Fatalf("A's request to B's service: err %v, want no responders", err)
	}
	if m, err := nb.Request("svc", nil, 5*time.Second); err != nil || string(m.Data) != "from B" {
		t.Fatalf("B's request: %v %v", m, err)
	}
	cis := s.Connections()
	accs := map[string]string{}
	for _, ci := range cis {
		accs[ci.AuthorizedUser] = ci.Account
	}
	if accs["a"] != "A" || accs["b"] != "B" || accs["g"] != GlobalAccount {
		t.Fatalf("connection accounts %v", accs)
	}
}

func TestAccountInternalSubscriptions(t *testing.T) {
	s := startServer(t, Options{Auth: accountAuth(t), Accounts: []string{"A", "B"}})
	a := s.Account("A")
	if a == nil || s.Account("nope") != nil || s.Account("") != s.GlobalAccount() {
		t.Fatal("Account lookup")
	}
	got := make(chan string, 10)
	if _, err := a.Subscribe("svc.>", "", func(m *Msg) {
		got <- m.Subject
		a.Publish(m.Reply, "", nil, []byte("A here"))
	}); err != nil {
		t.Fatal(err)
	}
	hooked := make(chan struct{}, 10)
	a.SetInterestHook(func() { hooked <- struct{}{} })
	nb := connect(t, s, nats.UserInfo("b", "pw"))
	if _, err := nb.Request("svc.1", nil, time.Second); err != nats.ErrNoResponders {
		t.Fatalf("B reached A's internal subscription: %v", err)
	}
	if a.HasInterest("b.only") {
		t.Fatal("interest before any subscriber")
	}
	if _, err := nb.SubscribeSync("b.only"); err != nil {
		t.Fatal(err)
	}
	if err := nb.Flush(); err != nil {
		t.Fatal(err)
	}
	if a.HasInterest("b.only") || !s.Account("B").HasInterest("b.only") || !s.Account("B").HasLiteralInterest("b.only") {
		t.Fatal("interest leaked between accounts")
	}
	na := connect(t, s, nats.UserInfo("a", "pw"))
	m, err := na.Request("svc.2", nil, 5*time.Second)
	if err != nil || string(m.Data) != "A here" {
		t.Fatalf("A's request: %v %v", m, err)
	}
	if subj := <-got; subj != "svc.2" {
		t.Fatalf("handler got %q", subj)
	}
	select {
	case <-hooked: // A's request inbox subscription
	case <-time.After(10 * time.Second):
		t.Fatal("A's interest hook not called")
	}
	if a.PublishAs("svc.x", "shown", "", nil, nil) != true {
		t.Fatal("PublishAs in A found no subscriber")
	}
}

func TestAccountUnknownIsRefused(t *testing.T) {
	a := newAuth(t, auth.Options{Users: []auth.User{{Username: "x", Password: "pw", Account: "X"}}})
	s := startServer(t, Options{Auth: a})
	if _, err := nats.Connect(s.ClientURL(), nats.UserInfo("x", "pw"), nats.NoReconnect()); err == nil {
		t.Fatal("a user of an account the server does not have logged in")
	}
	if _, err := New(Options{Accounts: []string{"a/b"}}); err == nil {
		t.Fatal("account name with a slash accepted")
	}
	if _, err := New(Options{Accounts: []string{"A", "A"}}); err == nil {
		t.Fatal("duplicate account accepted")
	}
}

// TestInternalAccountUnreachable: no configured account, cluster wire
// name or user identity can be the internal account, and it is not among
// the accounts the server lists.
func TestInternalAccountUnreachable(t *testing.T) {
	if _, err := New(Options{Accounts: []string{InternalAccount}}); err == nil {
		t.Fatalf("an account named %s accepted", InternalAccount)
	}
	co := clusterOpts(t, "C")
	co.Account = InternalAccount
	if _, err := New(Options{Cluster: co}); err == nil {
		t.Fatalf("cluster wire account %s accepted", InternalAccount)
	}
	a := newAuth(t, auth.Options{Users: []auth.User{{Username: "x", Password: "pw", Account: InternalAccount}}})
	s := startServer(t, Options{Auth: a})
	if nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("x", "pw"), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatalf("a user of account %s logged in", InternalAccount)
	}
	for _, n := range s.AccountNames() {
		if n == InternalAccount {
			t.Fatalf("AccountNames lists %s", InternalAccount)
		}
	}
	if s.InternalAccount() == nil || s.InternalAccount() == s.GlobalAccount() {
		t.Fatal("no internal account of its own")
	}
}

// TestInternalAccountAcrossRoutes: the internal account's subscriptions
// are reached across a route by the other server's internal publishes
// (the cluster's coordination), and by nothing a client of any account
// publishes, requests or answers, on either server; a client's wildcard
// subscription never sees the internal traffic.
func TestInternalAccountAcrossRoutes(t *testing.T) {
	s0 := startServer(t, Options{ServerName: "s0", Cluster: clusterOpts(t, "C")})
	s1 := startServer(t, Options{ServerName: "s1", Cluster: clusterOpts(t, "C", routeURL(s0))})
	waitMesh(t, s0, s1)
	got := make(chan *Msg, 16)
	if _, err := s1.InternalAccount().Subscribe("$JWAL.CLUSTER.>", "", func(m *Msg) {
		got <- &Msg{Subject: m.Subject, Reply: m.Reply, Data: append([]byte(nil), m.Data...)}
		s1.InternalAccount().Publish(m.Reply, "", nil, []byte("+1"))
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the internal interest on s0", func() bool { return s0.InternalAccount().HasInterest("$JWAL.CLUSTER.META.PROPOSE") })
	watcher := connect(t, s0)
	seen, _ := collect(t, watcher, ">", "")
	for _, s := range []*Server{s0, s1} {
		nc := connect(t, s)
		if _, err := nc.Request("$JWAL.CLUSTER.META.PROPOSE", []byte("forged"), 500*time.Millisecond); err == nil {
			t.Fatal("a client's request reached the internal account")
		}
		if err := nc.Publish("$JWAL.CLUSTER.PROGRESS", []byte("forged\n00 99")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// The server's own request crosses the route and is answered there.
	answer := make(chan string, 1)
	if _, err := s0.InternalAccount().Subscribe("_JWAL_INBOX.t", "", func(m *Msg) { answer <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the inbox interest on s1", func() bool { return s1.InternalAccount().HasInterest("_JWAL_INBOX.t") })
	s0.InternalAccount().Publish("$JWAL.CLUSTER.META.PROPOSE", "_JWAL_INBOX.t", nil, []byte("real"))
	select {
	case a := <-answer:
		if a != "+1" {
			t.Fatalf("answer %q", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an internal request did not cross the route")
	}
	if m := <-got; string(m.Data) != "real" {
		t.Fatalf("the internal subscription got %q: a client's message reached it", m.Data)
	}
	select {
	case m := <-got:
		t.Fatalf("the internal subscription also got %q on %s", m.Data, m.Subject)
	default:
	}
	for {
		select {
		case m := <-seen:
			// The clients' own forged messages are theirs to see; the
			// server's request and its answer are not.
			if d := string(m.Data); d == "real" || d == "+1" {
				t.Fatalf("a client saw internal traffic: %s %q", m.Subject, m.Data)
			}
		default:
			return
		}
	}
}

// TestAccountsAcrossRoutes: interest and messages cross a route per
// account: A's publishes on one server reach A's subscribers on the other
// and never B's.
func TestAccountsAcrossRoutes(t *testing.T) {
	s0 := startServer(t, Options{ServerName: "s0", Auth: accountAuth(t), Accounts: []string{"A", "B"}, Cluster: clusterOpts(t, "C")})
	s1 := startServer(t, Options{ServerName: "s1", Auth: accountAuth(t), Accounts: []string{"A", "B"}, Cluster: clusterOpts(t, "C", routeURL(s0))})
	waitMesh(t, s0, s1)
	nb1 := connect(t, s1, nats.UserInfo("b", "pw"))
	na1 := connect(t, s1, nats.UserInfo("a", "pw"))
	chb, _ := collect(t, nb1, "t.>", "")
	cha, _ := collect(t, na1, "t.>", "")
	qa, _ := collect(t, na1, "q", "workers")
	waitFor(t, "A's and B's interest on s0", func() bool {
		return hasRemoteInterest(s0, "A:t.>") && hasRemoteInterest(s0, "B:t.>") && hasRemoteInterest(s0, "A:q workers")
	})
	if s0.Account("A").HasRemoteInterest("x") || !s0.Account("A").HasRemoteInterest("t.1") {
		t.Fatal("remote interest of A")
	}
	na0 := connect(t, s0, nats.UserInfo("a", "pw"))
	nb0 := connect(t, s0, nats.UserInfo("b", "pw"))
	ng0 := connect(t, s0, nats.UserInfo("g", "pw"))
	for _, nc := range []*nats.Conn{ng0, nb0, na0} {
		if err := nc.Publish("t.1", []byte(nc.Opts.User)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish("q", []byte(nc.Opts.User)); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if m := recv(t, cha); string(m.Data) != "a" {
		t.Fatalf("A on s1 got %q", m.Data)
	}
	if m := recv(t, qa); string(m.Data) != "a" {
		t.Fatalf("A's queue on s1 got %q", m.Data)
	}
	if m := recv(t, chb); string(m.Data) != "b" {
		t.Fatalf("B on s1 got %q", m.Data)
	}
	// Internal publishes in A cross too, and only to A.
	s0.Account("A").Publish("t.2", "", nil, []byte("internal"))
	if m := recv(t, cha); string(m.Data) != "internal" || m.Subject != "t.2" {
		t.Fatalf("A on s1 got %q on %q", m.Data, m.Subject)
	}
	noMessage(t, cha)
	noMessage(t, qa)
	noMessage(t, chb)
	// Unsubscribing in A removes A's interest only.
	na1.Close()
	waitFor(t, "A's interest gone from s0", func() bool {
		return !hasRemoteInterest(s0, "A:t.>") && hasRemoteInterest(s0, "B:t.>")
	})
}

// TestAccountNoAuthUser: a client without credentials becomes the
// no_auth_user, in that user's account.
func TestAccountNoAuthUser(t *testing.T) {
	a := newAuth(t, auth.Options{NoAuthUser: "b", Users: []auth.User{
		{Username: "a", Password: "pw", Account: "A"},
		{Username: "b", Password: "pw", Account: "B"},
	}})
	s := startServer(t, Options{Auth: a, Accounts: []string{"A", "B"}})
	anon := connect(t, s)
	nb := connect(t, s, nats.UserInfo("b", "pw"))
	na := connect(t, s, nats.UserInfo("a", "pw"))
	ch, _ := collect(t, nb, "in.b", "")
	cha, _ := collect(t, na, "in.b", "")
	if err := anon.Publish("in.b", []byte("anon")); err != nil {
		t.Fatal(err)
	}
	if err := anon.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, ch); string(m.Data) != "anon" {
		t.Fatalf("B got %q", m.Data)
	}
	if err := na.Publish("in.b", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, cha); string(m.Data) != "a" {
		t.Fatalf("A got %q before its own message: the anonymous client was not in B", m.Data)
	}
}
