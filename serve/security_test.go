package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testbin"
	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"
)

// TestPermissionsProtectJetStreamAPI: a user without publish permission on
// $JS.API.STREAM.DELETE.> cannot delete a stream, and a client without
// credentials cannot connect at all.
func TestPermissionsProtectJetStreamAPI(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	conf := writeConf(t, fmt.Sprintf(`
listen: 127.0.0.1:0
jetstream { store_dir: %q }
authorization {
  users: [
    {user: admin, password: "%s"}
    {user: app, password: app, permissions: {
      publish: {allow: ["$JS.API.>", "orders.>"], deny: "$JS.API.STREAM.DELETE.>"}
      subscribe: "_INBOX.>"
    }}
  ]
}
`, filepath.Join(t.TempDir(), "store"), hash))
	r := startServe(t, "-c", conf)
	url := "nats://" + r.addr

	if _, err := nats.Connect(url, nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("unauthenticated client: %v", err)
	}
	if _, err := nats.Connect(url, nats.UserInfo("admin", "wrong"), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("wrong password: %v", err)
	}
	admin, err := nats.Connect(url, nats.UserInfo("admin", "s3cret"), nats.NoReconnect())
	if err != nil {
		t.Fatalf("admin (bcrypt password): %v", err)
	}
	defer admin.Close()
	app, err := nats.Connect(url, nats.UserInfo("app", "app"), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ajs, _ := njs.New(admin)
	if _, err := ajs.CreateStream(ctx, njs.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	pjs, _ := njs.New(app)
	if _, err := pjs.Publish(ctx, "orders.1", []byte("x")); err != nil {
		t.Fatalf("app may publish to the stream: %v", err)
	}
	if _, err := pjs.Stream(ctx, "ORDERS"); err != nil {
		t.Fatalf("app may read stream info: %v", err)
	}
	dctx, dcancel := context.WithTimeout(ctx, 2*time.Second)
	defer dcancel()
	if err := pjs.DeleteStream(dctx, "ORDERS"); err == nil {
		t.Fatal("app deleted the stream")
	}
	s, err := ajs.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatalf("stream gone after a denied delete: %v", err)
	}
	if s.CachedInfo().State.Msgs != 1 {
		t.Fatalf("stream state %+v", s.CachedInfo().State)
	}
	if !strings.Contains(r.logs.String(), "Authentication required: 2 users") {
		t.Errorf("banner does not report authentication:\n%s", r.logs)
	}
	if !strings.Contains(r.logs.String(), "authentication error") || strings.Contains(r.logs.String(), "wrong") {
		t.Fatalf("failed logins not logged, or a password logged:\n%s", r.logs)
	}
	if err := ajs.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
}

// TestTLSWithNatsCLI runs the pinned nats CLI against TLS with a user and
// password, then with mutual TLS.
func TestTLSWithNatsCLI(t *testing.T) {
	cli := testbin.NatsCLI(t)
	certs := testcert.New(t)
	run := func(addr string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		home := t.TempDir()
		cmd := exec.CommandContext(ctx, cli, append([]string{"-s", "nats://" + addr, "--timeout", "5s"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	r := startServe(t, "-p", "0", "-a", "127.0.0.1", "--tls", "--tlscert", certs.ServerCert, "--tlskey", certs.ServerKey,
		"--user", "cli", "--pass", "pw")
	if out, err := run(r.addr, "--tlsca", certs.CAFile, "--user", "cli", "--password", "pw", "pub", "tls.test", "hello"); err != nil ||
		!strings.Contains(out, `Published 5 bytes to "tls.test"`) {
		t.Fatalf("nats pub over TLS: %v\n%s", err, out)
	}
	if out, err := run(r.addr, "--tlsca", certs.CAFile, "--user", "cli", "--password", "nope", "pub", "tls.test", "hello"); err == nil {
		t.Fatalf("wrong password accepted:\n%s", out)
	}

	m := startServe(t, "-p", "0", "-a", "127.0.0.1", "--tlsverify", "--tlscert", certs.ServerCert, "--tlskey", certs.ServerKey,
		"--tlscacert", certs.CAFile)
	if out, err := run(m.addr, "--tlsca", certs.CAFile, "--tlscert", certs.ClientCert, "--tlskey", certs.ClientKey, "pub", "mtls", "x"); err != nil {
		t.Fatalf("nats pub with a client certificate: %v\n%s", err, out)
	}
	if out, err := run(m.addr, "--tlsca", certs.CAFile, "pub", "mtls", "x"); err == nil {
		t.Fatalf("no client certificate accepted:\n%s", out)
	}
	if !strings.Contains(m.logs.String(), "TLS required for client connections") {
		t.Fatalf("banner:\n%s", m.logs)
	}
}

// TestServeMonitoring starts serve with a monitoring port and JetStream
// from a config file and reads /varz, /jsz and /healthz.
func TestServeMonitoring(t *testing.T) {
	conf := writeConf(t, fmt.Sprintf("listen: 127.0.0.1:0\nserver_name: watched\njetstream { store_dir: %q }\n", t.TempDir()))
	r := startServe(t, "-c", conf, "-m", "-1")
	m := monitorRE.FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatalf("no monitoring address in:\n%s", r.logs)
	}
	nc, err := nats.Connect("nats://"+r.addr, nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Publish("x", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	get := func(path string) map[string]any {
		resp, err := http.Get("http://" + m[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return v
	}
	v := get("/varz")
	if v["server_name"] != "watched" || v["in_msgs"] != 1.0 || v["in_bytes"] != 5.0 || v["connections"] != 1.0 || v["jetstream"] == nil {
		t.Errorf("varz %v", v)
	}
	if j := get("/jsz"); j["disabled"] != nil || j["streams"] != 0.0 {
		t.Errorf("jsz %v", j)
	}
	if h := get("/healthz?js-enabled-only=true"); h["status"] != "ok" {
		t.Errorf("healthz %v", h)
	}
}

var monitorRE = regexp.MustCompile(`Monitoring listening on (\S+)`)
