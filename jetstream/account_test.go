package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/server/auth"
)

// TestJetStreamPerAccount: two JetStreams on one store, for accounts A and
// B of one server, share the store lock; each serves only its account's
// clients, and the lock goes with the last of them.
func TestJetStreamPerAccount(t *testing.T) {
	a, err := auth.New(auth.Options{Users: []auth.User{
		{Username: "a", Password: "pw", Account: "A"},
		{Username: "b", Password: "pw", Account: "B"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Host: "127.0.0.1", Auth: a, Accounts: []string{"A", "B"}, JetStream: true, APILevel: api.Level})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	dir := t.TempDir()
	lock, err := LockStore(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	jsA, err := New(srv.Account("A"), Config{StoreDir: dir, Account: "A", StoreLock: lock, MaxStreams: 1})
	if err != nil {
		t.Fatal(err)
	}
	jsB, err := New(srv.Account("B"), Config{StoreDir: dir, Account: "B", StoreLock: lock})
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(srv, Config{StoreDir: dir}); !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("a JetStream with its own lock on the shared store: %v, want ErrStoreLocked", err)
	}
	if _, err := New(srv, Config{StoreDir: t.TempDir(), StoreLock: lock}); err == nil {
		t.Fatal("a released shared lock was used again")
	}
	nca, err := nats.Connect(srv.ClientURL(), nats.UserInfo("a", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer nca.Close()
	ncb, err := nats.Connect(srv.ClientURL(), nats.UserInfo("b", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer ncb.Close()
	request(t, nca, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
	if got := request(t, nca, "$JS.API.STREAM.CREATE.T", `{"name":"T","subjects":["t.>"]}`); !errorCodeIs(got, api.ErrMaximumStreams) {
		t.Fatalf("A's second stream: %s", got.Data)
	}
	if jsA.lookup("S") == nil || jsB.lookup("S") != nil {
		t.Fatal("A's stream is not A's alone")
	}
	if got := request(t, ncb, "$JS.API.STREAM.INFO.S", ""); !errorCodeIs(got, api.ErrStreamNotFound) {
		t.Fatalf("B sees A's stream: %s", got.Data)
	}
	jsA.Close()
	if _, err := New(srv, Config{StoreDir: dir}); !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("store unlocked while B's JetStream runs: %v", err)
	}
	jsB.Close()
	js, err := New(srv, Config{StoreDir: dir})
	if err != nil {
		t.Fatalf("after the last shared JetStream closed: %v", err)
	}
	js.Close()
}

// errorCodeIs reports whether an API reply carries error code code.
func errorCodeIs(m *nats.Msg, code api.ErrCode) bool {
	var r api.Response
	return json.Unmarshal(m.Data, &r) == nil && r.Error != nil && r.Error.ErrCode == code
}

// TestAccountStorageLimit: once the account's file streams hold its
// max_file, publishes are refused with 10002; a max_bytes reservation over
// it is refused with 10047; $JS.API.INFO shows the limit.
func TestAccountStorageLimit(t *testing.T) {
	ts := startServer(t, Config{AccountMaxStore: 1000})
	nc := ts.connect()
	if got := request(t, nc, "$JS.API.STREAM.CREATE.BIG", `{"name":"BIG","subjects":["big"],"max_bytes":2000}`); !errorCodeIs(got, api.ErrStorageResourcesExceeded) {
		t.Fatalf("reserving 2000 of 1000 bytes: %s", got.Data)
	}
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s"]}`)
	var info api.AccountInfoResponse
	requestJSON(t, nc, "$JS.API.INFO", "", &info)
	if info.AccountStats == nil || info.Limits.MaxStore != 1000 || info.Limits.MaxMemory != -1 {
		t.Fatalf("account info limits %+v", info.AccountStats)
	}
	payload := make([]byte, 600)
	if got := request(t, nc, "s", string(payload)); errorCodeIs(got, api.ErrAccountResourcesExceeded) || !strings.Contains(string(got.Data), `"seq":1`) {
		t.Fatalf("first publish: %s", got.Data)
	}
	// The usage is measured every second: within a few, a publish is refused.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := request(t, nc, "s", string(payload))
		if errorCodeIs(got, api.ErrAccountResourcesExceeded) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("publishes still accepted over the account's 1000 bytes: %s", got.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAccountMaxAckPending: as nats-server's account max_ack_pending, a
// consumer asking for more is refused with 10121 naming the limit (on
// create and update, and when the stream's consumer_limits default is the
// larger), a consumer with acks that names none gets the limit when it is
// below nats-server's default of 1000, -1 (none) passes as in nats-server,
// and $JS.API.INFO shows the limit.
func TestAccountMaxAckPending(t *testing.T) {
	ts := startServer(t, Config{AccountMaxAckPending: 100})
	nc := ts.connect()
	var info api.AccountInfoResponse
	requestJSON(t, nc, "$JS.API.INFO", "", &info)
	if info.AccountStats == nil || info.Limits.MaxAckPending != 100 {
		t.Fatalf("account info limits %+v", info.AccountStats)
	}
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s"]}`)
	request(t, nc, "$JS.API.STREAM.CREATE.L", `{"name":"L","subjects":["l"],"consumer_limits":{"max_ack_pending":50}}`)
	request(t, nc, "$JS.API.STREAM.CREATE.H", `{"name":"H","subjects":["h"],"consumer_limits":{"max_ack_pending":500}}`)

	create := func(stream, name, extra string) *nats.Msg {
		t.Helper()
		return request(t, nc, "$JS.API.CONSUMER.CREATE."+stream+"."+name,
			`{"stream_name":"`+stream+`","config":{"durable_name":"`+name+`"`+extra+`}}`)
	}
	created := func(stream, name, extra string, want int) {
		t.Helper()
		var r api.ConsumerInfoResponse
		m := create(stream, name, extra)
		if err := json.Unmarshal(m.Data, &r); err != nil || r.Error != nil || r.ConsumerInfo == nil || r.Config.MaxAckPending != want {
			t.Errorf("%s.%s %s: %s, want max_ack_pending %d", stream, name, extra, m.Data, want)
		}
	}
	refused := func(stream, name, extra string) {
		t.Helper()
		m := create(stream, name, extra)
		e := apiErrorOf(t, m.Data)
		if e == nil || e.Code != 400 || e.ErrCode != api.ErrConsumerMaxPendingAckExcess || e.Description != "consumer max ack pending exceeds system limit of 100" {
			t.Errorf("%s.%s %s: %s, want 10121 naming 100", stream, name, extra, m.Data)
		}
	}
	created("S", "DEF", `,"ack_policy":"explicit"`, 100)
	created("S", "ALL", `,"ack_policy":"all"`, 100)
	created("S", "EQ", `,"ack_policy":"explicit","max_ack_pending":100`, 100)
	created("S", "LOW", `,"ack_policy":"explicit","max_ack_pending":7`, 7)
	created("S", "NONE", `,"ack_policy":"none"`, 0)
	created("S", "UNL", `,"ack_policy":"explicit","max_ack_pending":-1`, -1)
	created("L", "STREAMLIM", `,"ack_policy":"explicit"`, 50)
	refused("S", "BIG", `,"ack_policy":"explicit","max_ack_pending":101`)
	refused("S", "DEF", `,"ack_policy":"explicit","max_ack_pending":500`) // an update
	refused("H", "STREAMDEF", `,"ack_policy":"explicit"`)                 // the stream's 500 as the default
	if m := request(t, nc, "$JS.API.CONSUMER.INFO.S.BIG", ""); !errorCodeIs(m, api.ErrConsumerNotFound) {
		t.Errorf("refused consumer exists: %s", m.Data)
	}
	var ci api.ConsumerInfoResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.INFO.S.DEF", "", &ci)
	if ci.ConsumerInfo == nil || ci.Config.MaxAckPending != 100 {
		t.Errorf("DEF after the refused update: %+v", ci.ConsumerInfo)
	}

	// A limit above nats-server's default leaves the default at 1000.
	ts2 := startServer(t, Config{AccountMaxAckPending: 2000})
	nc2 := ts2.connect()
	request(t, nc2, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s"]}`)
	requestJSON(t, nc2, "$JS.API.CONSUMER.CREATE.S.D", `{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}`, &ci)
	if ci.Error != nil || ci.ConsumerInfo == nil || ci.Config.MaxAckPending != 1000 {
		t.Errorf("default under a limit of 2000: %+v %+v", ci.Error, ci.ConsumerInfo)
	}
}
