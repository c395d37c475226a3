package jetstream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
)

// The tests in this file subscribe to $JS.EVENT.> with nats.go, as a user
// of `nats event` or a dead-letter tool would, and check each advisory's
// subject, schema type and fields.

// eventSub subscribes to filter and flushes, so that the server knows of
// the interest before the test acts.
func eventSub(t *testing.T, nc *nats.Conn, filter string) *nats.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(filter)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

// nextEvent waits for the next event on sub, checks its subject and type
// and the common fields, and decodes it into v.
func nextEvent(t *testing.T, sub *nats.Subscription, subj, typ string, v any) {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("waiting for %s on %s: %v", typ, subj, err)
	}
	if m.Subject != subj {
		t.Fatalf("event subject %q, want %q (%s)", m.Subject, subj, m.Data)
	}
	var ev api.TypedEvent
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		t.Fatalf("decode %s: %v", m.Data, err)
	}
	if ev.Type != typ {
		t.Fatalf("event type %q, want %q", ev.Type, typ)
	}
	if len(ev.ID) != 22 { // a NUID
		t.Fatalf("event id %q is not a NUID", ev.ID)
	}
	if ev.Time.Location() != time.UTC || time.Since(ev.Time) > time.Minute || time.Until(ev.Time) > time.Minute {
		t.Fatalf("event timestamp %v is not a recent UTC time", ev.Time)
	}
	if strings.Contains(string(m.Data), `"domain"`) {
		t.Fatalf("event names a domain, and jetwal has none: %s", m.Data)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("decode %s: %v", m.Data, err)
	}
}

// noEvent checks that nothing more arrived on sub (after a round trip).
func noEvent(t *testing.T, nc *nats.Conn, sub *nats.Subscription) {
	t.Helper()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(50 * time.Millisecond); err == nil {
		t.Fatalf("unexpected event on %s: %s", m.Subject, m.Data)
	}
}

func TestAdvisoryStreamActions(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	sub := eventSub(t, nc, "$JS.EVENT.ADVISORY.STREAM.>")

	var resp api.StreamCreateResponse
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`, &resp)
	var ev api.StreamAction
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.STREAM.CREATED.ORDERS", api.TypeAdvisoryStreamAction, &ev)
	if ev.Stream != "ORDERS" || ev.Action != api.ActionCreate {
		t.Fatalf("create advisory %+v", ev)
	}
	firstID := ev.ID

	// Creating it again with the same config creates nothing: no advisory.
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`, &resp)
	noEvent(t, nc, sub)

	requestJSON(t, nc, "$JS.API.STREAM.UPDATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>","returns.>"]}`, &resp)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	ev = api.StreamAction{}
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.STREAM.UPDATED.ORDERS", api.TypeAdvisoryStreamAction, &ev)
	if ev.Stream != "ORDERS" || ev.Action != api.ActionModify || ev.ID == firstID {
		t.Fatalf("update advisory %+v", ev)
	}

	// A failed update is no update.
	requestJSON(t, nc, "$JS.API.STREAM.UPDATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"],"storage":"memory"}`, &resp)
	if resp.Error == nil {
		t.Fatal("storage change accepted")
	}
	noEvent(t, nc, sub)

	var del api.StreamDeleteResponse
	requestJSON(t, nc, "$JS.API.STREAM.DELETE.ORDERS", "", &del)
	ev = api.StreamAction{}
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.STREAM.DELETED.ORDERS", api.TypeAdvisoryStreamAction, &ev)
	if ev.Stream != "ORDERS" || ev.Action != api.ActionDelete {
		t.Fatalf("delete advisory %+v", ev)
	}
}

