package jetstream

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestAckFlowControl: ack_policy flow_control (nats-server 2.14, ADR-60).
// The create defaults and refusals are nats-server's; the consumer sends
// up to max_ack_pending, then a flow control request, and the answer's
// Nats-Last-Stream acknowledges everything up to it; client acks are not
// taken (no responders), and nothing is redelivered by an ack wait.
func TestAckFlowControl(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var sr api.StreamInfoResponse
	requestJSON(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`, &sr)
	if sr.Error != nil {
		t.Fatal(sr.Error)
	}
	create := func(name, extra string) api.ConsumerInfoResponse {
		var r api.ConsumerInfoResponse
		requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.S."+name,
			`{"stream_name":"S","config":{"durable_name":"`+name+`","ack_policy":"flow_control"`+extra+`}}`, &r)
		return r
	}
	for _, tc := range []struct {
		extra string
		code  api.ErrCode
	}{
		{``, api.ErrConsumerAckFCRequiresPush},
		{`,"deliver_subject":"d.x","ack_wait":5000000000`, api.ErrConsumerAckFCRequiresNoAckWait},
		{`,"deliver_subject":"d.x","max_deliver":3`, api.ErrConsumerAckFCRequiresNoMaxDeliver},
		{`,"deliver_subject":"d.x","max_ack_pending":-1`, api.ErrConsumerAckFCRequiresMaxAckPending},
	} {
		if r := create("X", tc.extra); r.Error == nil || r.Error.ErrCode != tc.code {
			t.Errorf("%s: %+v, want %d", tc.extra, r.Error, tc.code)
		}
	}

	// Pedantic mode: no defaults, so the checks after them refuse.
	pedantic := func(extra string) *api.ApiError {
		var r api.ConsumerInfoResponse
		requestJSON(t, nc, "$JS.API.CONSUMER.CREATE.S.P",
			`{"stream_name":"S","pedantic":true,"config":{"durable_name":"P","deliver_subject":"d.p","ack_policy":"flow_control"`+extra+`}}`, &r)
		return r.Error
	}
	if e := pedantic(``); e == nil || e.ErrCode != api.ErrConsumerAckFCRequiresFC {
		t.Errorf("pedantic, no flow control: %+v", e)
	}
	if e := pedantic(`,"flow_control":true`); e == nil || e.ErrCode != api.ErrStreamInvalidConfig || e.Description != "flow control ack policy heartbeat needs to be 1s" {
		t.Errorf("pedantic, no heartbeat: %+v", e)
	}
	if e := pedantic(`,"flow_control":true,"idle_heartbeat":1000000000`); e != nil {
		t.Errorf("pedantic, complete: %+v", e)
	}

	sub, err := nc.SubscribeSync("d.f")
	if err != nil {
		t.Fatal(err)
	}
	r := create("F", `,"deliver_subject":"d.f","max_ack_pending":3`)
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	cfg := r.Config
	if cfg.AckPolicy != api.AckFlowControl || !cfg.FlowControl || cfg.Heartbeat != time.Second || cfg.AckWait != 0 ||
		cfg.Metadata[api.MetaRequiredLevel] != "4" {
		t.Fatalf("config: %+v", cfg)
	}
	for range 5 {
		if _, err := nc.Request("s.a", []byte("x"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// next returns the next message or flow control request, skipping
	// heartbeats.
	next := func() *nats.Msg {
		t.Helper()
		for {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if m.Header.Get("Status") == "100" && m.Reply == "" {
				continue // idle heartbeat
			}
			return m
		}
	}
	for i := 1; i <= 3; i++ {
		m := next()
		if m.Header.Get("Status") != "" {
			t.Fatalf("message %d: a status %q", i, m.Header.Get("Description"))
		}
		if i == 1 {
			// A client ack goes nowhere.
			if _, err := nc.Request(m.Reply, nil, time.Second); err != nats.ErrNoResponders {
				t.Fatalf("client ack: %v, want no responders", err)
			}
		}
	}
	fc := next()
	if fc.Header.Get("Status") != "100" || fc.Reply == "" {
		t.Fatalf("after max_ack_pending: %+v, want a flow control request", fc.Header)
	}
	info := func() *api.ConsumerInfo {
		var ci api.ConsumerInfoResponse
		requestJSON(t, nc, "$JS.API.CONSUMER.INFO.S.F", "", &ci)
		return ci.ConsumerInfo
	}
	if ci := info(); ci.NumAckPending != 3 || ci.AckFloor.Stream != 0 {
		t.Fatalf("before the answer: ack pending %d floor %+v", ci.NumAckPending, ci.AckFloor)
	}
	answer := func(fc *nats.Msg, last string) {
		t.Helper()
		a := nats.NewMsg(fc.Reply)
		a.Header.Set("Nats-Last-Consumer", last)
		a.Header.Set("Nats-Last-Stream", last)
		if err := nc.PublishMsg(a); err != nil {
			t.Fatal(err)
		}
	}
	// Only the outstanding request's answer acknowledges: one to another
	// id (a guess, an old request) changes nothing.
	answer(&nats.Msg{Reply: "$JS.FC.S.F.guess"}, "3") // info's request follows it on the connection
	if ci := info(); ci.NumAckPending != 3 || ci.AckFloor.Stream != 0 {
		t.Fatalf("after a wrong answer: ack pending %d floor %+v", ci.NumAckPending, ci.AckFloor)
	}
	answer(fc, "2")
	// 1 and 2 acknowledged: room for two more, then the next request.
	for i := 4; i <= 5; i++ {
		if m := next(); m.Header.Get("Status") != "" {
			t.Fatalf("message %d: a status", i)
		}
	}
	fc = next()
	if fc.Header.Get("Status") != "100" || fc.Reply == "" {
		t.Fatalf("second request: %+v", fc.Header)
	}
	if ci := info(); ci.NumAckPending != 3 || ci.AckFloor.Stream != 2 {
		t.Fatalf("after the first answer: ack pending %d floor %+v", ci.NumAckPending, ci.AckFloor)
	}
	answer(fc, "5")
	eventually(t, "acked up to 5", func() bool {
		ci := info()
		return ci.NumAckPending == 0 && ci.AckFloor.Stream == 5
	})
	if ci := info(); ci.NumRedelivered != 0 || ci.Delivered.Stream != 5 {
		t.Fatalf("redelivered %d, delivered %+v", ci.NumRedelivered, ci.Delivered)
	}
}
