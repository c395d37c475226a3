package config

import (
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testcert"
)

// TestClusterAuthorization: user, password and timeout are read; a token,
// a users list and any other field are refused at their line.
func TestClusterAuthorization(t *testing.T) {
	c := load(t, "c.conf", `
cluster {
  listen: "127.0.0.1:6222"
  authorization {
    username: ru
    pass: "$2a$11$V1qrpBt8/SLfEBr4NJq4T.2mg8chx8.MTblUiTBOLV3MKDeAy.f7u"
    timeout: 2.5
  }
}
`)
	cl := c.Cluster
	if cl.Username != "ru" || !strings.HasPrefix(cl.Password, "$2a$11$") || cl.AuthTimeout != 2500*time.Millisecond || len(c.Warnings) != 0 {
		t.Fatalf("cluster %+v, warnings %v", cl, c.Warnings)
	}
	for _, tc := range []struct {
		name, conf string
		line       int
		want       string
	}{
		{"token", "cluster {\n  port: 6222\n  authorization {\n    token: s3cret\n  }\n}\n", 4,
			"cluster.authorization.token: Cluster authorization does not support tokens"},
		{"users", "cluster {\n  authorization {\n    users: [ {user: a, password: b} ]\n  }\n}\n", 3,
			"cluster.authorization.users: Cluster authorization does not allow multiple users"},
		{"callout", "cluster {\n  authorization {\n    auth_callout { issuer: x }\n  }\n}\n", 3,
			"cluster.authorization.auth_callout: Cluster authorization does not support callouts"},
		{"permissions", "cluster {\n  authorization {\n    permissions { import: \">\" }\n  }\n}\n", 3,
			"cluster.authorization.permissions: route permissions"},
		{"unknown", "cluster {\n  authorization {\n    user: a\n    nkey: UABC\n  }\n}\n", 4,
			"cluster.authorization.nkey: not a cluster authorization field"},
		{"cluster permissions", "cluster {\n  name: x\n  permissions { export: \"a.>\" }\n}\n", 3,
			"cluster.permissions: route permissions"},
	} {
		path := write(t, "bad.conf", tc.conf)
		_, err := Load(path)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != tc.line || !strings.Contains(ce.Reason, tc.want) {
			t.Errorf("%s: got %v, want %q on line %d", tc.name, err, tc.want, tc.line)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the token", tc.name)
		}
	}
}

// TestClusterTLS: cluster { tls } is read like the top-level block; its
// route configuration presents the certificate, requires and verifies
// the peer's with verify, and trusts ca_file when connecting. A real
// handshake shows it.
func TestClusterTLS(t *testing.T) {
	certs := testcert.New(t)
	c := load(t, "c.conf", `
cluster {
  listen: "127.0.0.1:6222"
  routes: ["tls://127.0.0.1:6223", "nats://127.0.0.1:6224"]
  tls {
    cert_file: "`+certs.ServerCert+`"
    key_file: "`+certs.ServerKey+`"
    ca_file: "`+certs.CAFile+`"
    verify: true
    timeout: 4
  }
}
`)
	tl := c.Cluster.TLS
	if tl == nil || !tl.Verify || tl.Timeout != 4*time.Second || tl.CAFile != certs.CAFile || c.TLS != nil || len(c.Warnings) != 0 ||
		c.Cluster.Routes[0] != "tls://127.0.0.1:6223" {
		t.Fatalf("cluster %+v tls %+v warnings %v", c.Cluster, tl, c.Warnings)
	}
	rc, err := tl.RouteConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Certificates) != 1 || rc.ClientAuth != tls.RequireAndVerifyClientCert || rc.ClientCAs == nil || rc.RootCAs == nil {
		t.Fatalf("route tls config %+v", rc)
	}
	handshake := func(client *tls.Config) error {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		srvErr := make(chan error, 1)
		go func() {
			s := tls.Server(a, rc)
			err := s.Handshake()
			if err == nil {
				// TLS 1.3 reports a refused client certificate on the
				// client's first read; make that read happen.
				_, err = s.Write([]byte("x"))
			}
			srvErr <- err
			a.Close()
		}()
		cl := tls.Client(b, client)
		err := cl.Handshake()
		if err == nil {
			_, err = cl.Read(make([]byte, 1))
		}
		if serr := <-srvErr; err == nil {
			err = serr
		}
		return err
	}
	withCert := certs.ClientConfig(true)
	withCert.ServerName = "127.0.0.1"
	if err := handshake(withCert); err != nil {
		t.Fatalf("a peer with a certificate of the CA was refused: %v", err)
	}
	noCert := certs.ClientConfig(false)
	noCert.ServerName = "127.0.0.1"
	if err := handshake(noCert); err == nil {
		t.Fatal("a peer without a certificate was accepted although verify is on")
	}
}

