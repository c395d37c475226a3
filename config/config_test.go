package config

import (
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server/auth"
)

// write puts files into a temporary directory and returns the path of the
// first one.
func write(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, files[0])
}

func load(t *testing.T, files ...string) *Config {
	t.Helper()
	c, err := Load(write(t, files...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFullConfig(t *testing.T) {
	t.Setenv("JETWAL_TEST_TOKEN_PASS", "from-env")
	c := load(t, "server.conf", `
# core
listen: 127.0.0.1:4333
server_name: edge-1
max_payload: 2MB
max_connections: 100
max_control_line: 8KB
max_pending: 32MB
ping_interval: "30s"
ping_max: 3
write_deadline: "5s"
debug: true
trace: false
logfile: "/var/log/jetwal.log"
http: "127.0.0.1:8222"

include "js.conf"

ADMIN_PERMS = {
  publish: ">"
  subscribe: ">"
}
authorization {
  timeout: 1.5
  users: [
    {user: admin, password: $JETWAL_TEST_TOKEN_PASS, permissions: $ADMIN_PERMS}
    {user: reader, password: "r", permissions: {
      publish: {allow: ["$JS.API.INFO", "$JS.API.STREAM.INFO.>"], deny: "$JS.API.STREAM.DELETE.>"}
      subscribe: ["_INBOX.>", "orders.*"]
      allow_responses: {max: 3, expires: "1m"}
    }}
    {nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4}
  ]
}
no_auth_user: reader
`, "js.conf", `
jetstream {
  store_dir: "/data/js"
  max_memory_store: 1G   # the conf parser reads G as 10^9 and GB as 2^30
  max_file_store: 10GB
  sync_interval: always
  domain: hub
  unique_tag: " AZ: "
}
`)
	if c.Host != "127.0.0.1" || c.Port != 4333 || c.ServerName != "edge-1" || c.MaxPayload != 2<<20 ||
		c.MaxConnections != 100 || c.MaxControlLine != 8<<10 || c.MaxPending != 32<<20 ||
		c.PingInterval != 30*time.Second || c.MaxPingsOut != 3 || c.WriteDeadline != 5*time.Second ||
		!c.Debug || c.Trace || c.LogFile != "/var/log/jetwal.log" || c.HTTPHost != "127.0.0.1" || c.HTTPPort != 8222 {
		t.Fatalf("core settings: %+v", c)
	}
	js := c.JetStream
	if !js.Enabled || js.StoreDir != "/data/js" || js.MaxMemory != 1e9 || js.MaxStore != 10<<30 || js.Sync == nil || js.Sync.Mode != durable.Always ||
		js.Domain != "hub" || js.UniqueTag != "az:" {
		t.Fatalf("jetstream: %+v", js)
	}
	if c.AuthTimeout != 1500*time.Millisecond || c.Auth.NoAuthUser != "reader" || len(c.Auth.Users) != 2 || len(c.Auth.Nkeys) != 1 {
		t.Fatalf("auth: %+v", c.Auth)
	}
	admin, reader := c.Auth.Users[0], c.Auth.Users[1]
	if admin.Username != "admin" || admin.Password != "from-env" || admin.Permissions.Publish.Allow[0] != ">" {
		t.Fatalf("admin: %+v", admin)
	}
	p := reader.Permissions
	if len(p.Publish.Allow) != 2 || p.Publish.Deny[0] != "$JS.API.STREAM.DELETE.>" ||
		strings.Join(p.Subscribe.Allow, ",") != "_INBOX.>,orders.*" || p.Response.MaxMsgs != 3 || p.Response.Expires != time.Minute {
		t.Fatalf("reader permissions: %+v %+v %+v", p.Publish, p.Subscribe, p.Response)
	}
	for _, k := range []string{"port", "host", "max_payload", "jetstream", "authorization", "no_auth_user", "http", "debug", "trace", "logfile"} {
		if !c.Set[k] {
			t.Errorf("Set lacks %q", k)
		}
	}
	if c.Set["tls"] || c.TLS != nil {
		t.Error("tls reported set")
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
}

func TestShortForms(t *testing.T) {
	c := load(t, "a.conf", `
port: 4444
host: "::1"
jetstream: enabled
http_port: 8333
authorization { token: "s3cret" }
`)
	if c.Port != 4444 || c.Host != "::1" || !c.JetStream.Enabled || c.HTTPPort != 8333 || c.Auth.Token != "s3cret" {
		t.Fatalf("%+v", c)
	}
	c = load(t, "b.conf", "jetstream: true\nmonitor_port: 9000\nauthorization { user: a, password: b, permissions: { publish: \"x.>\" } }\n")
	if !c.JetStream.Enabled || c.HTTPPort != 9000 || c.Auth.Username != "a" || c.Auth.Permissions.Publish.Allow[0] != "x.>" {
		t.Fatalf("%+v", c)
	}
	c = load(t, "c.conf", "jetstream { sync: \"200ms\", max_mem: 1073741824 }\nhttp: 8222\n")
	if c.JetStream.Sync == nil || *c.JetStream.Sync != (durable.Policy{Mode: durable.Interval, Interval: 200 * time.Millisecond}) || c.JetStream.MaxMemory != 1<<30 || c.HTTPPort != 8222 {
		t.Fatalf("%+v", c.JetStream)
	}
	if _, ok := (&Config{}).Set["x"]; ok {
		t.Fatal("unreachable")
	}
}

func TestTLSBlock(t *testing.T) {
	certs := testcert.New(t)
	c := load(t, "tls.conf", `
tls {
  cert_file: "`+certs.ServerCert+`"
  key_file: "`+certs.ServerKey+`"
  ca_file: "`+certs.CAFile+`"
  verify_and_map: true
  timeout: 3
  handshake_first: true
  min_version: "1.3"
  allow_insecure_cipher_suites: true
}
authorization { users: [ {user: "`+certs.ClientEmail+`"} ] }
`)
	tl := c.TLS
	if tl == nil || !tl.VerifyAndMap || !tl.HandshakeFirst || tl.Timeout != 3*time.Second || !c.Auth.MapCerts {
		t.Fatalf("%+v", tl)
	}
	cfg, err := tl.Config()
	if err != nil || len(cfg.Certificates) != 1 || cfg.ClientCAs == nil || cfg.MinVersion != tls.VersionTLS13 {
		t.Fatalf("%v %+v", err, cfg)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].String(), `"tls.allow_insecure_cipher_suites" is not supported`) {
		t.Fatalf("warnings %v", c.Warnings)
	}
}

func TestWarnings(t *testing.T) {
	c := load(t, "w.conf", "port: 4222\ngateway {\n  port: 7222\n}\n")
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.String())
	}
	s := strings.Join(got, "\n")
	if len(got) != 1 || !strings.Contains(s, `w.conf:2:`) || !strings.Contains(s, `"gateway" is not supported by jetwal (no gateways)`) {
		t.Fatalf("warnings:\n%s", s)
	}
	if c.Port != 4222 {
		t.Fatal("port lost")
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		line       int    // expected line (0 = not checked)
		want       string // part of the reason
	}{
		{"syntax", "port: 4222\nhost = {\n", 0, "Parse error"},
		{"port below -1", "port: -2\n", 1, "out of range"},
		{"http port below -1", "http: \"127.0.0.1:-2\"\n", 1, "bad port"},
		{"unknown top-level field", "port: 4222\nautorization {\n  token: x\n}\n", 2, "autorization: unknown field"},
		{"unknown jetstream field", "jetstream {\n  stor_dir: /x\n}\n", 2, "jetstream.stor_dir: unknown field"},
		{"unknown cluster field", "cluster {\n  port: 6222\n  rutes: []\n}\n", 3, "cluster.rutes: unknown field"},
		{"bad port", "\nport: 70000\n", 2, "port: 70000 is out of range"},
		{"port not a number", "port: \"abc\"\n", 1, `port: expected an integer, got "abc"`},
		{"bad duration", "ping_interval: \"soon\"\n", 1, "not a duration"},
		{"bad size", "max_payload: \"lots\"\n", 1, "expected a size"},
		{"payload too big", "max_payload: 100MB\n", 1, "want 1 byte to 64MB"},
		{"unknown variable", "port: $NOPE_NOT_SET_ANYWHERE\n", 1, "NOPE_NOT_SET_ANYWHERE"},
		{"account exports", "port: 1\naccounts {\n A: { users: [{user: a, password: b}] }\n B: {\n  exports: [ {stream: \"x.>\"} ]\n }\n}\n", 5, "accounts.B.exports: not supported by jetwal: accounts cannot share"},
		{"account imports", "accounts {\n A: {\n  imports: [ {stream: {account: B, subject: x}} ]\n }\n}\n", 3, "accounts.A.imports: not supported"},
		{"account unknown field", "accounts {\n A: { mappings: { a: b } }\n}\n", 2, "accounts.A.mappings: not supported"},
		{"user in two accounts", "accounts {\n A: { users: [{user: u, password: a}] }\n B: { users: [\n  {user: u, password: b}\n ] }\n}\n", 4, `user "u" is already declared at `},
		{"account user also in authorization", "authorization { users: [{user: u, password: a}] }\naccounts {\n A: { users: [{user: u, password: b}] }\n}\n", 3, `user "u" is already declared at `},
		{"account jetstream limit", "accounts {\n A: { jetstream: {\n  max_streams: \"many\"\n } }\n}\n", 3, "max_streams: expected an integer"},
		{"account max_ack_pending", "accounts {\n A: { jetstream: {\n  max_ack_pending: \"many\"\n } }\n}\n", 3, "max_ack_pending: expected an integer"},
		{"account jetstream limit jetwal lacks", "accounts {\n A: { jetstream: {\n  max_ack_pending: 5\n  max_bytes_required: true\n } }\n}\n", 4, "accounts.A.jetstream.max_bytes_required: not supported by jetwal"},
		{"account jetstream unknown limit", "accounts {\n A: { jetstream: { max_bytes_required: true } }\n}\n", 2, "max_bytes_required: not supported"},
		{"account named $G", "accounts {\n \"$G\": { users: [{user: u, password: a}] }\n}\n", 2, "$G is the global account"},
		{"system account of several undeclared", "system_account: OPS\naccounts { A: { users: [{user: u, password: a}] } }\n", 1, `account "OPS" is not declared`},
		{"system account undeclared", "port: 1\nsystem_account: OPS\n", 2, `account "OPS" is not declared`},
		{"system account jetstream", "system_account: SYS\naccounts {\n SYS: { jetstream: enabled }\n}\n", 3, "the system account cannot have JetStream"},
		{"system user permissions", "system_account: SYS\naccounts {\n SYS: { users: [{user: s, password: s, permissions: {publish: \">\"}}] }\n}\n", 3, "fixed permissions"},
		{"bad permission subject", "authorization {\n users: [\n  {user: a, password: b, permissions: {publish: \"a..b\"}}\n ]\n}\n", 3, "invalid subject"},
		{"unknown user field", "authorization { users: [ {user: a, pasword: b} ] }\n", 1, "pasword: unknown user field"},
		{"token and users", "authorization {\n token: x\n users: [{user: a, password: b}]\n}\n", 0, "token cannot be combined"},
		{"no_auth_user unknown", "authorization { users: [{user: a, password: b}] }\nno_auth_user: z\n", 0, `no_auth_user "z"`},
		{"tls without key", "tls {\n  cert_file: \"x.pem\"\n}\n", 1, "cert_file and key_file are both required"},
		{"tls missing files", "tls { cert_file: \"/nonexistent/c.pem\", key_file: \"/nonexistent/k.pem\" }\n", 1, "loading certificate"},
		{"auth callout", "authorization {\n auth_callout { issuer: x }\n}\n", 2, "auth_callout: not supported"},
	} {
		path := write(t, "bad.conf", tc.conf)
		_, err := Load(path)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a *config.Error", tc.name, err)
			continue
		}
		if !strings.Contains(ce.Reason, tc.want) || (tc.line != 0 && ce.Line != tc.line) || ce.File != path {
			t.Errorf("%s: got %q (file %s line %d), want %q on line %d", tc.name, err, ce.File, ce.Line, tc.want, tc.line)
		}
		if !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: %q does not start with the file name", tc.name, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.conf")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestIncludeErrorNamesIncludedFile(t *testing.T) {
	path := write(t, "main.conf", "port: 4222\ninclude \"sub.conf\"\n", "sub.conf", "max_connections: \"many\"\n")
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "sub.conf:1:") {
		t.Fatalf("got %v, want the included file's position", err)
	}
}