func TestAdvisoryConsumerActions(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var resp api.StreamCreateResponse
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`, &resp)
	sub := eventSub(t, nc, "$JS.EVENT.ADVISORY.CONSUMER.>")
	streams := eventSub(t, nc, "$JS.EVENT.ADVISORY.STREAM.>")

	create := `{"stream_name":"ORDERS","config":{"durable_name":"D","ack_policy":"explicit"}}`
	var cresp api.ConsumerInfoResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.D", create, &cresp)
	if cresp.Error != nil {
		t.Fatal(cresp.Error)
	}
	var ev api.ConsumerAction
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.CONSUMER.CREATED.ORDERS.D", api.TypeAdvisoryConsumerAction, &ev)
	if ev.Stream != "ORDERS" || ev.Consumer != "D" || ev.Action != api.ActionCreate {
		t.Fatalf("consumer create advisory %+v", ev)
	}
	// Same config again, then an update: neither creates a consumer.
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.D", create, &cresp)
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.D",
		`{"stream_name":"ORDERS","config":{"durable_name":"D","ack_policy":"explicit","description":"x"}}`, &cresp)
	if cresp.Error != nil {
		t.Fatal(cresp.Error)
	}
	noEvent(t, nc, sub)

	var dresp api.ConsumerDeleteResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.DELETE.ORDERS.D", "", &dresp)
	ev = api.ConsumerAction{}
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.CONSUMER.DELETED.ORDERS.D", api.TypeAdvisoryConsumerAction, &ev)
	if ev.Consumer != "D" || ev.Action != api.ActionDelete {
		t.Fatalf("consumer delete advisory %+v", ev)
	}

	// Deleting a stream deletes its consumers first, each advised.
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.E",
		`{"stream_name":"ORDERS","config":{"durable_name":"E","ack_policy":"explicit"}}`, &cresp)
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.CONSUMER.CREATED.ORDERS.E", api.TypeAdvisoryConsumerAction, &ev)
	var sdel api.StreamDeleteResponse
	requestJSON(t, nc, "$JS.API.STREAM.DELETE.ORDERS", "", &sdel)
	ev = api.ConsumerAction{}
	nextEvent(t, sub, "$JS.EVENT.ADVISORY.CONSUMER.DELETED.ORDERS.E", api.TypeAdvisoryConsumerAction, &ev)
	if ev.Consumer != "E" || ev.Action != api.ActionDelete {
		t.Fatalf("consumer delete advisory %+v", ev)
	}
	var sev api.StreamAction
	nextEvent(t, streams, "$JS.EVENT.ADVISORY.STREAM.DELETED.ORDERS", api.TypeAdvisoryStreamAction, &sev)
}

func TestAdvisoryNakAndTerm(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	publishN(t, js, "orders.new", 1, 2)
	c, err := js.CreateOrUpdateConsumer(ctxT(t), "ORDERS", njs.ConsumerConfig{Durable: "W", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	naks := eventSub(t, nc, "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.ORDERS.W")
	terms := eventSub(t, nc, "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.ORDERS.W")

	msgs := fetchAll(t, c, 1, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("fetched %d messages", len(msgs))
	}
	if err := msgs[0].Nak(); err != nil {
		t.Fatal(err)
	}
	var nak api.DeliveryNak
	nextEvent(t, naks, "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.ORDERS.W", api.TypeAdvisoryNak, &nak)
	if nak.Stream != "ORDERS" || nak.Consumer != "W" || nak.StreamSeq != 1 || nak.ConsumerSeq != 1 || nak.Deliveries != 1 {
		t.Fatalf("nak advisory %+v", nak)
	}

	// The redelivery is terminated with a reason.
	msgs = fetchAll(t, c, 1, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("fetched %d messages", len(msgs))
	}
	if err := msgs[0].TermWithReason("cannot parse"); err != nil {
		t.Fatal(err)
	}
	var term api.DeliveryTerminated
	nextEvent(t, terms, "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.ORDERS.W", api.TypeAdvisoryTerminated, &term)
	if term.StreamSeq != 1 || term.ConsumerSeq != 2 || term.Deliveries != 2 || term.Reason != "cannot parse" {
		t.Fatalf("terminated advisory %+v", term)
	}

	// A plain +TERM carries no reason; a nak of a message no longer
	// pending is no nak.
	msgs = fetchAll(t, c, 1, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("fetched %d messages", len(msgs))
	}
	if err := msgs[0].DoubleAck(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// (Raw acks: nats.go refuses a second ack of a message.)
	if err := nc.Publish(msgs[0].Reply(), []byte("-NAK")); err != nil {
		t.Fatal(err)
	}
	noEvent(t, nc, naks)
	if err := nc.Publish(msgs[0].Reply(), []byte("+TERM")); err != nil {
		t.Fatal(err)
	}
	term = api.DeliveryTerminated{}
	nextEvent(t, terms, "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.ORDERS.W", api.TypeAdvisoryTerminated, &term)
	if term.StreamSeq != 2 || term.ConsumerSeq != 3 || term.Deliveries != 1 || term.Reason != "" {
		t.Fatalf("terminated advisory %+v", term)
	}
}

func TestAdvisoryMaxDeliveries(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var resp api.StreamCreateResponse
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`, &resp)
	events := eventSub(t, nc, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>")
	deliveries := eventSub(t, nc, "deliver.p")
	var cresp api.ConsumerInfoResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.P", `{"stream_name":"ORDERS","config":{"durable_name":"P",
		"deliver_subject":"deliver.p","ack_policy":"explicit","ack_wait":100000000,"max_deliver":2}}`, &cresp)
	if cresp.Error != nil {
		t.Fatal(cresp.Error)
	}
	if _, err := nc.Request("orders.1", []byte("x"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Two deliveries, never acked; the third is not made.
	for i := 0; i < 2; i++ {
		if _, err := deliveries.NextMsg(10 * time.Second); err != nil {
			t.Fatalf("delivery %d: %v", i+1, err)
		}
	}
	var ev api.MaxDeliverExceeded
	nextEvent(t, events, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ORDERS.P", api.TypeAdvisoryMaxDeliver, &ev)
	if ev.Stream != "ORDERS" || ev.Consumer != "P" || ev.StreamSeq != 1 || ev.Deliveries != 2 {
		t.Fatalf("max deliveries advisory %+v", ev)
	}
	noEvent(t, nc, events)
}

func TestAdvisoryAckSampling(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consumerStream(t, js, njs.MemoryStorage, njs.StreamConfig{})
	publishN(t, js, "orders.new", 1, 3)
	metrics := eventSub(t, nc, "$JS.EVENT.METRIC.>")

	// Unsampled: acks send nothing.
	quiet, err := js.CreateOrUpdateConsumer(ctxT(t), "ORDERS", njs.ConsumerConfig{Durable: "Q", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fetchAll(t, quiet, 3, 5*time.Second) {
		if err := m.DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	noEvent(t, nc, metrics)

	c, err := js.CreateOrUpdateConsumer(ctxT(t), "ORDERS", njs.ConsumerConfig{Durable: "S", AckPolicy: njs.AckExplicitPolicy, SampleFrequency: "100%"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fetchAll(t, c, 2, 5*time.Second)
	if len(msgs) != 2 {
		t.Fatalf("fetched %d messages", len(msgs))
	}
	for _, m := range msgs {
		if err := m.DoubleAck(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []uint64{1, 2} {
		var ev api.ConsumerAckMetric
		nextEvent(t, metrics, "$JS.EVENT.METRIC.CONSUMER.ACK.ORDERS.S", api.TypeMetricConsumerAck, &ev)
		if ev.Stream != "ORDERS" || ev.Consumer != "S" || ev.StreamSeq != want || ev.ConsumerSeq != want || ev.Deliveries != 1 {
			t.Fatalf("ack metric %d: %+v", i, ev)
		}
		if ev.Delay <= 0 || ev.Delay > int64(time.Minute) {
			t.Fatalf("ack metric %d: ack_time %d ns", i, ev.Delay)
		}
	}
	// A second ack of an acked message is not sampled again.
	if err := nc.Publish(msgs[0].Reply(), []byte("+ACK")); err != nil {
		t.Fatal(err)
	}
	noEvent(t, nc, metrics)

	// sample_freq is checked as nats-server checks it.
	for _, bad := range []string{"often", "-5%", "10.5"} {
		var cresp api.ConsumerInfoResponse
		body := `{"stream_name":"ORDERS","config":{"durable_name":"B","ack_policy":"explicit","sample_freq":"` + bad + `"}}`
		requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.B", body, &cresp)
		if cresp.Error == nil || cresp.Error.ErrCode != api.ErrConsumerInvalidSampling || cresp.Error.Code != 400 {
			t.Fatalf("sample_freq %q: error %+v", bad, cresp.Error)
		}
	}
}

func TestAdvisoryAPIAudit(t *testing.T) {
	ts := startServer(t, fastSync())
	nc, err := nats.Connect(ts.srv.ClientURL(), nats.Name("auditor"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	audit := eventSub(t, nc, "$JS.EVENT.ADVISORY.API")

	var resp api.StreamCreateResponse
	body := `{"name":"ORDERS","subjects":["orders.>"]}`
	created := requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", body, &resp)
	var ev api.APIAudit
	nextEvent(t, audit, "$JS.EVENT.ADVISORY.API", api.TypeAdvisoryAPIAudit, &ev)
	if ev.Subject != "$JS.API.STREAM.CREATE.ORDERS" || ev.Request != body || ev.Response != string(created) {
		t.Fatalf("audit %+v", ev)
	}
	if ev.Server != ts.srv.Name() || ev.Client == nil {
		t.Fatalf("audit server %q client %+v", ev.Server, ev.Client)
	}
	cid, err := nc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	if ci := ev.Client; ci.ID != cid || ci.Account != GlobalAccount || ci.Name != "auditor" || ci.Lang != "go" ||
		ci.Host != "127.0.0.1" || ci.Start == nil || ci.Kind != "Client" {
		t.Fatalf("audit client %+v (cid %d)", ci, cid)
	}

	// Errors are audited too, with the error response.
	var info api.StreamInfoResponse
	missing := requestJSON(t, nc, "$JS.API.STREAM.INFO.NOPE", "", &info)
	ev = api.APIAudit{}
	nextEvent(t, audit, "$JS.EVENT.ADVISORY.API", api.TypeAdvisoryAPIAudit, &ev)
	if ev.Subject != "$JS.API.STREAM.INFO.NOPE" || ev.Request != "" || ev.Response != string(missing) ||
		!strings.Contains(ev.Response, `"err_code":10059`) {
		t.Fatalf("audit of an error %+v", ev)
	}
}

// TestAdvisoryNoListenerNoWork checks that with nobody subscribed the
// advisory paths build nothing: no allocation for the per-message
// advisories (nak, term, max deliver, sampled ack) nor the API audit.
func TestAdvisoryNoListenerNoWork(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var resp api.StreamCreateResponse
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`, &resp)
	var cresp api.ConsumerInfoResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.ORDERS.D",
		`{"stream_name":"ORDERS","config":{"durable_name":"D","ack_policy":"explicit","sample_freq":"100"}}`, &cresp)
	c := ts.js.lookup("ORDERS").cons.get("D")
	if c == nil {
		t.Fatal("consumer D not found")
	}
	subj := "$JS.ACK.ORDERS.D.2.7.9.1700000000000000000.0"
	r := &apiserver.Request{Subject: "$JS.API.STREAM.INFO.ORDERS", Data: []byte("{}"), Client: 1}
	out := ackOutcome{wasPending: true, deliveredAt: 1, sample: true}
	allocs := testing.AllocsPerRun(200, func() {
		c.adviseAck(ackNak, subj, 7, nil, out)
		c.adviseAck(ackTerm, subj, 7, []byte("why"), out)
		c.adviseAck(ackAck, subj, 7, nil, out)
		c.mu.Lock()
		c.noteMaxDeliver(7, 2)
		c.mu.Unlock()
		ts.js.auditAPI(r, []byte("{}"))
	})
	if allocs != 0 {
		t.Fatalf("advisories with no listener allocate %.1f times per run", allocs)
	}
	c.mu.Lock()
	n := len(c.maxed)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d max-deliver advisories queued with no listener", n)
	}
}

