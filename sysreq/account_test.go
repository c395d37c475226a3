package sysreq

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream"
	"github.com/jetwal/jetwal/monitor"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// startJSNode starts a server named name with JetStream in $G, a stream
// ORD of two messages with the durable consumer C1, and its request
// service; the connection returned is the $G client "probe" that made
// them.
func startJSNode(t *testing.T, name string) (*server.Server, *nats.Conn) {
	t.Helper()
	s, err := server.New(withSystemAccount(t, server.Options{ServerName: name, Host: "127.0.0.1", JetStream: true, APILevel: 1}))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(s, jetstream.Config{StoreDir: t.TempDir(), Sync: wal.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown %s: %v", name, err)
		}
	})
	startService(t, s, js, Options{JetStream: true, StatszInterval: time.Second})
	nc := connect(t, s, nats.Name("probe"))
	jsc, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := jsc.CreateStream(ctx, njs.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := jsc.Publish(ctx, "ord.1", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateConsumer(ctx, njs.ConsumerConfig{Durable: "C1"}); err != nil {
		t.Fatal(err)
	}
	return s, nc
}

// TestJszRequestOptions: the options of a JSZ request body are applied as
// /jsz's query parameters are.
func TestJszRequestOptions(t *testing.T) {
	s, _ := startJSNode(t, "js1")
	nc := connectSys(t, s)
	jsz := func(subj, body string) envelope[monitor.JSInfo] {
		var j envelope[monitor.JSInfo] // fresh: decoding merges into pointers
		request(t, nc, subj, body, &j)
		return j
	}
	j := jsz("$SYS.REQ.SERVER.PING.JSZ", `{"accounts":true,"streams":true,"consumer":true,"config":true}`)
	if j.Error != nil || j.Data == nil || len(j.Data.AccountDetails) != 1 {
		t.Fatalf("JSZ %+v", j)
	}
	acc := j.Data.AccountDetails[0]
	if acc.Name != "$G" || len(acc.Streams) != 1 {
		t.Fatalf("account detail %+v", acc)
	}
	sd := acc.Streams[0]
	if sd.Name != "ORD" || sd.Config == nil || sd.State.Msgs != 2 || len(sd.Consumer) != 1 || sd.Consumer[0].Name != "C1" ||
		sd.Consumer[0].Config == nil || sd.Cluster == nil || sd.Cluster.Leader != "js1" {
		t.Errorf("stream detail %+v", sd)
	}
	// The same by id, without config, paged past the only account.
	j = jsz("$SYS.REQ.SERVER."+s.ID()+".JSZ", `{"streams":true}`)
	if sd := j.Data.AccountDetails[0].Streams[0]; sd.Config != nil || sd.Consumer != nil {
		t.Errorf("streams only %+v", sd)
	}
	j = jsz("$SYS.REQ.SERVER.PING.JSZ", `{"accounts":true,"offset":1}`)
	if j.Data.AccountDetails != nil || j.Data.Total != 1 {
		t.Errorf("offset 1 %+v", j.Data)
	}
	// A single server is the meta leader: it answers leader_only.
	j = jsz("$SYS.REQ.SERVER.PING.JSZ", `{"leader_only":true,"raft":true}`)
	if j.Data == nil || j.Data.StreamsLeader != 1 || j.Data.ConsumersLeader != 1 {
		t.Errorf("leader_only %+v", j.Data)
	}
	j = jsz("$SYS.REQ.SERVER.PING.JSZ", `{"streams":"yes"}`)
	if j.Error == nil || j.Error.Code != http.StatusBadRequest {
		t.Errorf("bad options %+v", j)
	}
	var h envelope[monitor.HealthStatus]
	request(t, nc, "$SYS.REQ.SERVER.PING.HEALTHZ", `{"account":"$G","stream":"NOPE"}`, &h)
	// (HealthStatus has no pointers: decoding again overwrites it.)
	if h.Data == nil || h.Data.StatusCode != http.StatusNotFound || h.Data.Status != "unavailable" {
		t.Errorf("HEALTHZ of a missing stream %+v", h.Data)
	}
	request(t, nc, "$SYS.REQ.SERVER.PING.HEALTHZ", `{"account":"$G","stream":"ORD","consumer":"C1","details":true}`, &h)
	if h.Data == nil || h.Data.StatusCode != http.StatusOK || h.Data.Status != "ok" {
		t.Errorf("HEALTHZ of C1 %+v", h.Data)
	}
}

// TestJszLeaderOnlyWithoutJetStream: a server without JetStream is no
// leader and stays silent.
func TestJszLeaderOnlyWithoutJetStream(t *testing.T) {
	s := startNode(t, "nojs", nil)
	nc := connectSys(t, s)
	if m, err := nc.Request("$SYS.REQ.SERVER.PING.JSZ", []byte(`{"leader_only":true}`), 500*time.Millisecond); err == nil {
		t.Errorf("answered leader_only without JetStream: %s", m.Data)
	}
}

// TestAccountRequests: $SYS.REQ.ACCOUNT.<account>.<kind> and the account
// pings, and ACCOUNTZ, asked in the system account, and the account pings
// imported into $G.
func TestAccountRequests(t *testing.T) {
	s, probe := startJSNode(t, "acc1")
	nc := connectSys(t, s)
	var j envelope[monitor.AccountDetail]
	request(t, nc, "$SYS.REQ.ACCOUNT.$G.JSZ", `{"streams":true}`, &j)
	if j.Error != nil || j.Data == nil || j.Data.Name != "$G" || len(j.Data.Streams) != 1 || j.Data.Streams[0].Name != "ORD" {
		t.Errorf("account JSZ %+v", j)
	}
	j = envelope[monitor.AccountDetail]{}
	request(t, nc, "$SYS.REQ.ACCOUNT.NOPE.JSZ", "", &j)
	if j.Error == nil || j.Error.Code != http.StatusInternalServerError || j.Error.Description != `account "NOPE" not found` {
		t.Errorf("JSZ of an unknown account %+v", j.Error)
	}
	var info envelope[monitor.AccountInfo]
	request(t, nc, "$SYS.REQ.ACCOUNT.$G.INFO", "", &info)
	if info.Data == nil || info.Data.AccountName != "$G" || !info.Data.JetStream || info.Data.ClientCnt != 1 {
		t.Errorf("account INFO %+v", info.Data)
	}
	var c envelope[monitor.Connz]
	request(t, nc, "$SYS.REQ.ACCOUNT.$G.CONNZ", "", &c)
	if c.Data == nil || c.Data.NumConns != 1 || c.Data.Conns[0].Name != "probe" {
		t.Errorf("account CONNZ %+v", c.Data)
	}
	// The account ping is about the asker's own account: SYS for the
	// system user, $G (imported) for the probe.
	for _, tc := range []struct {
		nc   *nats.Conn
		acct string
	}{{nc, "SYS"}, {probe, "$G"}} {
		c = envelope[monitor.Connz]{}
		request(t, tc.nc, "$SYS.REQ.ACCOUNT.PING.CONNZ", "", &c)
		if c.Data == nil || c.Data.NumConns != 1 || c.Data.Conns[0].Account != tc.acct {
			t.Errorf("account ping CONNZ from %s %+v", tc.acct, c.Data)
		}
	}
	c = envelope[monitor.Connz]{}
	request(t, nc, "$SYS.REQ.ACCOUNT.NOPE.CONNZ", "", &c)
	if c.Data == nil || c.Data.NumConns != 0 {
		t.Errorf("CONNZ of an unknown account %+v", c.Data)
	}
	var st envelope[monitor.AccountStatz]
	for _, tc := range []struct {
		nc    *nats.Conn
		subj  string
		accts int
	}{
		{nc, "$SYS.REQ.ACCOUNT.PING.STATZ", 2}, // every account with connections
		{nc, "$SYS.REQ.ACCOUNT.$G.STATZ", 1},
		{probe, "$SYS.REQ.ACCOUNT.PING.STATZ", 1}, // imported: $G's own
	} {
		st = envelope[monitor.AccountStatz]{}
		request(t, tc.nc, tc.subj, "", &st)
		if st.Data == nil || len(st.Data.Accounts) != tc.accts {
			t.Fatalf("%s %+v", tc.subj, st.Data)
		}
		g := st.Data.Accounts[0]
		if g.Account != "$G" || g.Conns != 1 || g.Received.Msgs < 2 {
			t.Errorf("%s: $G %+v", tc.subj, g)
		}
	}
	// An account without connections is not reported, unless asked for.
	if m, err := nc.Request("$SYS.REQ.ACCOUNT.NOPE.STATZ", nil, 500*time.Millisecond); err == nil {
		t.Errorf("STATZ of an unknown account answered: %s", m.Data)
	}
	var sz envelope[monitor.Subsz]
	request(t, nc, "$SYS.REQ.ACCOUNT.$G.SUBSZ", "", &sz)
	if sz.Data == nil || sz.Data.NumSubs == 0 {
		t.Errorf("account SUBSZ %+v", sz.Data)
	}
	var az envelope[monitor.Accountz]
	request(t, nc, "$SYS.REQ.SERVER.PING.ACCOUNTZ", "", &az)
	if az.Data == nil || strings.Join(az.Data.Accounts, ",") != "$G,SYS" || az.Data.SystemAccount != "SYS" || az.Server.ID != s.ID() {
		t.Errorf("ACCOUNTZ %+v", az)
	}
	az = envelope[monitor.Accountz]{}
	request(t, nc, "$SYS.REQ.SERVER."+s.ID()+".ACCOUNTZ", `{"account":"$G"}`, &az)
	if az.Data == nil || az.Data.Account == nil || az.Data.Account.AccountName != "$G" {
		t.Errorf("ACCOUNTZ of $G %+v", az.Data)
	}
	az = envelope[monitor.Accountz]{}
	request(t, nc, "$SYS.REQ.SERVER.PING.ACCOUNTZ", `{"account":"NOPE"}`, &az)
	if az.Error == nil || az.Error.Description != "Account NOPE does not exist" {
		t.Errorf("ACCOUNTZ of an unknown account %+v", az.Error)
	}
}

// TestStatszHeartbeat: the statsz is broadcast on $SYS.SERVER.<id>.STATSZ
// while someone listens, again and again, with a CPU figure.
func TestStatszHeartbeat(t *testing.T) {
	s, _ := startJSNode(t, "hb")
	nc := connectSys(t, s)
	sub, err := nc.SubscribeSync(StatszSubject(s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range 3 {
		m, err := sub.NextMsg(20 * time.Second)
		if err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
		var raw map[string]map[string]any
		if err := json.Unmarshal(m.Data, &raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := raw["statsz"]["cpu"]; !ok {
			t.Errorf("heartbeat without cpu: %s", m.Data)
		}
		var sm StatsMsg
		if err := json.Unmarshal(m.Data, &sm); err != nil {
			t.Fatal(err)
		}
		if sm.Server.ID != s.ID() || sm.Server.Seq <= last || sm.Stats.Connections != 2 || sm.Stats.JetStream == nil ||
			sm.Stats.JetStream.Config.StoreDir != "" {
			t.Errorf("heartbeat %d: %s", i, m.Data)
		}
		last = sm.Server.Seq
	}
}