func TestAuthOptionsAreUsable(t *testing.T) {
	c := load(t, "u.conf", `authorization { users: [ {user: a, password: "$2a$11$V1qrpBt8/SLfEBr4NJq4T.2mg8chx8.MTblUiTBOLV3MKDeAy.f7u"} ] }`)
	a, err := auth.New(c.Auth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(auth.Credentials{User: "a", Password: "wrong"}); err == nil {
		t.Fatal("wrong password accepted against a bcrypt hash")
	}
}

func TestClusterBlock(t *testing.T) {
	c := load(t, "c.conf", `
cluster {
  name: blue
  listen: "10.0.0.1:6222"
  routes: ["nats://10.0.0.2:6222", "nats://10.0.0.3:6222"]
  authorization { user: ru, password: rp }
  pool_size: 3
}
`)
	cl := c.Cluster
	if !c.Set["cluster"] || cl.Name != "blue" || cl.Host != "10.0.0.1" || cl.Port != 6222 || len(cl.Routes) != 2 ||
		cl.Routes[1] != "nats://10.0.0.3:6222" || cl.Username != "ru" || cl.Password != "rp" {
		t.Fatalf("cluster %+v", cl)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].String(), `"cluster.pool_size" is not supported`) {
		t.Fatalf("warnings %v", c.Warnings)
	}
}
