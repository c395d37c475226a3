package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream"
	jsapi "github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
	"github.com/jetwal/jetwal/wal"
)

type fixture struct {
	srv *server.Server
	mon *Monitor
	url string // nats
}

func start(t *testing.T, withJS bool) *fixture {
	t.Helper()
	return startWith(t, withJS, nil)
}

// startWith starts a server (with JetStream when withJS) and its monitor
// reading the accounts from accs (nil = the default, $G only).
func startWith(t *testing.T, withJS bool, accs AccountSource) *fixture {
	t.Helper()
	a, err := auth.New(auth.Options{Users: []auth.User{{Username: "u", Password: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{Host: "127.0.0.1", Auth: a, ServerName: "mon-test", MaxConnections: 77}
	if withJS {
		opts.JetStream, opts.APILevel = true, 1
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mo := Options{Host: "127.0.0.1", Server: srv, Accounts: accs}
	if withJS {
		js, err := jetstream.New(srv, jetstream.Config{StoreDir: t.TempDir(), Sync: wal.SyncNever, MaxStore: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		mo.JetStream = js
		srv.OnShutdown(func() { _ = js.Close() })
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	mon, err := Start(mo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := mon.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return &fixture{srv: srv, mon: mon, url: srv.ClientURL()}
}

func (f *fixture) connect(t *testing.T, name string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(f.url, nats.UserInfo("u", "p"), nats.Name(name), nats.NoReconnect())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// get fetches path and decodes it into a generic map (so the test sees
// the JSON field names, not our struct tags).
func (f *fixture) get(t *testing.T, path string, wantStatus int) map[string]any {
	t.Helper()
	body := f.raw(t, path, wantStatus)
	if wantStatus != http.StatusOK {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return m
}

// raw fetches path, checks its status and returns the body.
func (f *fixture) raw(t *testing.T, path string, wantStatus int) []byte {
	t.Helper()
	resp, err := http.Get("http://" + f.mon.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return body
}

func TestVarzAndConnz(t *testing.T) {
	f := start(t, false)
	sc := f.connect(t, "sub-client")
	sub, _ := sc.SubscribeSync("m.>")
	sc.Flush()
	pc := f.connect(t, "pub-client")
	for range 5 {
		pc.Publish("m.x", []byte("1234"))
	}
	pc.Flush()
	for range 5 {
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}

	v := f.get(t, "/varz", 200)
	want := map[string]any{
		"server_id": f.srv.ID(), "server_name": "mon-test", "version": f.srv.Version(), "proto": 1.0,
		"host": "127.0.0.1", "auth_required": true, "max_connections": 77.0, "connections": 2.0,
		"total_connections": 2.0, "in_msgs": 5.0, "in_bytes": 20.0, "out_msgs": 5.0, "out_bytes": 20.0,
		"subscriptions": 1.0, "max_payload": float64(server.DefaultMaxPayload), "ping_max": 2.0,
		"ping_interval": float64(server.DefaultPingInterval), "auth_timeout": 2.0, "http_host": "127.0.0.1",
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("varz %s = %v, want %v", k, v[k], w)
		}
	}
	for _, k := range []string{"start", "now", "uptime", "cores", "gomaxprocs", "cpu", "go", "port", "http_port", "mem", "http_req_stats"} {
		if _, ok := v[k]; !ok {
			t.Errorf("varz lacks %s", k)
		}
	}
	for _, k := range []string{"tls_required", "jetstream", "cluster"} {
		if _, ok := v[k]; ok {
			t.Errorf("varz has %s, which jetwal does not have", k)
		}
	}

	c := f.get(t, "/connz?auth=true", 200)
	if c["num_connections"] != 2.0 || c["total"] != 2.0 || c["limit"] != 1024.0 {
		t.Fatalf("connz %v", c)
	}
	conns := c["connections"].([]any)
	first := conns[0].(map[string]any)
	if first["name"] != "sub-client" || first["out_msgs"] != 5.0 || first["out_bytes"] != 20.0 || first["subscriptions"] != 1.0 ||
		first["authorized_user"] != "u" || first["lang"] != "go" || first["kind"] != "Client" {
		t.Errorf("connz[0] %v", first)
	}
	// Sorted by messages sent by the client, one per page.
	c = f.get(t, "/connz?sort=msgs_from&limit=1", 200)
	conns = c["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["name"] != "pub-client" || conns[0].(map[string]any)["in_msgs"] != 5.0 {
		t.Errorf("sorted connz %v", c)
	}
	if _, ok := conns[0].(map[string]any)["authorized_user"]; ok {
		t.Error("authorized_user shown without auth=true")
	}
	c = f.get(t, "/connz?offset=5", 200)
	if len(c["connections"].([]any)) != 0 || c["total"] != 2.0 {
		t.Errorf("offset past the end: %v", c)
	}
	f.get(t, "/connz?sort=bogus", 400)
	// As nats-server's: a limit <= 0 is the default, a negative offset 0,
	// a cid that is not an unsigned integer a 400 with its words, and a cid
	// lists that connection alone with limit 1.
	for _, q := range []string{"limit=-1", "limit=0", "limit=-1&offset=-3"} {
		c = f.get(t, "/connz?"+q, 200)
		if c["limit"] != float64(DefaultConnListSize) || c["offset"] != 0.0 || len(c["connections"].([]any)) != 2 {
			t.Errorf("/connz?%s: %v", q, c)
		}
	}
	body := f.raw(t, "/connz?cid=-5", 400)
	if want := `Error decoding uint64 for 'cid': strconv.ParseUint: parsing "-5": invalid syntax`; strings.TrimSpace(string(body)) != want {
		t.Errorf("/connz?cid=-5: %q, want %q", body, want)
	}
	f.raw(t, "/connz?limit=x", 400)
	all := f.get(t, "/connz", 200)["connections"].([]any)
	second := all[1].(map[string]any)["cid"].(float64)
	c = f.get(t, fmt.Sprintf("/connz?cid=%d", int(second)), 200)
	if conns := c["connections"].([]any); c["limit"] != 1.0 || len(conns) != 1 || conns[0].(map[string]any)["cid"] != second || c["total"] != 2.0 {
		t.Errorf("/connz?cid=%d: %v", int(second), c)
	}
	c = f.get(t, "/connz?cid=999999", 200)
	if len(c["connections"].([]any)) != 0 {
		t.Errorf("/connz of an unknown cid: %v", c)
	}

	s := f.get(t, "/subsz", 200)
	if s["num_subscriptions"] != 1.0 {
		t.Errorf("subsz %v", s)
	}
	h := f.get(t, "/healthz", 200)
	if h["status"] != "ok" || len(h) != 1 {
		t.Errorf("healthz %v", h)
	}
	f.get(t, "/healthz?js-enabled-only=maybe", 400)
	j := f.get(t, "/jsz", 200)
	if j["disabled"] != true {
		t.Errorf("jsz without JetStream: %v", j)
	}
	v = f.get(t, "/varz", 200)
	stats := v["http_req_stats"].(map[string]any)
	if stats["/varz"] != 2.0 || stats["/connz"] != 12.0 {
		t.Errorf("http_req_stats %v", stats)
	}
}

func TestJszAndHealthzWithJetStream(t *testing.T) {
	f := start(t, true)
	nc := f.connect(t, "js")
	js, _ := njs.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, njs.StreamConfig{Name: "S", Subjects: []string{"s.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "s.1", []byte("abc")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateConsumer(ctx, njs.ConsumerConfig{Durable: "C"}); err != nil {
		t.Fatal(err)
	}
	j := f.get(t, "/jsz", 200)
	if j["streams"] != 1.0 || j["consumers"] != 1.0 || j["messages"] != 3.0 || j["bytes"].(float64) <= 0 ||
		j["storage"] != j["bytes"] || j["memory"] != 0.0 {
		t.Errorf("jsz %v", j)
	}
	cfg := j["config"].(map[string]any)
	if cfg["max_storage"] != float64(1<<30) || cfg["max_memory"] != -1.0 || !strings.HasPrefix(cfg["store_dir"].(string), "/") {
		t.Errorf("jsz config %v", cfg)
	}
	if api := j["api"].(map[string]any); api["total"].(float64) < 2 || api["level"] != float64(jsapi.Level) {
		t.Errorf("jsz api %v", api)
	}
	v := f.get(t, "/varz", 200)
	jv, ok := v["jetstream"].(map[string]any)
	if !ok || jv["stats"].(map[string]any)["storage"] != j["storage"] {
		t.Errorf("varz jetstream %v", v["jetstream"])
	}
	if h := f.get(t, "/healthz?js-enabled-only=true", 200); h["status"] != "ok" {
		t.Errorf("healthz %v", h)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Options{}); err == nil {
		t.Error("no server accepted")
	}
	srv, _ := server.New(server.Options{})
	if _, err := Start(Options{Server: srv, Host: "256.0.0.1"}); err == nil {
		t.Error("bad host accepted")
	}
}

// failedJS is a JetStream whose start left streams unloaded.
type failedJS struct{}

func (failedJS) Stats() jetstream.Stats {
	return jetstream.Stats{LoadErrors: []string{"jetstream: stream /s/streams/A: open segment: permission denied"}}
}

func (failedJS) AccountDetails(jetstream.DetailOptions) []jetstream.AccountDetail {
	return []jetstream.AccountDetail{{Account: GlobalAccount, MaxMemory: -1, MaxStore: -1}}
}

// TestHealthzUnhealthyWhenStreamsFailedToLoad: a server whose streams did
// not all load never reports healthy.
func TestHealthzUnhealthyWhenStreamsFailedToLoad(t *testing.T) {
	srv, err := server.New(server.Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	mon, err := Start(Options{Host: "127.0.0.1", Server: srv, JetStream: failedJS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Shutdown(context.Background())
	resp, err := http.Get("http://" + mon.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h HealthStatus
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || h.Status != "unavailable" || !strings.Contains(h.Error, "permission denied") {
		t.Fatalf("healthz answered %d %+v, want 503 unavailable naming the failure", resp.StatusCode, h)
	}
}

// TestRoutez: /routez lists a server's routes in nats-server's field
// names, with the remote interest on ?subs=1; a server without routes
// shows none.
func TestRoutez(t *testing.T) {
	f := start(t, false)
	if m := f.get(t, "/routez", http.StatusOK); m["num_routes"] != float64(0) || len(m["routes"].([]any)) != 0 {
		t.Fatalf("standalone /routez: %v", m)
	}
	mk := func(name string, routes ...string) *server.Server {
		co := &server.ClusterOptions{Name: "C", Host: "127.0.0.1", ReconnectDelay: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
		for _, r := range routes {
			u, err := url.Parse(r)
			if err != nil {
				t.Fatal(err)
			}
			co.Routes = append(co.Routes, u)
		}
		s, err := server.New(server.Options{Host: "127.0.0.1", ServerName: name, Cluster: co})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		return s
	}
	a := mk("a")
	b := mk("b", "nats://"+a.ClusterAddr().String())
	mon, err := Start(Options{Host: "127.0.0.1", Server: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Shutdown(context.Background()) })
	nc, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.SubscribeSync("watched.subject"); err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	g := &fixture{mon: mon}
	var route map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := g.get(t, "/routez?subs=1", http.StatusOK)
		if rs, _ := m["routes"].([]any); m["num_routes"] == float64(1) && len(rs) == 1 {
			route = rs[0].(map[string]any)
			if l, _ := route["subscriptions_list"].([]any); len(l) == 1 && l[0] == "watched.subject" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/routez never showed b's route with its subscription: %v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if route["remote_name"] != "b" || route["remote_id"] != b.ID() || route["did_solicit"] != false || route["subscriptions"] != float64(1) {
		t.Fatalf("route %v", route)
	}
	if m := g.get(t, "/routez", http.StatusOK); m["routes"].([]any)[0].(map[string]any)["subscriptions_list"] != nil {
		t.Fatalf("subscriptions listed without ?subs: %v", m)
	}
}
