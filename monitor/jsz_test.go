package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/server"
)

// keysOf returns the keys of the JSON object at path in raw (strings index
// objects, ints arrays), in the order they were written.
func keysOf(t *testing.T, raw []byte, path ...any) []string {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil || m[p] == nil {
				t.Fatalf("no %q in %s (%v)", p, raw, err)
			}
			raw = m[p]
		case int:
			var a []json.RawMessage
			if err := json.Unmarshal(raw, &a); err != nil || len(a) <= p {
				t.Fatalf("no [%d] in %s (%v)", p, raw, err)
			}
			raw = a[p]
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// jsFixture is a server with streams ORD (file; 3 messages, consumers C2
// and C1) and MEM (memory; 1 message, no consumer).
func jsFixture(t *testing.T) *fixture {
	t.Helper()
	f := start(t, true)
	js, err := njs.New(f.connect(t, "js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ord, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "MEM", Subjects: []string{"mem.>"}, Storage: njs.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"ord.1", "ord.2", "ord.3", "mem.1"} {
		if _, err := js.Publish(ctx, subj, []byte("abc")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"C2", "C1"} {
		if _, err := ord.CreateConsumer(ctx, njs.ConsumerConfig{Durable: c, FilterSubject: "ord.>"}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestJszAccountDetails: /jsz with accounts, streams, consumers and config
// lists the global account's streams and consumers in nats-server's shape
// (field names and order), with the configs only when asked.
func TestJszAccountDetails(t *testing.T) {
	f := jsFixture(t)
	raw := f.raw(t, "/jsz?accounts=true&streams=true&consumers=true&config=true", http.StatusOK)
	want := []string{"memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets", "api",
		"server_id", "now", "config", "streams", "consumers", "messages", "bytes", "account_details", "total"}
	if got := keysOf(t, raw); !reflect.DeepEqual(got, want) {
		t.Errorf("jsz keys\n got %v\nwant %v", got, want)
	}
	want = []string{"name", "id", "memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets", "api", "stream_detail"}
	if got := keysOf(t, raw, "account_details", 0); !reflect.DeepEqual(got, want) {
		t.Errorf("account detail keys\n got %v\nwant %v", got, want)
	}
	want = []string{"name", "created", "cluster", "config", "state", "consumer_detail"}
	if got := keysOf(t, raw, "account_details", 0, "stream_detail", 1); !reflect.DeepEqual(got, want) {
		t.Errorf("stream detail keys\n got %v\nwant %v", got, want)
	}

	var j map[string]any
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	if j["total"] != 1.0 || j["streams"] != 2.0 || j["consumers"] != 2.0 || j["messages"] != 4.0 {
		t.Errorf("jsz totals %v", j)
	}
	accs := j["account_details"].([]any)
	if len(accs) != 1 {
		t.Fatalf("account_details %v", accs)
	}
	acc := accs[0].(map[string]any)
	noLimit := float64(math.MaxUint64)
	if acc["name"] != GlobalAccount || acc["id"] != GlobalAccount || acc["storage"].(float64) <= 0 || acc["memory"].(float64) <= 0 ||
		acc["storage"] != j["storage"] || acc["memory"] != j["memory"] || acc["reserved_memory"] != noLimit || acc["reserved_storage"] != noLimit {
		t.Errorf("account detail %v", acc)
	}
	if api := acc["api"].(map[string]any); api["level"] != 0.0 || api["total"].(float64) < 4 {
		t.Errorf("account api %v", api)
	}
	streams := acc["stream_detail"].([]any)
	if len(streams) != 2 || streams[0].(map[string]any)["name"] != "MEM" {
		t.Fatalf("streams not sorted by name: %v", streams)
	}
	ord := streams[1].(map[string]any)
	if ord["name"] != "ORD" || ord["cluster"].(map[string]any)["leader"] != "mon-test" {
		t.Errorf("ORD %v", ord)
	}
	if created, err := time.Parse(time.RFC3339Nano, ord["created"].(string)); err != nil || time.Since(created) > time.Minute {
		t.Errorf("ORD created %v (%v)", ord["created"], err)
	}
	if cfg := ord["config"].(map[string]any); cfg["name"] != "ORD" || cfg["storage"] != "file" || cfg["subjects"].([]any)[0] != "ord.>" {
		t.Errorf("ORD config %v", cfg)
	}
	if st := ord["state"].(map[string]any); st["messages"] != 3.0 || st["last_seq"] != 3.0 || st["consumer_count"] != 2.0 {
		t.Errorf("ORD state %v", st)
	}
	cons := ord["consumer_detail"].([]any)
	if len(cons) != 2 {
		t.Fatalf("ORD consumers %v", cons)
	}
	c1 := cons[0].(map[string]any)
	if c1["name"] != "C1" || c1["stream_name"] != "ORD" || c1["num_pending"] != 3.0 || c1["config"].(map[string]any)["durable_name"] != "C1" {
		t.Errorf("consumer C1 %v", c1)
	}
	if _, ok := streams[0].(map[string]any)["consumer_detail"]; ok {
		t.Errorf("MEM has no consumers but lists some: %v", streams[0])
	}

	// Without config=true, neither streams nor consumers show theirs.
	j = f.get(t, "/jsz?consumers=true", http.StatusOK)
	ord = j["account_details"].([]any)[0].(map[string]any)["stream_detail"].([]any)[1].(map[string]any)
	if _, ok := ord["config"]; ok {
		t.Errorf("stream config without config=true: %v", ord)
	}
	if c := ord["consumer_detail"].([]any)[0].(map[string]any); c["config"] != nil || c["name"] != "C1" {
		t.Errorf("consumer config without config=true: %v", c)
	}
	// streams=true implies accounts=true, and lists no consumers.
	j = f.get(t, "/jsz?streams=1", http.StatusOK)
	ord = j["account_details"].([]any)[0].(map[string]any)["stream_detail"].([]any)[1].(map[string]any)
	if _, ok := ord["consumer_detail"]; ok || ord["state"].(map[string]any)["consumer_count"] != 2.0 {
		t.Errorf("streams only: %v", ord)
	}
}

// TestJszFilters: acc=, offset, limit, leader-only and raft, and bad
// parameters.
func TestJszFilters(t *testing.T) {
	f := jsFixture(t)
	j := f.get(t, "/jsz", http.StatusOK)
	if _, ok := j["account_details"]; ok || j["total"] != 1.0 {
		t.Errorf("plain jsz has account details: %v", j)
	}
	j = f.get(t, "/jsz?acc=$G", http.StatusOK)
	acc := j["account_details"].([]any)[0].(map[string]any)
	if _, ok := acc["stream_detail"]; ok || acc["name"] != GlobalAccount {
		t.Errorf("acc=$G without streams: %v", acc)
	}
	j = f.get(t, "/jsz?acc=$G&consumers=true", http.StatusOK)
	if n := len(j["account_details"].([]any)[0].(map[string]any)["stream_detail"].([]any)); n != 2 {
		t.Errorf("acc=$G&consumers: %d streams", n)
	}
	if j = f.get(t, "/jsz?acc=NOPE", http.StatusOK); j["account_details"] != nil {
		t.Errorf("an unknown account has details: %v", j)
	}
	if j = f.get(t, "/jsz?accounts=true&offset=1", http.StatusOK); j["account_details"] != nil || j["total"] != 1.0 {
		t.Errorf("offset past the accounts: %v", j)
	}
	if j = f.get(t, "/jsz?accounts=true&limit=1", http.StatusOK); len(j["account_details"].([]any)) != 1 {
		t.Errorf("limit=1: %v", j)
	}
	// A single server is its own meta leader and leads every stream.
	j = f.get(t, "/jsz?leader-only=true&raft=true", http.StatusOK)
	if j["streams_leader"] != 2.0 || j["consumers_leader"] != 2.0 {
		t.Errorf("leader-only, raft: %v", j)
	}
	if _, ok := f.get(t, "/jsz", http.StatusOK)["streams_leader"]; ok {
		t.Error("streams_leader without raft=true")
	}
	for _, q := range []string{"streams=maybe", "offset=x", "limit=-2", "leader-only=2"} {
		f.raw(t, "/jsz?"+q, http.StatusBadRequest)
	}

	// Without JetStream, a leader-only question has no leader to answer.
	g := start(t, false)
	if body := g.raw(t, "/jsz?leader-only=true", http.StatusBadRequest); !strings.Contains(string(body), "not leader") {
		t.Errorf("leader-only without JetStream: %s", body)
	}
	if j := g.get(t, "/jsz?accounts=true", http.StatusOK); j["disabled"] != true || j["account_details"] != nil {
		t.Errorf("jsz without JetStream: %v", j)
	}
}

// TestJszAccountRequest: JszAccount answers one account's detail, and
// errors for an account the server does not have.
func TestJszAccountRequest(t *testing.T) {
	f := jsFixture(t)
	d, err := f.mon.JszAccount(JszOptions{Account: GlobalAccount, Streams: true})
	if err != nil || d.Name != GlobalAccount || len(d.Streams) != 2 || d.Streams[1].Consumer != nil {
		t.Fatalf("JszAccount: %+v, %v", d, err)
	}
	if _, err := f.mon.JszAccount(JszOptions{Account: "NOPE"}); err == nil || err.Error() != `account "NOPE" not found` {
		t.Errorf("unknown account: %v", err)
	}
	g := start(t, false)
	if _, err := g.mon.JszAccount(JszOptions{Account: GlobalAccount}); err == nil || err.Error() != "jetstream not enabled" {
		t.Errorf("without JetStream: %v", err)
	}
}

// threeAccountsJS is a JetStream serving three accounts (as cmd/jetwal's
// view of several accounts' JetStreams), none with streams.
type threeAccountsJS struct{}

func (threeAccountsJS) Stats() jetstream.Stats { return jetstream.Stats{APILevel: 1} }

func (threeAccountsJS) AccountDetails(jetstream.DetailOptions) []jetstream.AccountDetail {
	return []jetstream.AccountDetail{{Account: "A"}, {Account: "B"}, {Account: GlobalAccount}}
}

// TestJszCountsAccounts: /jsz and /varz count the accounts with JetStream
// (nats-server's "accounts"), not always one.
func TestJszCountsAccounts(t *testing.T) {
	srv, err := server.New(server.Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	mon, err := Start(Options{Host: "127.0.0.1", Server: srv, JetStream: threeAccountsJS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Shutdown(context.Background())
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get("http://" + mon.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var jsz struct {
		Accounts int `json:"accounts"`
		Total    int `json:"total"`
	}
	get("/jsz", &jsz)
	if jsz.Accounts != 3 || jsz.Total != 3 {
		t.Errorf("/jsz accounts %d total %d, want 3 and 3", jsz.Accounts, jsz.Total)
	}
	var varz struct {
		JetStream struct {
			Stats struct {
				Accounts int `json:"accounts"`
			} `json:"stats"`
		} `json:"jetstream"`
	}
	get("/varz", &varz)
	if varz.JetStream.Stats.Accounts != 3 {
		t.Errorf("/varz jetstream.stats.accounts %d, want 3", varz.JetStream.Stats.Accounts)
	}
}
