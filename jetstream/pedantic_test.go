package jetstream

import (
	"testing"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestPedanticMode: with "pedantic": true, stream and consumer creates and
// updates that the server would adjust are refused with nats-server's
// 10157 and its texts; the same requests without it are adjusted and
// accepted.
func TestPedanticMode(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	streamReq := func(op, cfg string, pedantic bool) api.StreamCreateResponse {
		t.Helper()
		p := ""
		if pedantic {
			p = `,"pedantic":true`
		}
		var resp api.StreamCreateResponse
		requestJSON(t, nc, api.Prefix+"STREAM."+op+".P", `{"name":"P"`+cfg+p+`}`, &resp)
		return resp
	}
	for _, c := range []struct{ cfg, want string }{
		{`,"max_msgs":-5`, "pedantic mode: max_msgs must be set to -1"},
		{`,"max_bytes":-2`, "pedantic mode: max_bytes must be set to -1"},
		{`,"max_msg_size":-3`, "pedantic mode: max_msg_size must be set to -1"},
		{`,"max_consumers":-9`, "pedantic mode: max_consumers must be set to -1"},
		{`,"max_age":60000000000`, "pedantic mode: duplicate window cannot be bigger than max age"},
		{`,"subjects":["p.*"],"republish":{"dest":"r.>"}`, "pedantic mode: republish source can not be empty"},
	} {
		resp := streamReq("CREATE", c.cfg, true)
		if resp.Error == nil || resp.Error.ErrCode != api.ErrPedantic || resp.Error.Code != 400 || resp.Error.Description != c.want {
			t.Fatalf("pedantic create %s: %+v, want 10157 %q", c.cfg, resp.Error, c.want)
		}
	}
	// Without pedantic the same config is adjusted.
	resp := streamReq("CREATE", `,"max_msgs":-5,"max_age":60000000000`, false)
	if resp.Error != nil || resp.Config.MaxMsgs != -1 || resp.Config.Duplicates != resp.Config.MaxAge {
		t.Fatalf("create: %+v %+v", resp.Error, resp.StreamInfo)
	}
	// A config needing no adjustment passes in pedantic mode, and so does
	// its update; an update that would be adjusted does not.
	if resp := streamReq("UPDATE", `,"max_msgs":-1,"max_age":60000000000,"duplicate_window":60000000000`, true); resp.Error != nil {
		t.Fatalf("pedantic update: %+v", resp.Error)
	}
	if resp := streamReq("UPDATE", `,"max_msgs":-7`, true); resp.Error == nil || resp.Error.ErrCode != api.ErrPedantic {
		t.Fatalf("pedantic update with max_msgs -7: %+v", resp.Error)
	}

	var cl api.StreamCreateResponse
	requestJSON(t, nc, api.Prefix+"STREAM.CREATE.L", `{"name":"L","consumer_limits":{"max_ack_pending":50}}`, &cl)
	if cl.Error != nil {
		t.Fatal(cl.Error)
	}
	consumerReq := func(stream, cfg string, pedantic bool) api.ConsumerInfoResponse {
		t.Helper()
		var resp api.ConsumerInfoResponse
		requestJSON(t, nc, api.Prefix+"CONSUMER.CREATE."+stream, `{"stream_name":"`+stream+`","config":{"ack_policy":"explicit"`+cfg+`},"pedantic":`+map[bool]string{true: "true", false: "false"}[pedantic]+`}`, &resp)
		return resp
	}
	for _, c := range []struct{ stream, cfg, want string }{
		{"P", `,"max_deliver":-4`, "pedantic mode: max_deliver must be set to -1"},
		{"P", `,"max_waiting":-1`, "pedantic mode: max_waiting must not be negative"},
		{"P", `,"max_ack_pending":-3`, "pedantic mode: max_ack_pending must be set to -1"},
		{"P", `,"idle_heartbeat":-1`, "pedantic mode: idle_heartbeat must not be negative"},
		{"P", `,"ack_wait":30000000000,"backoff":[1000000000,2000000000]`, "pedantic mode: first backoff value has to equal batch AckWait"},
		{"L", ``, "pedantic mode: max_ack_pending must be set if it's configured in stream limits"},
	} {
		resp := consumerReq(c.stream, c.cfg, true)
		if resp.Error == nil || resp.Error.ErrCode != api.ErrPedantic || resp.Error.Description != c.want {
			t.Fatalf("pedantic consumer %s: %+v, want %q", c.cfg, resp.Error, c.want)
		}
		if resp := consumerReq(c.stream, c.cfg, false); resp.Error != nil {
			t.Fatalf("consumer %s without pedantic: %+v", c.cfg, resp.Error)
		}
	}
	if resp := consumerReq("L", `,"max_ack_pending":20`, true); resp.Error != nil || resp.ConsumerInfo.Config.MaxAckPending != 20 {
		t.Fatalf("pedantic consumer within limits: %+v", resp.Error)
	}
	if resp := consumerReq("P", `,"max_deliver":-4,"max_ack_pending":-3`, false); resp.Error != nil ||
		resp.ConsumerInfo.Config.MaxDeliver != -1 || resp.ConsumerInfo.Config.MaxAckPending != -1 {
		t.Fatalf("adjusted consumer: %+v %+v", resp.Error, resp.ConsumerInfo)
	}
}
