package server

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server/auth"
)

// roundTrip checks that nc can publish to itself.
func roundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	sub, err := nc.SubscribeSync("tls.check")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("tls.check", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if m := nextMsg(t, sub); string(m.Data) != "x" {
		t.Fatalf("got %q", m.Data)
	}
	if _, err := nc.TLSConnectionState(); err != nil {
		t.Fatalf("connection is not TLS: %v", err)
	}
}

func TestTLSInfoFirst(t *testing.T) {
	certs := testcert.New(t)
	s := startServer(t, Options{TLSConfig: certs.ServerConfig(false)})
	info := infoJSON(t, dialRaw(t, s).line())
	if info["tls_required"] != true || info["tls_verify"] != nil {
		t.Fatalf("INFO %v", info)
	}
	roundTrip(t, connect(t, s, nats.Secure(certs.ClientConfig(false))))

	// A client that does not trust the CA fails; one without TLS is told
	// TLS is required.
	if _, err := nats.Connect(s.ClientURL(), nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12}), nats.NoReconnect()); err == nil {
		t.Fatal("untrusted server certificate accepted")
	}
	// nats.go upgrades on its own when INFO says tls_required, so a
	// client with no TLS settings at all fails on the unknown CA.
	if _, err := nats.Connect(s.ClientURL(), nats.NoReconnect()); err == nil {
		t.Fatal("connected without trusting the CA")
	}
	// The server is still serving after those failures.
	roundTrip(t, connect(t, s, nats.Secure(certs.ClientConfig(false))))
}

func TestTLSHandshakeFirst(t *testing.T) {
	certs := testcert.New(t)
	s := startServer(t, Options{TLSConfig: certs.ServerConfig(false), TLSHandshakeFirst: true})
	roundTrip(t, connect(t, s, nats.Secure(certs.ClientConfig(false)), nats.TLSHandshakeFirst()))
	// A client expecting INFO first gets nothing it can use.
	if _, err := nats.Connect(s.ClientURL(), nats.Secure(certs.ClientConfig(false)), nats.NoReconnect()); err == nil {
		t.Fatal("INFO-first client connected to a handshake-first server")
	}
}

func TestTLSVerify(t *testing.T) {
	certs := testcert.New(t)
	s := startServer(t, Options{TLSConfig: certs.ServerConfig(true)})
	info := infoJSON(t, dialRaw(t, s).line())
	if info["tls_verify"] != true {
		t.Fatalf("INFO %v", info)
	}
	if _, err := nats.Connect(s.ClientURL(), nats.Secure(certs.ClientConfig(false)), nats.NoReconnect()); err == nil {
		t.Fatal("client without a certificate accepted")
	}
	roundTrip(t, connect(t, s, nats.Secure(certs.ClientConfig(true))))
}

func TestTLSVerifyAndMap(t *testing.T) {
	certs := testcert.New(t)
	s := startServer(t, Options{
		TLSConfig: certs.ServerConfig(true),
		Auth: newAuth(t, auth.Options{MapCerts: true, Users: []auth.User{{
			Username:    certs.ClientEmail,
			Permissions: &auth.Permissions{Publish: &auth.SubjectPermission{Allow: []string{"tls.>"}}},
		}}}),
	})
	nc := connect(t, s, nats.Secure(certs.ClientConfig(true)))
	roundTrip(t, nc)
	errs := make(chan error, 1)
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err })
	if err := nc.Publish("other", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("mapped user's permissions not applied: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no permissions violation reported")
	}
}

func TestTLSOptionsValidate(t *testing.T) {
	if _, err := New(Options{TLSConfig: &tls.Config{}}); err == nil {
		t.Error("TLS without a certificate accepted")
	}
	if _, err := New(Options{TLSHandshakeFirst: true}); err == nil {
		t.Error("handshake first without TLS accepted")
	}
}
