package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/testbin"
)

// runNatsCLI runs the pinned nats CLI against addr with a fresh HOME (no
// contexts of the machine's user).
func runNatsCLI(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, testbin.NatsCLI(t), append([]string{"-s", "nats://" + addr, "--timeout", "5s"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startSysCluster starts three routed jetwal servers n1, n2, n3 of one
// clustered JetStream and waits until a PING from n1 reaches all three.
func startSysCluster(t *testing.T) []*serveRun {
	t.Helper()
	var out []*serveRun
	for _, m := range startJSCluster(t, 3) {
		out = append(out, m.run)
	}
	nc, err := nats.Connect("nats://"+out[0].addr, nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for pingCount(t, nc) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("a PING never reached the three servers; logs of n3:\n%s", out[2].logs)
		}
	}
	return out
}

// pingCount sends one PING and counts the answers that arrive within a
// second (the mesh forming is polled with it).
func pingCount(t *testing.T, nc *nats.Conn) int {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SYS.REQ.SERVER.PING", inbox, nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	for n < 3 {
		if _, err := sub.NextMsg(time.Second); err != nil {
			break
		}
		n++
	}
	return n
}

// row matches a table row of the CLI whose first cells are the given
// values.
func row(cells ...string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`│ `)
	for _, c := range cells {
		b.WriteString(regexp.QuoteMeta(c) + `\s+│\s+`)
	}
	return regexp.MustCompile(b.String())
}

