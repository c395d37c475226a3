package serve

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// runNatsCLI runs the pinned nats CLI against addr with a fresh HOME (no
// contexts of the machine's user).
func runNatsCLI(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	return natsCLI(t, "nats://"+addr, args...)
}

// sysConf configures, as the README's production example, the system
// account SYS with its user ops (password ops), and the $G user app whom
// a client without credentials logs in as.
const sysConf = `
authorization { users: [ {user: app, password: app} ] }
no_auth_user: app
accounts { SYS: { users: [ {user: ops, password: ops} ] } }
system_account: SYS
`

// opsUser are the nats CLI's flags to log in as sysConf's system user.
var opsUser = []string{"--user", "ops", "--password", "ops"}

// startSysJSCluster starts n servers of one clustered JetStream, as
// startJSCluster, each with sysConf.
func startSysJSCluster(t *testing.T, n int) []*member {
	t.Helper()
	conf := writeConf(t, sysConf)
	ports := freePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	ms := make([]*member, n)
	for i := range ms {
		ms[i] = &member{name: fmt.Sprintf("n%d", i+1), route: fmt.Sprintf("127.0.0.1:%d", ports[i])}
		ms[i].args = []string{"-c", conf, "-js", "-a", "127.0.0.1", "-p", "0", "-n", ms[i].name, "-sd", t.TempDir(),
			"--cluster_name", "C", "--cluster", routes[i], "--routes", strings.Join(routes, ",")}
		ms[i].start(t)
	}
	return ms
}