// TestClusterTLSErrors: a route tls block that cannot work stops Load
// with the file and the position; so does the top-level block.
func TestClusterTLSErrors(t *testing.T) {
	certs := testcert.New(t)
	missing := filepath.Join(t.TempDir(), "no-such-cert.pem")
	for _, tc := range []struct {
		name, conf string
		line       int
		want       string
	}{
		{"cluster cert file missing", "cluster {\n  tls {\n    key_file: \"" + certs.ServerKey + "\"\n    cert_file: \"" + missing + "\"\n  }\n}\n", 4,
			"cluster.tls.cert_file: loading certificate " + missing + ": no such file or directory"},
		{"cluster key file missing", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\"\n    key_file: \"" + missing + "\"\n  }\n}\n", 4,
			"cluster.tls.key_file: loading key " + missing + ": no such file or directory"},
		{"cluster ca file missing", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ServerKey + "\"\n    ca_file: \"" + missing + "\"\n  }\n}\n", 4,
			"cluster.tls.ca_file: loading CA certificates " + missing + ": no such file or directory"},
		{"cluster no key", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\"\n  }\n}\n", 2,
			"cluster.tls: cert_file and key_file are both required"},
		{"cluster verify without ca", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ServerKey + "\"\n    verify: true\n  }\n}\n", 2,
			"cluster.tls: verify needs ca_file"},
		{"cluster key of another certificate", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ClientKey + "\"\n  }\n}\n", 2,
			"cluster.tls: tls: loading certificate"},
		{"cluster verify_and_map", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ServerKey + "\"\n    verify_and_map: true\n  }\n}\n", 4,
			"cluster.tls.verify_and_map: mapping a route's certificate"},
		{"cluster unknown tls field", "cluster {\n  tls {\n    cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ServerKey + "\"\n    verfy: true\n  }\n}\n", 4,
			"cluster.tls.verfy: unknown tls field"},
		{"top-level cert file missing", "port: 4222\ntls {\n  cert_file: \"" + missing + "\"\n  key_file: \"" + certs.ServerKey + "\"\n}\n", 3,
			"tls.cert_file: loading certificate " + missing + ": no such file or directory"},
		{"top-level relative cert file missing", "port: 4222\ntls {\n  cert_file: \"certs/server.pem\"\n  key_file: \"" + certs.ServerKey + "\"\n}\n", 3,
			"/certs/server.pem: no such file or directory"},
		{"top-level min_version too old", "tls {\n  cert_file: \"" + certs.ServerCert + "\", key_file: \"" + certs.ServerKey + "\"\n  min_version: \"1.1\"\n}\n", 3,
			"tls.min_version: TLS 1.1 is not supported"},
	} {
		path := write(t, "bad.conf", tc.conf)
		_, err := Load(path)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != tc.line || !strings.Contains(ce.Reason, tc.want) ||
			!strings.HasPrefix(err.Error(), path+":") {
			t.Errorf("%s: got %v, want %q on line %d", tc.name, err, tc.want, tc.line)
		}
	}
}
