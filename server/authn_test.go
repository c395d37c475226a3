package server

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/jetwal/jetwal/server/auth"
)

func newAuth(t testing.TB, o auth.Options) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func infoJSON(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	body := strings.TrimSuffix(strings.TrimPrefix(line, "INFO "), " \r\n")
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("INFO %q: %v", line, err)
	}
	return m
}

func TestAuthUserPasswordWire(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	var logs syncBuffer
	s := startServer(t, Options{
		Auth:   newAuth(t, auth.Options{Users: []auth.User{{Username: "u", Password: string(hash)}}}),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: LevelTrace})),
		Trace:  true,
	})

	// Good credentials: the usual handshake.
	good := dialRaw(t, s)
	good.handshake(`{"verbose":false,"user":"u","pass":"pw","protocol":1}`)
	good.send("PING\r\n")
	good.expect("PONG\r\n")

	// INFO announces auth; a wrong password is refused and closed.
	bad := dialRaw(t, s)
	info := infoJSON(t, bad.line())
	if info["auth_required"] != true {
		t.Fatalf("INFO without auth_required: %v", info)
	}
	bad.send(`CONNECT {"verbose":false,"user":"u","pass":"wrong-secret"}` + "\r\nPING\r\n")
	bad.expect("-ERR 'Authorization Violation'\r\n")
	bad.expectClosed()

	// Anything before CONNECT is a violation too.
	early := dialRaw(t, s)
	early.line()
	early.send("SUB foo 1\r\n")
	early.expect("-ERR 'Authorization Violation'\r\n")
	early.expectClosed()

	waitFor(t, "failure logged", func() bool { return strings.Contains(logs.String(), "bad password for user") })
	out := logs.String()
	if strings.Contains(out, "wrong-secret") || strings.Contains(out, `"pw"`) {
		t.Fatalf("a secret reached the log:\n%s", out)
	}
	if !strings.Contains(out, "[REDACTED]") || !strings.Contains(out, bad.conn.LocalAddr().String()) {
		t.Fatalf("log lacks the redacted CONNECT trace or the client address:\n%s", out)
	}
}

func TestAuthNatsGo(t *testing.T) {
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{
		Users:      []auth.User{{Username: "alice", Password: "a"}, {Username: "anon", Password: "x"}},
		NoAuthUser: "anon",
	})})
	nc := connect(t, s, nats.UserInfo("alice", "a"))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	_, err := nats.Connect(s.ClientURL(), nats.UserInfo("alice", "b"), nats.NoReconnect())
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("wrong password: %v", err)
	}
	// no_auth_user: a client without credentials gets in.
	anon := connect(t, s)
	if err := anon.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestAuthToken(t *testing.T) {
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{Token: "t0k"})})
	nc := connect(t, s, nats.Token("t0k"))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []nats.Option{nats.Token("nope"), nats.UserInfo("t0k", "t0k")} {
		if _, err := nats.Connect(s.ClientURL(), opt, nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("got %v", err)
		}
	}
	// Unauthenticated clients are refused.
	if _, err := nats.Connect(s.ClientURL(), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("no token: %v", err)
	}
}

func TestAuthNkey(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{Nkeys: []auth.NkeyUser{{Nkey: pub}}})})
	raw := dialRaw(t, s)
	info := infoJSON(t, raw.line())
	if n, _ := info["nonce"].(string); len(n) < 10 {
		t.Fatalf("INFO has no nonce: %v", info)
	}
	nc := connect(t, s, nats.Nkey(pub, kp.Sign))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	other, _ := nkeys.CreateUser()
	if _, err := nats.Connect(s.ClientURL(), nats.Nkey(pub, other.Sign), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("signed with the wrong key: %v", err)
	}
}

func TestAuthTimeout(t *testing.T) {
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{Token: "x"}), AuthTimeout: 50 * time.Millisecond})
	c := dialRaw(t, s)
	c.line()
	c.expect("-ERR 'Authentication Timeout'\r\n")
	c.expectClosed()
}

func TestAuthRepeatedFailuresThrottled(t *testing.T) {
	s := startServer(t, Options{Auth: newAuth(t, auth.Options{Token: "x"})})
	for range 3 {
		c := dialRaw(t, s)
		c.line()
		c.send(`CONNECT {"auth_token":"y"}` + "\r\n")
		c.expect("-ERR 'Authorization Violation'\r\n")
	}
	// The throttle remembers this address; a success forgets it.
	if d := s.authThrottle.Failed("127.0.0.1"); d == 0 {
		t.Fatal("repeated failures were not slowed")
	}
	connect(t, s, nats.Token("x")).Close()
	if d := s.authThrottle.Failed("127.0.0.1"); d != 0 {
		t.Fatalf("a successful login did not reset the throttle: %v", d)
	}
}

func TestNoAuthInfoUnchanged(t *testing.T) {
	s := startServer(t, Options{})
	info := infoJSON(t, dialRaw(t, s).line())
	for _, k := range []string{"auth_required", "tls_required", "nonce"} {
		if _, ok := info[k]; ok {
			t.Errorf("INFO has %q without auth or TLS", k)
		}
	}
}

func TestSetAuthenticator(t *testing.T) {
	s := startServer(t, Options{})
	before := connect(t, s)
	s.SetAuthenticator(newAuth(t, auth.Options{Token: "new"}))
	if _, err := nats.Connect(s.ClientURL(), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("after enabling auth: %v", err)
	}
	connect(t, s, nats.Token("new")).Close()
	if err := before.Flush(); err != nil {
		t.Fatalf("connected client was dropped: %v", err)
	}
	s.SetAuthenticator(nil)
	connect(t, s).Close()
}