// startSysCluster starts three routed jetwal servers n1, n2, n3 of one
// clustered JetStream with sysConf and waits until a PING from the system
// user on n1 reaches all three.
func startSysCluster(t *testing.T) []*serveRun {
	t.Helper()
	var out []*serveRun
	for _, m := range startSysJSCluster(t, 3) {
		out = append(out, m.run)
	}
	nc, err := nats.Connect("nats://"+out[0].addr, nats.UserInfo("ops", "ops"), nats.NoReconnect())
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

// TestServerCommandsWithNatsCLI runs the CLI's server commands as the
// system account's user against three routed jetwal servers: each lists
// or reports all three. A client of $G gets none of that, but its own
// account's connections (nats-server's imported CONNZ ping).
func TestServerCommandsWithNatsCLI(t *testing.T) {
	nodes := startSysCluster(t)
	addr := nodes[1].addr // any server answers for the cluster
	ops := func(args ...string) (string, error) {
		t.Helper()
		return runNatsCLI(t, addr, append(append([]string(nil), opsUser...), args...)...)
	}

	out, err := ops("server", "ls", "3")
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

	out, err = ops("server", "info", "n3")
	if err != nil || !strings.Contains(out, "Server information for n3 (") || !strings.Contains(out, "JetStream:") {
		t.Errorf("server info n3: %v\n%s", err, out)
	}

	out, err = ops("server", "report", "jetstream")
	if err != nil {
		t.Fatalf("server report jetstream: %v\n%s", err, out)
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		// The meta leader's name carries a "*", as with nats-server.
		if !row(n, "C", "0").MatchString(out) && !row(n+"*", "C", "0").MatchString(out) {
			t.Errorf("server report jetstream lacks %s:\n%s", n, out)
		}
	}

	// The check reads the connected account's $JS.API.INFO, which waits
	// for the clustered JetStream's meta leader: it is for a JetStream
	// user (app, of $G), not the system account's, as with nats-server.
	eventually(t, "server check jetstream", time.Minute, func() error {
		out, err := runNatsCLI(t, addr, "server", "check", "jetstream")
		if err != nil || !strings.HasPrefix(out, "OK JetStream") {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})

	// From $G: its own connections only, and no server list.
	out, err = runNatsCLI(t, addr, "account", "report", "connections")
	if err != nil || !strings.Contains(out, "NATS CLI Version") || !strings.Contains(out, "$G") || strings.Contains(out, "SYS") {
		t.Errorf("account report connections from $G: %v\n%s", err, out)
	}
	out, err = runNatsCLI(t, addr, "server", "ls", "3")
	if err == nil || row("n1", "C").MatchString(out) {
		t.Errorf("server ls from $G: %v\n%s", err, out)
	}
}

// TestServerRequestsNeedSystemAccount: with authentication and a system
// account, no user of $G gets the server requests (no responders), not
// even one whose permissions allow publishing under $SYS, nor sees the
// $SYS.SERVER and $SYS.ACCOUNT events; the system account's user gets
// them, from nats.go and from the CLI.
func TestServerRequestsNeedSystemAccount(t *testing.T) {
	conf := writeConf(t, `
listen: 127.0.0.1:0
server_name: guarded
authorization {
  users: [
    {user: app, password: app}
    {user: wide, password: wide, permissions: {publish: {allow: ["$SYS.>", ">"]}}}
  ]
}
accounts { SYS: { users: [ {user: ops, password: ops} ] } }
system_account: SYS
`)
	r := startServe(t, "-c", conf)
	url := "nats://" + r.addr
	for _, user := range []string{"app", "wide"} {
		assertNoServerAnswers(t, connectAs(t, url, user))
	}
	ops := connectAs(t, url, "ops")
	m, err := ops.Request("$SYS.REQ.SERVER.PING.VARZ", nil, 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"server_name":"guarded"`) {
		t.Fatalf("system user: %v %s", err, msgData(m))
	}
	for _, subj := range append(serverSubjects(ops.ConnectedServerId()), "$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.$G.CONNZ") {
		if _, err := ops.Request(subj, nil, 10*time.Second); err != nil {
			t.Errorf("%s from the system user: %v", subj, err)
		}
	}
	out, err := runNatsCLI(t, r.addr, append(append([]string(nil), opsUser...), "server", "ls", "1")...)
	if err != nil || !row("guarded").MatchString(out) {
		t.Errorf("server ls as ops: %v\n%s", err, out)
	}
	for _, user := range []string{"app", "wide"} {
		out, err = runNatsCLI(t, r.addr, "--user", user, "--password", user, "server", "ls", "1")
		if err == nil || row("guarded").MatchString(out) {
			t.Errorf("server ls as %s: %v\n%s", user, err, out)
		}
	}
}

// TestServerRequestsWithoutAuth: with no authentication and no system
// account configured, the anonymous clients of $G get no server answers
// and no events (the system account is nats-server's "$SYS", with no
// users), but their own account's connections and user info.
func TestServerRequestsWithoutAuth(t *testing.T) {
	r := startServe(t, "-a", "127.0.0.1", "-p", "0", "-n", "open", "-js", "-sd", t.TempDir())
	nc := connectAs(t, "nats://"+r.addr, "")
	m, err := nc.Request("$SYS.REQ.SERVER.PING.CONNZ", nil, 10*time.Second)
	var c struct {
		Data struct {
			Conns []struct {
				Account string `json:"account"`
			} `json:"connections"`
		} `json:"data"`
	}
	if err != nil || json.Unmarshal(m.Data, &c) != nil || len(c.Data.Conns) != 1 || c.Data.Conns[0].Account != "$G" {
		t.Errorf("CONNZ ping from $G: %v %s", err, msgData(m))
	}
	assertNoServerAnswers(t, nc)
	m, err = nc.Request("$SYS.REQ.USER.INFO", nil, 10*time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"account":"$G"`) {
		t.Errorf("user info from $G: %v %s", err, msgData(m))
	}
	out, err := runNatsCLI(t, r.addr, "server", "ls", "1")
	if err == nil || row("open").MatchString(out) {
		t.Errorf("anonymous server ls: %v\n%s", err, out)
	}
}

// connectAs connects to url as user (password = user; "" = anonymous).
func connectAs(t *testing.T, url, user string) *nats.Conn {
	t.Helper()
	opts := []nats.Option{nats.NoReconnect()}
	if user != "" {
		opts = append(opts, nats.UserInfo(user, user))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// serverSubjects are server requests served in the system account only,
// id that of the server asked.
func serverSubjects(id string) []string {
	return []string{"$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING.STATSZ", "$SYS.REQ.SERVER.PING.VARZ",
		"$SYS.REQ.SERVER.PING.JSZ", "$SYS.REQ.SERVER.PING.HEALTHZ", "$SYS.REQ.SERVER.PING.ACCOUNTZ",
		"$SYS.REQ.ACCOUNT.$G.JSZ", "$SYS.REQ.ACCOUNT.$G.INFO",
		"$SYS.REQ.SERVER." + id + ".VARZ", "$SYS.REQ.SERVER." + id + ".JSZ"}
}

// assertNoServerAnswers checks that nc, a client of a user account, gets
// no responders for the server requests (to its server's id too) and no
// $SYS.SERVER or $SYS.ACCOUNT events while a client connects and
// disconnects.
func assertNoServerAnswers(t *testing.T, nc *nats.Conn) {
	t.Helper()
	for _, subj := range serverSubjects(nc.ConnectedServerId()) {
		if m, err := nc.Request(subj, nil, 5*time.Second); err != nats.ErrNoResponders {
			t.Errorf("%s from %s: %v %s, want no responders", subj, nc.Opts.User, err, msgData(m))
		}
	}
	var subs []*nats.Subscription
	for _, subj := range []string{"$SYS.SERVER.>", "$SYS.ACCOUNT.>"} {
		sub, err := nc.SubscribeSync(subj)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	url := nc.ConnectedUrl()
	other, err := nats.Connect(url, nats.UserInfo(nc.Opts.User, nc.Opts.Password), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	// Events are published asynchronously: give them time to arrive,
	// were they sent.
	for _, sub := range subs {
		if m, err := sub.NextMsg(time.Second); err == nil {
			t.Errorf("%s got %s on %s", nc.Opts.User, m.Subject, sub.Subject)
		}
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
