package server

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/server/auth"
)

func permServer(t *testing.T, users ...auth.User) *Server {
	t.Helper()
	return startServer(t, Options{Auth: newAuth(t, auth.Options{Users: users})})
}

func TestPermissionsWire(t *testing.T) {
	s := permServer(t, auth.User{Username: "u", Password: "p", Permissions: &auth.Permissions{
		Publish:   &auth.SubjectPermission{Allow: []string{"orders.>"}, Deny: []string{"orders.secret"}},
		Subscribe: &auth.SubjectPermission{Allow: []string{"updates.*", "_INBOX.>"}},
	}}, auth.User{Username: "w", Password: "p"})
	c := dialRaw(t, s)
	c.handshake(`{"verbose":false,"user":"u","pass":"p","protocol":1}`)

	c.send("PUB other 2\r\nhi\r\nPING\r\n")
	c.expect("-ERR 'Permissions Violation for Publish to \"other\"'\r\nPONG\r\n")
	c.send("PUB orders.secret 2\r\nhi\r\nPING\r\n")
	c.expect("-ERR 'Permissions Violation for Publish to \"orders.secret\"'\r\nPONG\r\n")
	c.send("SUB updates.> 1\r\nSUB other 2\r\nPING\r\n")
	c.expect("-ERR 'Permissions Violation for Subscription to \"updates.>\"'\r\n" +
		"-ERR 'Permissions Violation for Subscription to \"other\"'\r\nPONG\r\n")

	// Allowed operations still work on the same connection.
	c.send("SUB updates.* 3\r\nPUB orders.new 2\r\nok\r\nPING\r\n")
	c.expect("PONG\r\n")
	if n := s.NumSubscriptions(); n != 1 {
		t.Fatalf("%d subscriptions, want only the allowed one", n)
	}
	pub := connect(t, s, nats.UserInfo("w", "p"))
	// Denied publishes are not delivered (the sub only has updates.*).
	sc := dialRaw(t, s)
	sc.handshake(`{"verbose":false,"user":"u","pass":"p","protocol":1}`)
	sc.send("SUB orders.* 9\r\nPING\r\n")
	sc.expect("-ERR 'Permissions Violation for Subscription to \"orders.*\"'\r\nPONG\r\n")
	if err := pub.Publish("updates.x", []byte("u")); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	c.expect("MSG updates.x 3 1\r\nu\r\n")
}

func TestPermissionsDenyFiltersWildcardSubscription(t *testing.T) {
	s := permServer(t,
		auth.User{Username: "r", Password: "p", Permissions: &auth.Permissions{
			Subscribe: &auth.SubjectPermission{Deny: []string{"data.secret"}},
		}},
		auth.User{Username: "w", Password: "p"},
	)
	rc := connect(t, s, nats.UserInfo("r", "p"))
	sub, err := rc.SubscribeSync("data.*")
	if err != nil {
		t.Fatal(err)
	}
	rc.Flush()
	wc := connect(t, s, nats.UserInfo("w", "p"))
	for _, subj := range []string{"data.secret", "data.public"} {
		if err := wc.Publish(subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	wc.Flush()
	if m := nextMsg(t, sub); m.Subject != "data.public" {
		t.Fatalf("got %q first; data.secret must not be delivered", m.Subject)
	}
	noMsg(t, rc, sub)
	// The denied literal itself cannot be subscribed.
	errs := make(chan error, 1)
	rc2 := connect(t, s, nats.UserInfo("r", "p"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if _, err := rc2.SubscribeSync("data.secret"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(strings.ToLower(err.Error()), `permissions violation for subscription to "data.secret"`) {
			t.Fatalf("error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no permissions error")
	}
	if !rc2.IsConnected() {
		t.Fatal("connection closed on a permissions violation")
	}
}

func TestPermissionsAllowResponses(t *testing.T) {
	s := permServer(t,
		auth.User{Username: "svc", Password: "p", Permissions: &auth.Permissions{
			Subscribe: &auth.SubjectPermission{Allow: []string{"svc.>"}},
			Response:  &auth.ResponsePermission{MaxMsgs: 1},
		}},
		auth.User{Username: "cli", Password: "p"},
	)
	svc := dialRaw(t, s)
	svc.handshake(`{"verbose":false,"user":"svc","pass":"p","protocol":1}`)
	svc.send("SUB svc.echo 1\r\nPING\r\n")
	svc.expect("PONG\r\n")
	cli := connect(t, s, nats.UserInfo("cli", "p"))
	inbox, err := cli.SubscribeSync("reply.here")
	if err != nil {
		t.Fatal(err)
	}
	cli.Flush()
	if err := cli.PublishRequest("svc.echo", "reply.here", []byte("q")); err != nil {
		t.Fatal(err)
	}
	cli.Flush()
	svc.expect("MSG svc.echo 1 reply.here 1\r\nq\r\n")
	// One reply is allowed, a second is not, nor is any other subject.
	svc.send("PUB reply.here 1\r\na\r\nPUB reply.here 1\r\nb\r\nPUB elsewhere 1\r\nc\r\nPING\r\n")
	svc.expect("-ERR 'Permissions Violation for Publish to \"reply.here\"'\r\n" +
		"-ERR 'Permissions Violation for Publish to \"elsewhere\"'\r\nPONG\r\n")
	if m := nextMsg(t, inbox); string(m.Data) != "a" {
		t.Fatalf("reply %q", m.Data)
	}
	noMsg(t, cli, inbox)
}

func TestPermSetSubscribeCoverage(t *testing.T) {
	ps := newPermSet(&auth.SubjectPermission{Allow: []string{"a.*", "b.>"}, Deny: []string{"b.x.y"}}, false)
	for filter, want := range map[string]bool{
		"a.b": true, "a.*": true, "a.>": false, "a.b.c": false, "*.b": false,
		"b.c": true, "b.>": true, "b.x.y": false, "b.*.y": true, ">": false,
	} {
		if got, _ := ps.subscribeAllowed(filter); got != want {
			t.Errorf("subscribe %q: %v, want %v", filter, got, want)
		}
	}
	if _, overlaps := ps.subscribeAllowed("b.>"); !overlaps {
		t.Error("b.> overlaps the deny b.x.y")
	}
}
