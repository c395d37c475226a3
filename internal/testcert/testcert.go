// Package testcert makes a throw-away certificate authority, a server
// certificate for 127.0.0.1/localhost and a client certificate at test run
// time, written as PEM files into a test's temporary directory.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is one CA with a server and a client certificate, as files.
type Set struct {
	CAFile                 string
	ServerCert, ServerKey  string
	ClientCert, ClientKey  string
	ClientEmail            string // the client certificate's e-mail address (for verify_and_map)
	Pool                   *x509.CertPool
	serverPair, clientPair tls.Certificate
}

// New writes a fresh Set into t.TempDir().
func New(t testing.TB) *Set {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "jetwal test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{CAFile: filepath.Join(dir, "ca.pem"), Pool: x509.NewCertPool(), ClientEmail: "client@jetwal.test"}
	s.Pool.AddCert(ca)
	writePEM(t, s.CAFile, "CERTIFICATE", caDER)

	issue := func(serial int64, tmpl *x509.Certificate, name string) (certFile, keyFile string, pair tls.Certificate) {
		key := newKey(t)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		certFile, keyFile = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, certFile, "CERTIFICATE", der)
		writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
		pair, err = tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		return certFile, keyFile, pair
	}
	s.ServerCert, s.ServerKey, s.serverPair = issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "jetwal test server"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
		// Both: a route presents the same certificate when it dials
		// another server as when it accepts (mutual TLS between routes).
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, "server")
	s.ClientCert, s.ClientKey, s.clientPair = issue(3, &x509.Certificate{
		Subject:        pkix.Name{CommonName: "jetwal test client"},
		EmailAddresses: []string{s.ClientEmail},
		ExtKeyUsage:    []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, "client")
	return s
}

// ServerConfig is a server-side TLS configuration; verify requires and
// verifies client certificates.
func (s *Set) ServerConfig(verify bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{s.serverPair}, MinVersion: tls.VersionTLS12}
	if verify {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = s.Pool
	}
	return c
}

// ClientConfig trusts the CA and, with cert, presents the client
// certificate.
func (s *Set) ClientConfig(cert bool) *tls.Config {
	c := &tls.Config{RootCAs: s.Pool, MinVersion: tls.VersionTLS12}
	if cert {
		c.Certificates = []tls.Certificate{s.clientPair}
	}
	return c
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