func TestAckTokens(t *testing.T) {
	for _, tc := range []struct {
		subj     string
		dc, cseq uint64
	}{
		{"$JS.ACK.S.C.3.10.12.1700000000000000000.5", 3, 12},
		{"$JS.ACK.hub.ACCHASH.S.C.4.10.13.1700000000000000000.5", 4, 13},
		{"$JS.ACK.hub.ACCHASH.S.C.4.10.14.1700000000000000000.5.rand", 4, 14},
		{"$JS.ACK.S.C", 0, 0},
		{"$JS.ACK.S.C.x.1.y.2.3", 0, 0},
	} {
		dc, cseq := ackTokens(tc.subj)
		if dc != tc.dc || cseq != tc.cseq {
			t.Errorf("ackTokens(%q) = %d, %d; want %d, %d", tc.subj, dc, cseq, tc.dc, tc.cseq)
		}
	}
}

// BenchmarkAdvisoryNoListener is what a +TERM's and a nak's advisories
// cost when nobody listens: an interest lookup each, no allocation.
func BenchmarkAdvisoryNoListener(b *testing.B) {
	srv, js, stop := benchServerJS(b, fastSync())
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	for _, req := range [][2]string{
		{"$JS.API.STREAM.CREATE.ORDERS", `{"name":"ORDERS","subjects":["orders.>"]}`},
		{"$JS.API.CONSUMER.CREATE.ORDERS.D", `{"stream_name":"ORDERS","config":{"durable_name":"D","ack_policy":"explicit"}}`},
	} {
		if _, err := nc.Request(req[0], []byte(req[1]), 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	s := js.lookup("ORDERS")
	if s == nil || s.cons.get("D") == nil {
		b.Fatal("stream ORDERS or consumer D missing")
	}
	c := s.cons.get("D")
	subj := "$JS.ACK.ORDERS.D.2.7.9.1700000000000000000.0"
	out := ackOutcome{wasPending: true}
	b.ReportAllocs()
	for b.Loop() {
		c.adviseAck(ackTerm, subj, 7, nil, out)
		c.adviseAck(ackNak, subj, 7, nil, out)
	}
}