// TestServerCommandsWithNatsCLI runs the CLI's server commands against
// three routed jetwal servers: each lists or reports all three.
func TestServerCommandsWithNatsCLI(t *testing.T) {
	nodes := startSysCluster(t)
	addr := nodes[1].addr // any server answers for the cluster

	out, err := runNatsCLI(t, addr, "server", "ls", "3")
	if err != nil {
		t.Fatalf("server ls: %v\n%s", err, out)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if !row(n, "C").MatchString(out) {
			t.Errorf("server ls lacks server %s:\n%s", n, out)
		}
	}
	if !row("C", "3").MatchString(out) {
		t.Errorf("server ls: no cluster C of 3 nodes:\n%s", out)
	}

	out, err = runNatsCLI(t, addr, "server", "info", "n3")
	if err != nil || !strings.Contains(out, "Server information for n3 (") || !strings.Contains(out, "JetStream:") {
		t.Errorf("server info n3: %v\n%s", err, out)
	}

	out, err = runNatsCLI(t, addr, "server", "report", "jetstream")
	if err != nil {
		t.Fatalf("server report jetstream: %v\n%s", err, out)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		// The meta leader's name carries a "*", as with nats-server.
		if !row(n, "C", "0").MatchString(out) && !row(n+"*", "C", "0").MatchString(out) {
			t.Errorf("server report jetstream lacks %s:\n%s", n, out)
		}
	}

	// The check also asks $JS.API.INFO, which waits for the clustered
	// JetStream's meta leader.
	retry(t, "server check jetstream", time.Minute, func() error {
		out, err := runNatsCLI(t, addr, "server", "check", "jetstream")
		if err != nil || !strings.HasPrefix(out, "OK JetStream") {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})

	out, err = runNatsCLI(t, addr, "account", "report", "connections")
	if err != nil || !strings.Contains(out, "NATS CLI Version") || !strings.Contains(out, "$G") {
		t.Errorf("account report connections: %v\n%s", err, out)
	}
}

// TestSysRequestsNeedSystemUser: with authentication, a user whose
// permissions do not name $SYS may not send server requests (the
// publish is refused), and one allowed "$SYS.REQ.>" gets the answers, from
// nats.go and from the CLI.
func TestSysRequestsNeedSystemUser(t *testing.T) {
	conf := writeConf(t, `
listen: 127.0.0.1:0
server_name: guarded
authorization {
  users: [
    {user: app, password: app}
    {user: ops, password: ops, permissions: {publish: {allow: ["$SYS.REQ.>", ">"]}}}
  ]
}
`)
	r := startServe(t, "-c", conf)
	url := "nats://" + r.addr

	var mu sync.Mutex
	var asyncErr error
	app, err := nats.Connect(url, nats.UserInfo("app", "app"), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			mu.Lock()
			asyncErr = err
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if _, err := app.Request("$SYS.REQ.SERVER.PING.VARZ", nil, 2*time.Second); err == nil {
		t.Fatal("a user without $SYS permission got an answer")
	}
	waitFor := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		e := asyncErr
		mu.Unlock()
		if e != nil {
			if !strings.Contains(e.Error(), `Permissions Violation for Publish to "$SYS.REQ.SERVER.PING.VARZ"`) {
				t.Fatalf("error: %v", e)
			}
			break
		}
		if time.Now().After(waitFor) {
			t.Fatal("no permissions violation reported")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Nor watch the connection events.
	mu.Lock()
	asyncErr = nil
	mu.Unlock()
	if _, err := app.SubscribeSync("$SYS.ACCOUNT.>"); err != nil {
		t.Fatal(err)
	}
	waitFor = time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		e := asyncErr
		mu.Unlock()
		if e != nil {
			if !strings.Contains(e.Error(), `Permissions Violation for Subscription to "$SYS.ACCOUNT.>"`) {
				t.Fatalf("error: %v", e)
			}
			break
		}
		if time.Now().After(waitFor) {
			t.Fatal("no permissions violation reported for the subscription")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The app user keeps its other rights.
	if err := app.Publish("orders.1", []byte("x")); err != nil {
		t.Fatal(err)
	}

	ops, err := nats.Connect(url, nats.UserInfo("ops", "ops"), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	m, err := ops.Request("$SYS.REQ.SERVER.PING.VARZ", nil, 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"server_name":"guarded"`) {
		t.Fatalf("system user: %v %s", err, msgData(m))
	}
	out, err := runNatsCLI(t, r.addr, "--user", "ops", "--password", "ops", "server", "ls", "1")
	if err != nil || !row("guarded").MatchString(out) {
		t.Errorf("server ls as ops: %v\n%s", err, out)
	}
	out, err = runNatsCLI(t, r.addr, "--user", "app", "--password", "app", "server", "ls", "1")
	if err == nil {
		t.Errorf("server ls as app succeeded:\n%s", out)
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%q", m.Data)
}

// TestSystemAccountUserWithNatsCLI: a user of the system account declared
// in the config file runs the CLI's server commands; it cannot publish to
// the application's subjects.
func TestSystemAccountUserWithNatsCLI(t *testing.T) {
	conf := writeConf(t, fmt.Sprintf(`
listen: 127.0.0.1:0
server_name: withsys
jetstream { store_dir: %q }
authorization { users: [ {user: app, password: app} ] }
accounts { SYS: { users: [ {user: admin, password: adm} ] } }
system_account: SYS
`, filepath.Join(t.TempDir(), "store")))
	r := startServe(t, "-c", conf)
	out, err := runNatsCLI(t, r.addr, "--user", "admin", "--password", "adm", "server", "ls", "1")
	if err != nil || !row("withsys").MatchString(out) {
		t.Errorf("server ls as the system user: %v\n%s", err, out)
	}
	// (server check jetstream reads the connected account's $JS.API.INFO
	// too: it is for a JetStream user, as with nats-server's $SYS.)
	out, err = runNatsCLI(t, r.addr, "--user", "admin", "--password", "adm", "server", "report", "jetstream")
	if err != nil || !row("withsys", "", "0").MatchString(out) {
		t.Errorf("server report jetstream as the system user: %v\n%s", err, out)
	}
	out, err = runNatsCLI(t, r.addr, "--user", "admin", "--password", "adm", "pub", "orders.1", "x")
	if err == nil && !strings.Contains(out, "Permissions Violation") {
		t.Errorf("the system user published to an application subject:\n%s", out)
	}
}
