package jetstream

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// Clients decide what to use from what the server announces: the version in
// INFO (server.DefaultVersion) and the JetStream API level in account info
// (api.Level). The tests below use, with real clients, every feature those
// clients gate at or below what jetwal announces, so that announcing a
// version or level is never a claim jetwal cannot honour. The nats.js gates
// (nats-core's Features table) are in compat/programs/version_gates.mjs,
// run against nats-server too by make compat.
//
// The gates, from the client sources:
//   - nats.go (legacy API): KeyValue and CreateKeyValue need 2.6.2; a KV
//     bucket uses discard new from 2.7.2; AddConsumer with a name uses
//     $JS.API.CONSUMER.CREATE.<stream>.<name>[.<filter>] from 2.9.0.
//   - nats.go jetstream: a KV bucket's LimitMarkerTTL (per-key TTLs,
//     subject delete markers) needs API level 1.
//   - natscli v0.5.0: API level 1 for pausing and resuming consumers
//     (consumer pause/resume, consumer add --pause), overflow consumer
//     groups, and sub --direct; level 2 for counters, atomic batch publish,
//     message schedules and pinned client groups; level 3 for creating the
//     stream of `nats bench js ... --create` (TestCLIBenchCreateAtLevel3);
//     level 4 for `nats bench js pub fast`, fast batch publishing
//     (TestCLIBenchFastBatch); 2.10.0 to ask $SYS.REQ.USER.INFO in account
//     info. (Level 5 gates the --js-domain refusal of the server commands.) Atomic batches and
//     schedules through the CLI are tested with their features
//     (TestCLISchedules and the batch tests).

const announcedVersion = "2.14.0"

