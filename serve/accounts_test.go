package serve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// accountsConf: accounts A and B with JetStream (B with limits), C
// without, and the system account SYS.
func accountsConf(t *testing.T, store string) string {
	return writeConf(t, fmt.Sprintf(`
listen: 127.0.0.1:0
server_name: multi
jetstream { store_dir: %q }
accounts {
  A: { users: [ {user: a, password: pa} ], jetstream: enabled }
  B: {
    users: [ {user: b, password: pb} ]
    jetstream: { max_streams: 1, max_consumers: 1, max_file: 1MB, max_ack_pending: 10 }
  }
  C: { users: [ {user: c, password: pc} ] }
  SYS: { users: [ {user: admin, password: adm} ] }
}
system_account: SYS
`, store))
}

// startServeStoppable is startServe with a stop function (for restarts).
func startServeStoppable(t *testing.T, args ...string) (*serveRun, func()) {
	t.Helper()
	r, stop := runServer(t, args)
	t.Cleanup(stop)
	return r, stop
}

func dialUser(t *testing.T, addr, user, pass string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect("nats://"+addr, nats.UserInfo(user, pass), nats.NoReconnect(), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// apiCall sends a JetStream API request and decodes the answer.
func apiCall(t *testing.T, nc *nats.Conn, subj string, req any) map[string]any {
	t.Helper()
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
	}
	m, err := nc.Request(subj, body, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	var out map[string]any
	if err := json.Unmarshal(m.Data, &out); err != nil {
		t.Fatalf("%s: %v: %s", subj, err, m.Data)
	}
	return out
}

// errCode returns the err_code of an API answer, 0 without error.
func errCode(resp map[string]any) int {
	e, ok := resp["error"].(map[string]any)
	if !ok {
		return 0
	}
	n, _ := e["err_code"].(float64)
	return int(n)
}

func streamNames(t *testing.T, nc *nats.Conn) []string {
	t.Helper()
	resp := apiCall(t, nc, "$JS.API.STREAM.NAMES", nil)
	var out []string
	list, _ := resp["streams"].([]any)
	for _, n := range list {
		out = append(out, n.(string))
	}
	return out
}

func addStream(t *testing.T, nc *nats.Conn, name string, subjects ...string) map[string]any {
	t.Helper()
	return apiCall(t, nc, "$JS.API.STREAM.CREATE."+name, map[string]any{"name": name, "subjects": subjects, "storage": "file"})
}

// TestAccountsJetStream: each account has its own streams (same name,
// different data, own directory), limits and answers, over real clients;
// they survive a restart.
func TestAccountsJetStream(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	conf := accountsConf(t, store)
	r, stop := startServeStoppable(t, "-c", conf)
	na, nb, ncc := dialUser(t, r.addr, "a", "pa"), dialUser(t, r.addr, "b", "pb"), dialUser(t, r.addr, "c", "pc")

	for _, nc := range []*nats.Conn{na, nb} {
		if resp := addStream(t, nc, "S", "s.>"); errCode(resp) != 0 {
			t.Fatalf("create S as %s: %v", nc.Opts.User, resp)
		}
	}
	if resp := addStream(t, na, "ONLYA", "onlya"); errCode(resp) != 0 {
		t.Fatalf("create ONLYA: %v", resp)
	}
	for _, p := range []struct {
		nc   *nats.Conn
		data string
	}{{na, "for A"}, {nb, "for B"}, {nb, "for B again"}} {
		m, err := p.nc.Request("s.1", []byte(p.data), 10*time.Second)
		if err != nil || !strings.Contains(string(m.Data), `"stream":"S"`) {
			t.Fatalf("publish to S as %s: %v %v", p.nc.Opts.User, m, err)
		}
	}
	if got := strings.Join(streamNames(t, na), ","); got != "ONLYA,S" {
		t.Fatalf("A's stream names %q", got)
	}
	if got := strings.Join(streamNames(t, nb), ","); got != "S" {
		t.Fatalf("B's stream names %q (A's streams must be invisible)", got)
	}
	if resp := apiCall(t, nb, "$JS.API.STREAM.INFO.ONLYA", nil); errCode(resp) != 10059 {
		t.Fatalf("B asking for A's stream: %v, want stream not found (10059)", resp)
	}
	checkFirst := func(nc *nats.Conn, wantMsgs float64, wantData string) {
		t.Helper()
		info := apiCall(t, nc, "$JS.API.STREAM.INFO.S", nil)
		state, _ := info["state"].(map[string]any)
		if state == nil || state["messages"] != wantMsgs {
			t.Fatalf("%s's S: %v, want %v messages", nc.Opts.User, info, wantMsgs)
		}
		get := apiCall(t, nc, "$JS.API.STREAM.MSG.GET.S", map[string]any{"seq": 1})
		msg, _ := get["message"].(map[string]any)
		if msg == nil || msg["data"] == nil {
			t.Fatalf("%s's S msg 1: %v", nc.Opts.User, get)
		}
		if d := msg["data"].(string); d != b64(wantData) {
			t.Fatalf("%s's S msg 1 = %s, want %q", nc.Opts.User, d, wantData)
		}
	}
	checkFirst(na, 1, "for A")
	checkFirst(nb, 2, "for B")
	for _, dir := range []string{"A/streams/S", "A/streams/ONLYA", "B/streams/S"} {
		if fi, err := os.Stat(filepath.Join(store, "jetstream", dir)); err != nil || !fi.IsDir() {
			t.Fatalf("jetstream/%s: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(store, "jetstream", "B", "streams", "ONLYA")); err == nil {
		t.Fatal("A's stream stored under B")
	}

	// B's limits: one stream, one consumer, 1MB of file storage.
	if resp := addStream(t, nb, "T", "t"); errCode(resp) != 10027 {
		t.Fatalf("B's second stream: %v, want 10027", resp)
	}
	big := apiCall(t, na, "$JS.API.STREAM.CREATE.BIG", map[string]any{"name": "BIG", "subjects": []string{"big"}, "max_bytes": 2 << 20})
	if errCode(big) != 0 {
		t.Fatalf("A (unlimited) creating a 2MB stream: %v", big)
	}
	if resp := apiCall(t, nb, "$JS.API.STREAM.UPDATE.S", map[string]any{"name": "S", "subjects": []string{"s.>"}, "storage": "file", "max_bytes": 2 << 20}); errCode(resp) != 10047 {
		t.Fatalf("B reserving 2MB of its 1MB: %v, want 10047", resp)
	}
	cons := func(name string) map[string]any {
		return apiCall(t, nb, "$JS.API.CONSUMER.CREATE.S."+name, map[string]any{"stream_name": "S", "config": map[string]any{"durable_name": name, "ack_policy": "explicit"}})
	}
	if resp := cons("C1"); errCode(resp) != 0 {
		t.Fatalf("B's first consumer: %v", resp)
	} else if cfg, _ := resp["config"].(map[string]any); cfg == nil || cfg["max_ack_pending"] != 10.0 {
		t.Fatalf("B's first consumer: %v, want B's max_ack_pending 10 as its default", resp)
	}
	// Over B's max_ack_pending: nats-server's 10121 (before the count).
	over := apiCall(t, nb, "$JS.API.CONSUMER.CREATE.S.C3", map[string]any{"stream_name": "S", "config": map[string]any{"durable_name": "C3", "ack_policy": "explicit", "max_ack_pending": 11}})
	if e, _ := over["error"].(map[string]any); errCode(over) != 10121 || e["description"] != "consumer max ack pending exceeds system limit of 10" {
		t.Fatalf("B's consumer over its max_ack_pending: %v, want 10121", over)
	}
	if resp := cons("C1"); errCode(resp) != 0 {
		t.Fatalf("B's first consumer again (same config): %v", resp)
	}
	if resp := cons("C2"); errCode(resp) != 10026 {
		t.Fatalf("B's second consumer: %v, want 10026", resp)
	}
	info := apiCall(t, nb, "$JS.API.INFO", nil)
	limits, _ := info["limits"].(map[string]any)
	if limits == nil || limits["max_streams"] != 1.0 || limits["max_consumers"] != 1.0 || limits["max_storage"] != float64(1<<20) || limits["max_memory"] != -1.0 || limits["max_ack_pending"] != 10.0 {
		t.Fatalf("B's account info limits: %v", info)
	}
	if info["streams"] != 1.0 || info["consumers"] != 1.0 {
		t.Fatalf("B's account info usage: %v", info)
	}
	if info := apiCall(t, na, "$JS.API.INFO", nil); info["streams"] != 3.0 {
		t.Fatalf("A's account info: %v", info)
	}

	// C has no JetStream: nats-server's 10039.
	resp := apiCall(t, ncc, "$JS.API.INFO", nil)
	if errCode(resp) != 10039 || resp["type"] != "io.nats.jetstream.api.v1.account_info_response" {
		t.Fatalf("C's account info: %v", resp)
	}
	if resp := addStream(t, ncc, "S", "s.>"); errCode(resp) != 10039 {
		t.Fatalf("C creating a stream: %v", resp)
	}
	if _, err := os.Stat(filepath.Join(store, "jetstream", "C")); err == nil {
		t.Fatal("a directory for C, which has no JetStream")
	}

	// The system account's JSZ lists every account's JetStream.
	ns := dialUser(t, r.addr, "admin", "adm")
	jsz := apiCall(t, ns, "$SYS.REQ.SERVER.PING.JSZ", map[string]any{"accounts": true})
	data, _ := jsz["data"].(map[string]any)
	var accs []string
	if data != nil {
		details, _ := data["account_details"].([]any)
		for _, d := range details {
			accs = append(accs, d.(map[string]any)["name"].(string))
		}
		if data["streams"] != 4.0 {
			t.Errorf("jsz streams %v, want 4 (A's 3 and B's 1)", data["streams"])
		}
	}
	if strings.Join(accs, ",") != "A,B" {
		t.Fatalf("jsz account details %v: %v", accs, jsz)
	}

	// Restart: every account finds its own streams again.
	stop()
	r, _ = startServeStoppable(t, "-c", conf)
	na, nb = dialUser(t, r.addr, "a", "pa"), dialUser(t, r.addr, "b", "pb")
	if got := strings.Join(streamNames(t, na), ","); got != "BIG,ONLYA,S" {
		t.Fatalf("A's streams after restart %q", got)
	}
	if got := strings.Join(streamNames(t, nb), ","); got != "S" {
		t.Fatalf("B's streams after restart %q", got)
	}
	checkFirst(na, 1, "for A")
	checkFirst(nb, 2, "for B")
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestAccountsWithNatsCLI: the pinned CLI sees each user's account, and
// only system-account users reach the server requests.
func TestAccountsWithNatsCLI(t *testing.T) {
	r := startServe(t, "-c", accountsConf(t, filepath.Join(t.TempDir(), "store")))
	out, err := runNatsCLI(t, r.addr, "--user", "a", "--password", "pa", "account", "info")
	line := func(label, value string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(label) + `: ` + regexp.QuoteMeta(value) + `\s*$`)
	}
	if err != nil || !line("Account", "A (A)").MatchString(out) || !line("User", "a").MatchString(out) || !line("System Account", "false").MatchString(out) {
		t.Errorf("account info as a: %v\n%s", err, out)
	}
	out, _ = runNatsCLI(t, r.addr, "--user", "admin", "--password", "adm", "account", "info")
	if !line("Account", "SYS (SYS)").MatchString(out) || !line("User", "admin").MatchString(out) || !line("System Account", "true").MatchString(out) ||
		!strings.Contains(out, "JetStream not enabled for account (10039)") {
		t.Errorf("account info as admin:\n%s", out)
	}
	out, err = runNatsCLI(t, r.addr, "--user", "admin", "--password", "adm", "server", "ls", "1")
	if err != nil || !row("multi").MatchString(out) {
		t.Errorf("server ls as the system account's user: %v\n%s", err, out)
	}
	out, err = runNatsCLI(t, r.addr, "--user", "a", "--password", "pa", "server", "ls", "1")
	if err == nil || row("multi").MatchString(out) {
		t.Errorf("server ls as a user of A succeeded:\n%s", out)
	}
	// The connect events of A's clients name A, in the system account.
	ns := dialUser(t, r.addr, "admin", "adm")
	sub, err := ns.SubscribeSync("$SYS.ACCOUNT.*.CONNECT")
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Flush(); err != nil {
		t.Fatal(err)
	}
	dialUser(t, r.addr, "a", "pa")
	// Events are published in the background: the admin connection's own
	// connect event may arrive after its subscription, before A's.
	var m *nats.Msg
	for {
		if m, err = sub.NextMsg(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		if m.Subject != "$SYS.ACCOUNT.SYS.CONNECT" {
			break
		}
	}
	var ev struct {
		Client struct {
			Account string `json:"acc"`
			User    string `json:"user"`
		} `json:"client"`
	}
	if err := json.Unmarshal(m.Data, &ev); err != nil || m.Subject != "$SYS.ACCOUNT.A.CONNECT" || ev.Client.Account != "A" || ev.Client.User != "a" {
		t.Fatalf("connect event %s %s (%v)", m.Subject, m.Data, err)
	}
	// A's user cannot listen to the events: they live in the system account.
	na := dialUser(t, r.addr, "a", "pa")
	asub, err := na.SubscribeSync("$SYS.ACCOUNT.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := na.Flush(); err != nil {
		t.Fatal(err)
	}
	dialUser(t, r.addr, "b", "pb")
	for { // the system user saw B connect (after earlier connections' events)...
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject == "$SYS.ACCOUNT.B.CONNECT" {
			break
		}
	}
	if m, err := asub.NextMsg(100 * time.Millisecond); err == nil { // ...A's user saw nothing
		t.Fatalf("A's user got a system event: %s", m.Subject)
	}
}

// TestAccountsInJetStreamCluster: in a clustered JetStream, accounts keep
// their messages apart across routes, $G has the JetStream and the other
// accounts answer 10039.
func TestAccountsInJetStreamCluster(t *testing.T) {
	conf := writeConf(t, `
authorization { users: [ {user: g, password: pg} ] }
accounts {
  A: { users: [ {user: a, password: pa} ] }
  B: { users: [ {user: b, password: pb} ] }
}
`)
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var ms []*member
	for i := range ports {
		m := &member{name: fmt.Sprintf("n%d", i+1)}
		m.args = []string{"-c", conf, "-js", "-a", "127.0.0.1", "-p", "0", "-n", m.name, "-sd", t.TempDir(),
			"--cluster_name", "C", "--cluster", routes[i], "--routes", strings.Join(routes, ",")}
		m.start(t)
		ms = append(ms, m)
	}
	a1 := dialUser(t, ms[0].run.addr, "a", "pa")
	b1 := dialUser(t, ms[0].run.addr, "b", "pb")
	a2 := dialUser(t, ms[1].run.addr, "a", "pa")
	b2 := dialUser(t, ms[1].run.addr, "b", "pb")
	subA, err := a1.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	subB, err := b1.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, nc := range []*nats.Conn{a1, b1} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for A's interest to reach n2 (a request to A's responder there
	// would fail with no responders until then).
	eventually(t, "A's interest on n2", 20*time.Second, func() error {
		if _, err := a2.Request("x", []byte("probe"), time.Second); err != nil && err != nats.ErrTimeout {
			return err
		}
		return nil
	})
	if _, err := subA.NextMsg(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b2.Publish("x", []byte("from B")); err != nil {
		t.Fatal(err)
	}
	if err := a2.Publish("x", []byte("from A")); err != nil {
		t.Fatal(err)
	}
	for _, nc := range []*nats.Conn{a2, b2} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := subA.NextMsg(10 * time.Second); err != nil || string(m.Data) != "from A" {
		t.Fatalf("A on n1 got %v %v, want only A's message", m, err)
	}
	if m, err := subB.NextMsg(10 * time.Second); err != nil || string(m.Data) != "from B" {
		t.Fatalf("B on n1 got %v %v, want only B's message", m, err)
	}
	if resp := apiCall(t, a2, "$JS.API.INFO", nil); errCode(resp) != 10039 {
		t.Fatalf("A's account info in the cluster: %v", resp)
	}
	g := dialUser(t, ms[2].run.addr, "g", "pg")
	eventually(t, "$G's JetStream", 30*time.Second, func() error {
		resp := apiCall(t, g, "$JS.API.INFO", nil)
		if errCode(resp) != 0 {
			return fmt.Errorf("account info: %v", resp)
		}
		return nil
	})
}
