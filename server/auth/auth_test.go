package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

func mustNew(t *testing.T, o Options) *Authenticator {
	t.Helper()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestTokenAndPasswords(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := &Permissions{Publish: &SubjectPermission{Deny: []string{">"}}}
	tok := mustNew(t, Options{Token: "tok"})
	users := mustNew(t, Options{
		Users: []User{
			{Username: "alice", Password: string(hash)},
			{Username: "bob", Password: "plain", Permissions: readOnly},
		},
		NoAuthUser: "bob",
	})
	for _, tc := range []struct {
		name string
		a    *Authenticator
		c    Credentials
		user string // "" with ok=false means failure
		ok   bool
	}{
		{"token ok", tok, Credentials{Token: "tok"}, "", true},
		{"token wrong", tok, Credentials{Token: "tok2"}, "", false},
		{"token missing", tok, Credentials{User: "x", Password: "tok"}, "", false},
		{"bcrypt ok", users, Credentials{User: "alice", Password: "s3cret"}, "alice", true},
		{"bcrypt wrong", users, Credentials{User: "alice", Password: "S3cret"}, "", false},
		{"hash is not the password", users, Credentials{User: "alice", Password: string(hash)}, "", false},
		{"plain ok", users, Credentials{User: "bob", Password: "plain"}, "bob", true},
		{"unknown user", users, Credentials{User: "carol", Password: "plain"}, "", false},
		{"no credentials: no_auth_user", users, Credentials{}, "bob", true},
		{"password without user", users, Credentials{Password: "plain"}, "", false},
	} {
		id, err := tc.a.Authenticate(tc.c)
		if tc.ok != (err == nil) {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrAuthentication) {
				t.Errorf("%s: %v does not wrap ErrAuthentication", tc.name, err)
			}
			for _, secret := range []string{"s3cret", "S3cret", "plain", "tok2", string(hash)} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%s: error %q leaks a secret", tc.name, err)
				}
			}
			continue
		}
		if id.User != tc.user {
			t.Errorf("%s: user %q, want %q", tc.name, id.User, tc.user)
		}
	}
	id, _ := users.Authenticate(Credentials{})
	if id.Permissions != readOnly {
		t.Errorf("no_auth_user did not get bob's permissions: %+v", id.Permissions)
	}
}