func TestVersionGatesAnnounced(t *testing.T) {
	if server.DefaultVersion != announcedVersion {
		t.Fatalf("server.DefaultVersion %q: this suite covers the gates up to %s; review them for the new version", server.DefaultVersion, announcedVersion)
	}
	if api.Level != 4 {
		t.Fatalf("api.Level %d: this suite covers the gates up to level 4; review them for the new level", api.Level)
	}
	ts := startServer(t, fastSync())
	nc := ts.connect()
	if v := nc.ConnectedServerVersion(); v != announcedVersion {
		t.Fatalf("INFO version %q, want %q", v, announcedVersion)
	}
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ai, err := js.AccountInfo(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if ai.API.Level != api.Level {
		t.Fatalf("account info api level %d, want %d", ai.API.Level, api.Level)
	}
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "LVL", Subjects: []string{"lvl.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if lvl := s.CachedInfo().Config.Metadata["_nats.level"]; lvl != strconv.Itoa(api.Level) {
		t.Fatalf("stream metadata _nats.level %q, want %d", lvl, api.Level)
	}
}

// TestVersionGatesNatsGoLegacy: the legacy nats.go API's gates.
func TestVersionGatesNatsGoLegacy(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	// 2.6.2: key-value; 2.7.2: its stream discards new.
	kv, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "LEGACY", History: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put("k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put("k", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get("k"); err != nil || string(e.Value()) != "v2" || e.Revision() != 2 {
		t.Fatalf("kv get: %v, %v", e, err)
	}
	if again, err := js.KeyValue("LEGACY"); err != nil || again.Bucket() != "LEGACY" {
		t.Fatalf("bind the bucket: %v", err)
	}
	si, err := js.StreamInfo("KV_LEGACY")
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.Discard != nats.DiscardNew {
		t.Fatalf("KV stream discard %v, want new (nats.go sets it from 2.7.2)", si.Config.Discard)
	}

	// 2.9.0: a named consumer is created on the subject that names it and
	// its filter.
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	watch := ts.connect()
	reqs, err := watch.SubscribeSync("$JS.API.CONSUMER.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish("orders.a", []byte("one")); err != nil {
		t.Fatal(err)
	}
	ci, err := js.AddConsumer("ORDERS", &nats.ConsumerConfig{Durable: "d", FilterSubject: "orders.a", AckPolicy: nats.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	// nats.go asks CONSUMER.INFO first, then creates.
	var seen []string
	for {
		req, err := reqs.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("no consumer create request among %v: %v", seen, err)
		}
		seen = append(seen, req.Subject)
		if strings.HasPrefix(req.Subject, "$JS.API.CONSUMER.CREATE.") {
			break
		}
	}
	if got := seen[len(seen)-1]; got != "$JS.API.CONSUMER.CREATE.ORDERS.d.orders.a" {
		t.Fatalf("consumer created through %q, want the named form", got)
	}
	if ci.Name != "d" || ci.NumPending != 1 {
		t.Fatalf("consumer info %+v", ci)
	}
	sub, err := js.PullSubscribe("orders.a", "d", nats.Bind("ORDERS", "d"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := sub.Fetch(1, nats.MaxWait(5*time.Second))
	if err != nil || len(msgs) != 1 || string(msgs[0].Data) != "one" {
		t.Fatalf("fetch: %v, %d messages", err, len(msgs))
	}
}

// TestVersionGatesKVLimitMarkers: nats.go lets a KV bucket use limit
// markers and per-key TTLs only from API level 1 (account info).
func TestVersionGatesKVLimitMarkers(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctxT(t), njs.KeyValueConfig{Bucket: "TTL", LimitMarkerTTL: time.Minute})
	if err != nil {
		t.Fatalf("KV with LimitMarkerTTL: %v", err)
	}
	s, err := js.Stream(ctxT(t), "KV_TTL")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := s.CachedInfo().Config; !cfg.AllowMsgTTL || cfg.SubjectDeleteMarkerTTL != time.Minute {
		t.Fatalf("KV stream: allow_msg_ttl %v, subject_delete_marker_ttl %v", cfg.AllowMsgTTL, cfg.SubjectDeleteMarkerTTL)
	}
	if _, err := kv.Create(ctxT(t), "short", []byte("v"), njs.KeyTTL(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctxT(t), "kept", []byte("v")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the key with a 1s TTL expires", func() bool {
		_, err := kv.Get(ctxT(t), "short")
		return errors.Is(err, njs.ErrKeyNotFound)
	})
	if e, err := kv.Get(ctxT(t), "kept"); err != nil || string(e.Value()) != "v" {
		t.Fatalf("key without TTL: %v", err)
	}
	// A purge with a TTL leaves a marker that carries it.
	if err := kv.Purge(ctxT(t), "kept", njs.PurgeTTL(time.Hour)); err != nil {
		t.Fatalf("purge with TTL: %v", err)
	}
	if _, err := kv.Get(ctxT(t), "kept"); !errors.Is(err, njs.ErrKeyNotFound) {
		t.Fatalf("purged key: %v", err)
	}
	m, err := s.GetLastMsgForSubject(ctxT(t), "$KV.TTL.kept")
	if err != nil {
		t.Fatal(err)
	}
	if ttl := m.Header.Get("Nats-TTL"); ttl != "1h0m0s" {
		t.Fatalf("purge marker Nats-TTL %q, headers %v", ttl, m.Header)
	}

	// Subject delete markers: a key that ages out of a bucket with a TTL
	// leaves a marker, which a watcher sees as a purge.
	aged, err := js.CreateKeyValue(ctxT(t), njs.KeyValueConfig{Bucket: "AGE", TTL: time.Second, LimitMarkerTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	w, err := aged.Watch(ctxT(t), "k", njs.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := aged.Put(ctxT(t), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	var ops []njs.KeyValueOp
	timeout := time.After(20 * time.Second)
	for len(ops) < 2 {
		select {
		case e := <-w.Updates():
			if e != nil {
				ops = append(ops, e.Operation())
			}
		case <-timeout:
			t.Fatalf("watcher saw %v, want a put then a purge when the key ages out", ops)
		}
	}
	if ops[0] != njs.KeyValuePut || ops[1] != njs.KeyValuePurge {
		t.Fatalf("watcher saw %v, want a put then a purge", ops)
	}
}

// TestVersionGatesCLI: natscli's gates at API levels 1 and 2 and version
// 2.10.
func TestVersionGatesCLI(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	// 2.10.0: account info asks $SYS.REQ.USER.INFO, which the system
	// requests of package serve answer (TestAccountsWithNatsCLI checks the user
	// section); this package's bare server has no responder, and natscli
	// shows the account without the user section.
	c.ok(args("account", "info"), "JetStream Account Information", "Connected Server Version: "+announcedVersion)

	c.ok(args("stream", "add", "GATE", "--subjects", "gate.>", "--storage", "file", "--allow-direct", "--defaults"))
	for i := 1; i <= 3; i++ {
		if _, err := js.Publish(ctxT(t), "gate.a", []byte("m"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	consumer := func(name string) *njs.ConsumerInfo {
		t.Helper()
		c, err := js.Consumer(ctxT(t), "GATE", name)
		if err != nil {
			t.Fatal(err)
		}
		return consumerInfo(t, c)
	}

	// Level 1: a consumer created paused, resumed and paused again.
	c.ok(args("consumer", "add", "GATE", "P", "--pull", "--deliver", "all", "--ack", "explicit", "--pause", "1h", "--defaults"))
	if ci := consumer("P"); !ci.Paused || ci.PauseRemaining <= 0 {
		t.Fatalf("created with --pause: paused %v, remaining %v", ci.Paused, ci.PauseRemaining)
	}
	c.ok(args("consumer", "resume", "GATE", "P", "-f"))
	if ci := consumer("P"); ci.Paused {
		t.Fatal("still paused after consumer resume")
	}
	until := time.Now().UTC().Add(2 * time.Hour).Format(time.DateTime)
	c.ok(args("consumer", "pause", "GATE", "P", until, "-f"))
	if ci := consumer("P"); !ci.Paused {
		t.Fatal("not paused after consumer pause")
	}

	// Level 1: overflow consumer groups. natscli v0.5.0 passes the gate but
	// sends the policy without the groups (it copies --pinned-groups), so
	// the server refuses it, nats-server as jetwal; the gate is open.
	c.fails(args("consumer", "add", "GATE", "O", "--pull", "--deliver", "all", "--ack", "explicit", "--overflow-groups", "jobs", "--defaults"),
		"Setting PriorityPolicy requires at least one PriorityGroup to be set (10159)")

	// Level 1: subscribing through batched direct gets.
	out := c.ok(args("sub", "gate.a", "--stream", "GATE", "--direct", "--all", "--count", "3"))
	for _, w := range []string{"m1", "m2", "m3"} {
		if !strings.Contains(out, w) {
			t.Fatalf("sub --direct output lacks %q:\n%s", w, out)
		}
	}

	// Level 2: pinned client groups (natscli gates them at level 2 though
	// nats-server has them since 2.11) and counters.
	c.ok(args("consumer", "add", "GATE", "PIN", "--pull", "--deliver", "all", "--ack", "explicit", "--pinned-groups", "jobs", "--defaults"),
		"Pinned Client")
	if ci := consumer("PIN"); len(ci.Config.PriorityGroups) != 1 || ci.Config.PriorityGroups[0] != "jobs" {
		t.Fatalf("pinned consumer groups %v, want [jobs]", ci.Config.PriorityGroups)
	}
	c.ok(args("stream", "add", "CNT", "--subjects", "cnt.>", "--allow-counter", "--defaults"))
	c.ok(args("counter", "incr", "cnt.a", "5"))
	c.ok(args("counter", "decrement", "cnt.a", "2"))
	if out := strings.TrimSpace(c.ok(args("counter", "get", "cnt.a"))); out != "3" {
		t.Fatalf("counter get cnt.a: %q, want 3", out)
	}
}
