package jetstream

import (
	"testing"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestDurableSourcing: a mirror and a source through named flow control
// consumers of their origin (ADR-60) copy what those consumers take (the
// source's consumer filters), the consumers follow the copies, a consumer
// with another ack policy or none at all shows as the feed's error, and
// the configs nats-server refuses are refused with its codes.
func TestDurableSourcing(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	must := func(subj, body string) {
		t.Helper()
		var r api.Response
		requestJSON(t, nc, subj, body, &r)
		if r.Error != nil {
			t.Fatalf("%s: %+v", subj, r.Error)
		}
	}
	must("$JS.API.STREAM.CREATE.O", `{"name":"O","subjects":["o.>"]}`)
	for _, c := range []string{
		`{"durable_name":"C","deliver_subject":"d.m","ack_policy":"flow_control"}`,
		`{"durable_name":"C2","deliver_subject":"d.s","ack_policy":"flow_control","filter_subject":"o.a"}`,
		`{"durable_name":"X","deliver_subject":"d.x","ack_policy":"explicit"}`,
	} {
		must("$JS.API.CONSUMER.CREATE.O", `{"stream_name":"O","config":`+c+`}`)
	}
	must("$JS.API.STREAM.CREATE.M", `{"name":"M","mirror":{"name":"O","consumer":{"name":"C","deliver_subject":"d.m"}}}`)
	must("$JS.API.STREAM.CREATE.S", `{"name":"S","sources":[{"name":"O","consumer":{"name":"C2","deliver_subject":"d.s"}}]}`)
	must("$JS.API.STREAM.CREATE.MX", `{"name":"MX","mirror":{"name":"O","consumer":{"name":"X","deliver_subject":"d.x"}}}`)
	must("$JS.API.STREAM.CREATE.SY", `{"name":"SY","sources":[{"name":"O","consumer":{"name":"nope","deliver_subject":"d.y"}}]}`)
	for _, subj := range []string{"o.a", "o.b", "o.a"} {
		if _, err := nc.Request(subj, []byte(subj), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	info := func(name string) api.StreamInfoResponse {
		var r api.StreamInfoResponse
		requestJSON(t, nc, "$JS.API.STREAM.INFO."+name, "", &r)
		return r
	}
	eventually(t, "mirror and source copied", func() bool {
		return info("M").State.Msgs == 3 && info("S").State.Msgs == 2
	})
	var ci api.ConsumerInfoResponse
	requestJSON(t, nc, "$JS.API.CONSUMER.INFO.O.C", "", &ci)
	if ci.Error != nil || ci.Delivered.Stream != 3 || ci.AckFloor.Stream != 3 || ci.NumPending != 0 {
		t.Fatalf("mirror's consumer: %+v", ci.ConsumerInfo)
	}
	eventually(t, "feed errors", func() bool {
		mx, sy := info("MX"), info("SY")
		return mx.Mirror != nil && mx.Mirror.Error != nil && mx.Mirror.Error.ErrCode == api.ErrMirrorConsumerRequiresAck &&
			len(sy.Sources) == 1 && sy.Sources[0].Error != nil && sy.Sources[0].Error.ErrCode == api.ErrSourceConsumerSetupFailed &&
			mx.State.Msgs == 0 && sy.State.Msgs == 0
	})

	// After a restart both go on from where they were, nothing repeated.
	ts = ts.restart()
	nc = ts.connect()
	if _, err := nc.Request("o.a", []byte("after"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "copied after the restart", func() bool {
		return info("M").State.Msgs == 4 && info("S").State.Msgs == 3
	})
	requestJSON(t, nc, "$JS.API.CONSUMER.INFO.O.C2", "", &ci)
	if ci.Error != nil || ci.Delivered.Stream != 4 || ci.NumPending != 0 {
		t.Fatalf("source's consumer after the restart: %+v", ci.ConsumerInfo)
	}

	for _, tc := range []struct {
		body string
		code api.ErrCode
	}{
		{`{"name":"E1","mirror":{"name":"O","consumer":{"name":"","deliver_subject":"d.x"}}}`, api.ErrMirrorConsumerCfgInvalid},
		{`{"name":"E2","mirror":{"name":"O","consumer":{"name":"C","deliver_subject":""}}}`, api.ErrMirrorConsumerCfgInvalid},
		{`{"name":"E3","mirror":{"name":"O","opt_start_seq":2,"consumer":{"name":"C","deliver_subject":"d.m"}}}`, api.ErrMirrorConsumerCfgInvalid},
		{`{"name":"E4","sources":[{"name":"O","consumer":{"name":"","deliver_subject":"d.x"}}]}`, api.ErrSourceConsumerCfgInvalid},
		{`{"name":"E5","sources":[{"name":"O","consumer":{"name":"C","deliver_subject":"d.*"}}]}`, api.ErrSourceConsumerCfgInvalid},
		{`{"name":"E6","sources":[{"name":"O","filter_subject":"o.a","consumer":{"name":"C","deliver_subject":"d.m"}}]}`, api.ErrSourceConsumerCfgInvalid},
		{`{"name":"E7","sources":[{"name":"O","consumer":{"name":"C","deliver_subject":"d.m"}},{"name":"O","filter_subject":"o.b","consumer":{"name":"C","deliver_subject":"d.m"}}]}`, api.ErrSourceConsumerCfgInvalid},
		{`{"name":"E8","sources":[{"name":"O","subject_transforms":[{"src":"o.a","dest":"x.a"}],"consumer":{"name":"C","deliver_subject":"d.m"}},{"name":"O","subject_transforms":[{"src":"o.b","dest":"x.b"}],"consumer":{"name":"C","deliver_subject":"d.m"}}]}`, api.ErrSourceConsumerDuplicate},
	} {
		var r api.Response
		raw := requestJSON(t, nc, "$JS.API.STREAM.CREATE."+tc.body[9:11], tc.body, &r)
		if r.Error == nil || r.Error.ErrCode != tc.code {
			t.Errorf("%s: %s, want %d", tc.body, raw, tc.code)
		}
	}
}
