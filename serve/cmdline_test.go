package serve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/config"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/internal/syncbuf"
)

func TestParseCommandLine(t *testing.T) {
	o, err := ParseCommandLine(nil, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Port != 4222 || o.Server.Host != "0.0.0.0" || o.JetStream || o.Server.MaxPayload != 1<<20 ||
		o.Store.Dir != filepath.Join(os.TempDir(), "jetwal", "jetstream") || o.Store.Sync.Mode != durable.Always {
		t.Fatalf("defaults: %+v", o)
	}
	for _, args := range [][]string{
		{"-p", "5222", "-a", "127.0.0.1", "-js", "-sd", "/x/y", "-D", "-V"},
		{"--port", "5222", "--addr", "127.0.0.1", "--jetstream", "--store_dir", "/x/y", "-DV"},
		{"--port=5222", "--addr=127.0.0.1", "--jetstream", "--store_dir=/x/y", "--debug", "--trace"},
	} {
		o, err := ParseCommandLine(args, testVersion, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if o.Server.Port != 5222 || o.Server.Host != "127.0.0.1" || !o.JetStream || o.Store.Dir != "/x/y" || !o.Server.Debug || !o.Server.Trace {
			t.Fatalf("%v parsed as %+v", args, o)
		}
	}
	o, err = ParseCommandLine([]string{"--max_payload", "64KB", "--sync", "200ms", "--max_connections", "10"}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.MaxPayload != 64<<10 || o.Store.Sync != (durable.Policy{Mode: durable.Interval, Interval: 200 * time.Millisecond}) || o.Server.MaxConnections != 10 {
		t.Fatalf("parsed %+v", o)
	}
	for _, bad := range [][]string{{"--sync", "sometimes"}, {"--max_payload", "lots"}, {"--max_payload", "0"}, {"-p", "99999"}, {"extra"}} {
		if _, err := ParseCommandLine(bad, testVersion, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestParseSyncAndSize(t *testing.T) {
	for in, want := range map[string]durable.Policy{
		"always": {Mode: durable.Always}, "never": {Mode: durable.Never}, "2s": {Mode: durable.Interval, Interval: 2 * time.Second}, "NEVER": {Mode: durable.Never},
	} {
		got, err := parseSync(in)
		if err != nil || got != want {
			t.Errorf("parseSync(%q) = %+v, %v", in, got, err)
		}
	}
	for in, want := range map[string]int64{"1048576": 1 << 20, "1MB": 1 << 20, "1MiB": 1 << 20, "512k": 512 << 10, "2 GB": 2 << 30, "7B": 7} {
		got, err := config.ParseSize(in)
		if err != nil || got != want {
			t.Errorf("config.ParseSize(%q) = %d, %v", in, got, err)
		}
	}
}

func TestConfigFileAndFlagsMerge(t *testing.T) {
	conf := writeConf(t, `
port: 5000
host: 127.0.0.1
max_payload: 2MB
max_connections: 50
ping_interval: "1m"
debug: true
jetstream { store_dir: "/js/store", max_memory_store: 1GB, sync_interval: "1s", domain: hub }
http_port: 8222
authorization { user: u, password: p }
`)
	o, err := ParseCommandLine([]string{"-c", conf, "-p", "6000", "--max_connections", "7", "--sync", "never"}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Server.Port != 6000 || o.Server.MaxConnections != 7 || o.Store.Sync != (durable.Policy{Mode: durable.Never}) {
		t.Errorf("flags did not override the file: %+v %+v", o.Server, o.Store)
	}
	if o.Server.Host != "127.0.0.1" || o.Server.MaxPayload != 2<<20 || o.Server.PingInterval != time.Minute || !o.Server.Debug ||
		!o.JetStream || o.Store.Dir != "/js/store" || o.Store.MaxMemory != 1<<30 || o.Store.Domain != "hub" || o.HTTPPort != 8222 || o.HTTPHost != "127.0.0.1" {
		t.Errorf("file settings lost: %+v %+v", o.Server, o.Store)
	}
	if o.Server.Auth == nil || o.Auth.Username != "u" {
		t.Fatalf("authorization not applied: %+v", o.Auth)
	}
	// --user/--pass replace the file's; --js=false turns JetStream off.
	o, err = ParseCommandLine([]string{"--config", conf, "--user", "x", "--pass", "y", "--js=false"}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Auth.Username != "x" || o.Auth.Password != "y" || o.JetStream {
		t.Fatalf("%+v js=%v", o.Auth, o.JetStream)
	}
	// --auth with a users list in the file is a conflict, reported as such.
	conf2 := writeConf(t, "authorization { users: [{user: a, password: b}] }\n")
	var ce ConfigError
	if _, err := ParseCommandLine([]string{"-c", conf2, "--auth", "tok"}, testVersion, io.Discard); !errors.As(err, &ce) {
		t.Fatalf("token plus users: %v", err)
	}
	if _, err := ParseCommandLine([]string{"--tlscert", "x.pem"}, testVersion, io.Discard); err == nil {
		t.Fatal("--tlscert without --tls accepted")
	}
}

// TestAccountsConfigRefusals: what jetwal refuses at startup, with file
// and line where the file is at fault.
func TestAccountsConfigRefusals(t *testing.T) {
	conf := writeConf(t, "listen: 127.0.0.1:0\njetstream: enabled\ncluster { listen: 127.0.0.1:0 }\naccounts {\n A: { users: [{user: a, password: a}], jetstream: enabled }\n}\n")
	// An account's JetStream in a cluster is served (serve/cluster_accounts.go).
	if _, err := ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard); err != nil {
		t.Fatalf("account JetStream in a cluster refused: %v", err)
	}
	conf = writeConf(t, "listen: 127.0.0.1:0\naccounts {\n A: { users: [{user: a, password: a}] }\n B: {\n  exports: [ {stream: \"x.>\"} ]\n }\n}\n")
	_, err := ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	if err == nil || !strings.Contains(err.Error(), conf+":5:") || !strings.Contains(err.Error(), "exports") {
		t.Fatalf("exports: %v", err)
	}
	conf = writeConf(t, "listen: 127.0.0.1:0\naccounts {\n A: { users: [{user: u, password: a}] }\n B: { users: [{user: u, password: b}] }\n}\n")
	_, err = ParseCommandLine([]string{"-c", conf}, testVersion, io.Discard)
	if err == nil || !strings.Contains(err.Error(), conf+":4:") || !strings.Contains(err.Error(), `user "u" is already declared at `+conf+":3:") {
		t.Fatalf("user in two accounts: %v", err)
	}
}

// testVersion is the jetwal version the tests' command lines report.
const testVersion = "0.0.0-test"

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClusterFlags: --cluster, --routes and --cluster_name as nats-server
// takes them, the cluster block of a config file, flags over the file, and
// the errors.
func TestClusterFlags(t *testing.T) {
	o, err := ParseCommandLine([]string{"--cluster", "nats://127.0.0.1:6299", "--routes", "nats://127.0.0.1:6300, nats://10.0.0.2:6301",
		"--cluster_name", "C1", "-n", "a"}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co := o.Server.Cluster
	if co == nil || co.Host != "127.0.0.1" || co.Port != 6299 || co.Name != "C1" || len(co.Routes) != 2 || co.Routes[1].Host != "10.0.0.2:6301" {
		t.Fatalf("cluster options %+v", co)
	}
	if o, err := ParseCommandLine([]string{"-p", "4555"}, testVersion, io.Discard); err != nil || o.Server.Cluster != nil {
		t.Fatalf("no cluster flags: %+v %v", o.Server.Cluster, err)
	}
	conf := writeConf(t, `
cluster {
  name: blue
  listen: "127.0.0.1:7000"
  routes: ["nats://127.0.0.1:7001", "nats://127.0.0.1:7002"]
  authorization { user: ru, password: rp }
}
`)
	o, err = ParseCommandLine([]string{"-c", conf, "--cluster_name", "green"}, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	co = o.Server.Cluster
	if co == nil || co.Name != "green" || co.Port != 7000 || len(co.Routes) != 2 || co.Username != "ru" || co.Password != "rp" {
		t.Fatalf("cluster from the file %+v", co)
	}
	for _, args := range [][]string{
		{"--routes", "nats://127.0.0.1:1"},
		{"--cluster", "nats://127.0.0.1:6299", "--routes", "http://x:1"},
		{"--cluster", "nats://127.0.0.1"},
		{"--cluster", "nats://127.0.0.1:99999"},
	} {
		if _, err := ParseCommandLine(args, testVersion, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// serveRun is an in-process `jetwal serve`.
type serveRun struct {
	addr string
	logs *syncbuf.Buffer
	srv  *Server
}

// startServe runs serve with args until the test ends.
func startServe(t *testing.T, args ...string) *serveRun {
	t.Helper()
	r, stop := runServer(t, args)
	t.Cleanup(stop)
	return r
}

// runServer starts, in process through package serve, the server the
// command line args configure (parsed as `jetwal serve` parses them), and
// returns it with the function that shuts it down (which reports an error
// or a shutdown that does not finish, with every goroutine's stack).
func runServer(t *testing.T, args []string) (*serveRun, func()) {
	t.Helper()
	o, err := ParseCommandLine(args, testVersion, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := &serveRun{logs: &syncbuf.Buffer{}}
	o.Logger = slog.New(NewLogHandler(r.logs, false, false))
	srv, err := New(o.Options)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("start: %v\n%s", err, r.logs)
	}
	r.srv, r.addr = srv, srv.Addr().String()
	var once sync.Once
	return r, func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.Shutdown(ctx) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v", r.addr, err)
				}
			case <-time.After(40 * time.Second):
				buf := make([]byte, 4<<20)
				t.Errorf("%s: shutdown did not return; goroutines:\n%s", r.addr, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
