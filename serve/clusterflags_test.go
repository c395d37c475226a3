package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

var routeListenRE = regexp.MustCompile(`Listening for route connections on (\S+)`)

// TestClusterServe: two `jetwal serve` with --cluster and --routes form a
// cluster: a client of one reaches a subscriber on the other.
func TestClusterServe(t *testing.T) {
	a := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "a", "--cluster", "nats://127.0.0.1:0", "--cluster_name", "C")
	m := routeListenRE.FindStringSubmatch(a.logs.String())
	if m == nil {
		t.Fatalf("no route listener in the log:\n%s", a.logs)
	}
	b := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "b", "--cluster", "nats://127.0.0.1:0", "--cluster_name", "C",
		"--routes", "nats://"+m[1])
	crosses(t, a, b, "the route")
}

// routeCerts writes a fresh CA and one route certificate for 127.0.0.1
// that it signed, usable both to accept routes and to connect them
// (server and client key usage), into t.TempDir().
func routeCerts(t *testing.T) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	writePEM := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "route test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	routeKey := key()
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "route"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, ca, &routeKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(routeKey)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM("ca.pem", "CERTIFICATE", caDER), writePEM("route.pem", "CERTIFICATE", der), writePEM("route-key.pem", "EC PRIVATE KEY", keyDER)
}

// routeTLSConf is a config file whose cluster block has tls with verify.
func routeTLSConf(t *testing.T, caFile, certFile, keyFile, extra string) string {
	return writeConf(t, `
cluster {
  name: C
  listen: "127.0.0.1:0"
  authorization { user: ru, password: rp, timeout: 2.5 }
  tls {
    cert_file: "`+certFile+`"
    key_file: "`+keyFile+`"
    ca_file: "`+caFile+`"
    verify: true
    timeout: 3
  }
`+extra+`
}
`)
}

// TestClusterTLSOptions: clusterOptions turns the cluster block's tls and
// authorization into the route options: a TLS configuration that
// presents the certificate, requires and verifies the peer's, and trusts
// ca_file when connecting; the timeouts; tls:// routes. A missing
// certificate file stops the start, naming the file.
func TestClusterTLSOptions(t *testing.T) {
	caFile, certFile, keyFile := routeCerts(t)
	conf := routeTLSConf(t, caFile, certFile, keyFile, `  routes: ["tls://127.0.0.1:7001", "nats://127.0.0.1:7002"]`)
	o, err := ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co := o.Server.Cluster
	if co == nil || co.TLSConfig == nil {
		t.Fatalf("cluster options without TLS: %+v", co)
	}
	tc := co.TLSConfig
	if tc.ClientAuth != tls.RequireAndVerifyClientCert || len(tc.Certificates) != 1 || tc.ClientCAs == nil || tc.RootCAs == nil ||
		tc.MinVersion < tls.VersionTLS12 {
		t.Fatalf("route TLS config %+v", tc)
	}
	if co.TLSTimeout != 3*time.Second || co.AuthTimeout != 2500*time.Millisecond || co.Username != "ru" || co.Password != "rp" ||
		len(co.Routes) != 2 || co.Routes[0].Scheme != "tls" || co.Routes[0].Host != "127.0.0.1:7001" {
		t.Fatalf("cluster options %+v", co)
	}
	if o.Server.TLSConfig != nil {
		t.Fatal("the route TLS block turned on client TLS")
	}

	missing := filepath.Join(t.TempDir(), "gone.pem")
	conf = routeTLSConf(t, caFile, missing, keyFile, "")
	_, err = ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	var cerr ConfigError
	if !errors.As(err, &cerr) || !strings.Contains(err.Error(), conf+":7:") ||
		!strings.Contains(err.Error(), "cluster.tls.cert_file: loading certificate "+missing) {
		t.Fatalf("missing route certificate: %v", err)
	}
}

// TestClusterTLSServe: two servers whose cluster blocks have tls with
// verify form a route over TLS (a client of one reaches a subscriber on
// the other); a third whose certificate another CA signed does not.
func TestClusterTLSServe(t *testing.T) {
	caFile, certFile, keyFile := routeCerts(t)
	a := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "a", "-c", routeTLSConf(t, caFile, certFile, keyFile, ""))
	m := routeListenRE.FindStringSubmatch(a.logs.String())
	if m == nil {
		t.Fatalf("no route listener in the log:\n%s", a.logs)
	}
	routes := `  routes: ["nats://ru:rp@` + m[1] + `"]`
	b := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "b", "-c", routeTLSConf(t, caFile, certFile, keyFile, routes))
	crosses(t, b, a, "the TLS route")

	// c presents a certificate of another CA (while trusting a's): a
	// refuses it, and nothing c's clients publish reaches a.
	_, otherCert, otherKey := routeCerts(t)
	c := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "c", "-c", routeTLSConf(t, caFile, otherCert, otherKey, routes))
	refused := regexp.MustCompile(`(?i)tls.*unknown authority`)
	for deadline := time.Now().Add(30 * time.Second); !refused.MatchString(a.logs.String()); {
		if time.Now().After(deadline) {
			t.Fatalf("a did not refuse c's certificate; logs of a:\n%s\nlogs of c:\n%s", a.logs, c.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	nc, err := nats.Connect("nats://" + c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	na, err := nats.Connect("nats://" + a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer na.Close()
	sub2, err := na.SubscribeSync("from-c")
	if err != nil {
		t.Fatal(err)
	}
	na.Flush()
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		nc.Publish("from-c", []byte("x"))
		if _, err := sub2.NextMsg(100 * time.Millisecond); err == nil {
			t.Fatalf("a route with a certificate of another CA was accepted; logs of a:\n%s", a.logs)
		}
	}
}

// crosses publishes on from until a subscriber on to receives it (the
// route's interest may take a moment to arrive), failing after 30 s.
func crosses(t *testing.T, from, to *serveRun, what string) {
	t.Helper()
	nf, err := nats.Connect("nats://" + from.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nf.Close()
	nt, err := nats.Connect("nats://" + to.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nt.Close()
	sub, err := nt.SubscribeSync("across")
	if err != nil {
		t.Fatal(err)
	}
	nt.Flush()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nf.Publish("across", []byte("hi"))
		if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
			if string(msg.Data) != "hi" {
				t.Fatalf("got %q", msg.Data)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message across %s; logs of the sender:\n%s\nlogs of the receiver:\n%s", what, from.logs, to.logs)
		}
	}
}
