package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// goMsgTrace: message tracing (Nats-Trace-Dest, Nats-Trace-Only) to one
// subscriber, none, a queue group, a no-echo publisher's own subscription,
// trace-only, and a stream capture with and without trace-only. The events
// are reported without their connection ids and timestamps.
func goMsgTrace(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) (any, error) {
	rc, err := nats.Connect(os.Getenv("NATS_URL"), nats.Name("receiver"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	ne, err := nats.Connect(os.Getenv("NATS_URL"), nats.Name("noecho"), nats.NoEcho(), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer ne.Close()
	plain, _ := rc.SubscribeSync("trc.plain")
	queue, _ := rc.QueueSubscribeSync("trc.queue", "workers")
	if _, err := ne.SubscribeSync("trc.echo"); err != nil {
		return nil, err
	}
	if err := rc.Flush(); err != nil {
		return nil, err
	}
	if err := ne.Flush(); err != nil {
		return nil, err
	}
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TRC", Subjects: []string{"trc.js.>"}})
	if err != nil {
		return nil, err
	}
	traces, err := nc.SubscribeSync("trc.dest")
	if err != nil {
		return nil, err
	}
	if err := nc.Flush(); err != nil {
		return nil, err
	}
	trace := func(pc *nats.Conn, subj string, only bool) any {
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-Trace-Dest", "trc.dest")
		if only {
			m.Header.Set("Nats-Trace-Only", "true")
		}
		m.Data = []byte("traced")
		if err := pc.PublishMsg(m); err != nil {
			return errView(err)
		}
		ev, err := traces.NextMsg(10 * time.Second)
		if err != nil {
			return errView(err)
		}
		return traceView(ev.Data)
	}
	r := map[string]any{}
	r["plain"] = trace(nc, "trc.plain", false)
	r["plain_only"] = trace(nc, "trc.plain", true)
	r["none"] = trace(nc, "trc.none", false)
	r["queue"] = trace(nc, "trc.queue", false)
	r["no_echo"] = trace(ne, "trc.echo", false)
	r["stream_only"] = trace(nc, "trc.js.a", true)
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	r["stream_msgs_after_only"] = info.State.Msgs
	r["stream"] = trace(nc, "trc.js.a", false)
	// The stream answers a request; this publish had no reply, so read it back.
	deadline := time.Now().Add(10 * time.Second)
	var stored *jetstream.RawStreamMsg
	for time.Now().Before(deadline) {
		if stored, err = s.GetMsg(ctx, 1); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stored != nil {
		r["stored_trace_dest"] = stored.Header.Get("Nats-Trace-Dest")
	} else {
		r["stored"] = errView(err)
	}
	if err := rc.Flush(); err != nil {
		return nil, err
	}
	np, _, _ := plain.Pending()
	nq, _, _ := queue.Pending()
	r["received_plain"], r["received_queue"] = np, nq
	return r, nil
}

// traceView is an event without what differs between servers and runs:
// connection ids, timestamps and the server block.
func traceView(data []byte) any {
	var ev struct {
		Request map[string]any   `json:"request"`
		Hops    int              `json:"hops"`
		Events  []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return map[string]any{"bad_event": fmt.Sprintf("%v: %s", err, data)}
	}
	for _, e := range ev.Events {
		delete(e, "cid")
		delete(e, "ts")
	}
	return map[string]any{"request": ev.Request, "hops": ev.Hops, "events": ev.Events}
}