func TestNewRejects(t *testing.T) {
	for name, o := range map[string]Options{
		"token and users":       {Token: "t", Users: []User{{Username: "a"}}},
		"user and users":        {Username: "a", Users: []User{{Username: "b"}}},
		"duplicate user":        {Users: []User{{Username: "a"}, {Username: "a"}}},
		"nameless user":         {Users: []User{{Password: "p"}}},
		"unknown no_auth_user":  {Users: []User{{Username: "a"}}, NoAuthUser: "b"},
		"bad nkey":              {Nkeys: []NkeyUser{{Nkey: "Uxyz"}}},
		"bad permission filter": {Users: []User{{Username: "a", Permissions: &Permissions{Publish: &SubjectPermission{Allow: []string{"a..b"}}}}}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNkey(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	other, _ := nkeys.CreateUser()
	a := mustNew(t, Options{Nkeys: []NkeyUser{{Nkey: pub}}})
	if !a.NeedsNonce() {
		t.Fatal("nkey users need a nonce")
	}
	nonce := []byte("abcdefghijk")
	sig, _ := kp.Sign(nonce)
	badSig, _ := other.Sign(nonce)
	if id, err := a.Authenticate(Credentials{Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(sig), Nonce: nonce}); err != nil || id.User != pub {
		t.Fatalf("good signature: %v %+v", err, id)
	}
	for name, c := range map[string]Credentials{
		"other key's signature": {Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(badSig), Nonce: nonce},
		"other nonce":           {Nkey: pub, Sig: base64.RawURLEncoding.EncodeToString(sig), Nonce: []byte("zzz")},
		"garbage signature":     {Nkey: pub, Sig: "!!!", Nonce: nonce},
		"unknown key":           {Nkey: func() string { p, _ := other.PublicKey(); return p }(), Sig: base64.RawURLEncoding.EncodeToString(badSig), Nonce: nonce},
	} {
		if _, err := a.Authenticate(c); !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCertMapping(t *testing.T) {
	a := mustNew(t, Options{MapCerts: true, Users: []User{{Username: "app@example.com"}, {Username: "CN=worker,O=Acme"}}})
	byMail := &x509.Certificate{EmailAddresses: []string{"app@example.com"}, Subject: pkix.Name{CommonName: "x"}}
	bySubject := &x509.Certificate{Subject: pkix.Name{CommonName: "worker", Organization: []string{"Acme"}}}
	nobody := &x509.Certificate{Subject: pkix.Name{CommonName: "nobody"}}
	if id, err := a.Authenticate(Credentials{PeerCerts: []*x509.Certificate{byMail}}); err != nil || id.User != "app@example.com" {
		t.Errorf("by e-mail: %v %+v", err, id)
	}
	if id, err := a.Authenticate(Credentials{PeerCerts: []*x509.Certificate{bySubject}}); err != nil || id.User != "CN=worker,O=Acme" {
		t.Errorf("by subject: %v %+v", err, id)
	}
	if _, err := a.Authenticate(Credentials{PeerCerts: []*x509.Certificate{nobody}}); err == nil {
		t.Error("unmapped certificate accepted")
	}
	if _, err := a.Authenticate(Credentials{User: "app@example.com"}); err == nil {
		t.Error("no certificate accepted")
	}
}

func TestThrottle(t *testing.T) {
	now := time.Unix(1000, 0)
	th := &Throttle{Base: 100 * time.Millisecond, Max: time.Second, Window: time.Minute, Now: func() time.Time { return now }}
	var got []time.Duration
	for range 7 {
		got = append(got, th.Failed("10.0.0.1"))
	}
	want := []time.Duration{0, 100e6, 200e6, 400e6, 800e6, 1e9, 1e9}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if d := th.Failed("10.0.0.2"); d != 0 {
		t.Errorf("another address was slowed: %v", d)
	}
	th.Succeeded("10.0.0.1")
	if d := th.Failed("10.0.0.1"); d != 0 {
		t.Errorf("after success: %v", d)
	}
	th.Failed("10.0.0.1")
	now = now.Add(2 * time.Minute)
	if d := th.Failed("10.0.0.1"); d != 0 {
		t.Errorf("after the window: %v", d)
	}
}

func TestThrottleBounded(t *testing.T) {
	var th Throttle
	for i := range maxThrottled * 2 {
		th.Failed(strings.Repeat("x", i%7) + string(rune(i)))
	}
	th.mu.Lock()
	n := len(th.mu.fails)
	th.mu.Unlock()
	if n > maxThrottled {
		t.Fatalf("%d addresses remembered", n)
	}
}

// TestConnectionTypes: a user limited to some connection types logs in
// on those only; an unlimited user and a token log in on any.
func TestConnectionTypes(t *testing.T) {
	a, err := New(Options{
		Users: []User{{Username: "ws", Password: "p", ConnectionTypes: []string{ConnWebsocket}}, {Username: "any", Password: "p"}},
		Nkeys: nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, ct string
		ok       bool
	}{
		{"ws", ConnWebsocket, true},
		{"ws", ConnStandard, false},
		{"ws", "", false}, // "" is the client port
		{"any", ConnWebsocket, true},
		{"any", "", true},
	} {
		_, err := a.Authenticate(Credentials{User: tc.user, Password: "p", ConnectionType: tc.ct})
		if (err == nil) != tc.ok {
			t.Errorf("user %s on %q: %v, want ok=%v", tc.user, tc.ct, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrAuthentication) {
			t.Errorf("error %v does not wrap ErrAuthentication", err)
		}
	}
}
