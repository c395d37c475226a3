package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/server/auth"
)

// traceEvent is a trace event as a client decodes it: every event kind's
// fields in one struct.
type traceEvent struct {
	Server struct {
		Name      string    `json:"name"`
		ID        string    `json:"id"`
		Version   string    `json:"ver"`
		JetStream bool      `json:"jetstream"`
		Seq       uint64    `json:"seq"`
		Time      time.Time `json:"time"`
	} `json:"server"`
	Request struct {
		Header  map[string][]string `json:"header"`
		MsgSize int                 `json:"msgsize"`
	} `json:"request"`
	Events []struct {
		Type    string    `json:"type"`
		Time    time.Time `json:"ts"`
		Kind    int       `json:"kind"`
		CID     uint64    `json:"cid"`
		Name    string    `json:"name"`
		Account string    `json:"acc"`
		Subject string    `json:"subj"`
		Sub     string    `json:"sub"`
		Queue   string    `json:"queue"`
		Error   string    `json:"error"`
		Stream  string    `json:"stream"`
	} `json:"events"`
}

// tracedMsg is a message with Nats-Trace-Dest dest (and Nats-Trace-Only
// when only).
func tracedMsg(subj, dest string, only bool) *nats.Msg {
	m := nats.NewMsg(subj)
	m.Header.Set(MsgTraceDest, dest)
	if only {
		m.Header.Set(MsgTraceOnly, "true")
	}
	m.Data = []byte("hello")
	return m
}

// nextTrace waits for the next event on sub and decodes it.
func nextTrace(t *testing.T, sub *nats.Subscription) *traceEvent {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no trace event: %v", err)
	}
	var ev traceEvent
	if err := json.Unmarshal(m.Data, &ev); err != nil {
		t.Fatalf("trace event %s: %v", m.Data, err)
	}
	return &ev
}

// types lists the events' types in order.
func (ev *traceEvent) types() []string {
	var out []string
	for _, e := range ev.Events {
		out = append(out, e.Type)
	}
	return out
}

func wantTypes(t *testing.T, ev *traceEvent, want ...string) {
	t.Helper()
	if got := ev.types(); !reflect.DeepEqual(got, want) {
		t.Fatalf("event types %v, want %v (%+v)", got, want, ev.Events)
	}
}

// noTraceMsg checks that sub got nothing before a marker published after the
// message in question on the same connection reached marker.
func noTraceMsg(t *testing.T, pub *nats.Conn, sub, marker *nats.Subscription) {
	t.Helper()
	if err := pub.Publish(marker.Subject, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := marker.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("marker: %v", err)
	}
	if n, _, _ := sub.Pending(); n != 0 {
		m, _ := sub.NextMsg(0)
		t.Fatalf("subscription received %d messages (first %+v), want none", n, m)
	}
}

func TestMsgTraceOneSubscriber(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s, nats.Name("sender"))
	rc := connect(t, s, nats.Name("receiver"))
	sub, _ := rc.SubscribeSync("orders.new")
	rc.Flush()
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()

	if err := nc.PublishMsg(tracedMsg("orders.new", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	in, eg := ev.Events[0], ev.Events[1]
	if in.Kind != 0 || in.Name != "sender" || in.Account != "$G" || in.Subject != "orders.new" || in.Error != "" || in.CID == 0 {
		t.Fatalf("ingress %+v", in)
	}
	if eg.Kind != 0 || eg.Name != "receiver" || eg.Sub != "orders.new" || eg.Queue != "" || eg.Error != "" || eg.CID == in.CID || eg.CID == 0 {
		t.Fatalf("egress %+v", eg)
	}
	if ev.Server.ID != s.ID() || ev.Server.Name != s.Name() || ev.Server.Version != s.Version() || ev.Server.Seq == 0 || ev.Server.Time.IsZero() {
		t.Fatalf("server block %+v", ev.Server)
	}
	if got := ev.Request.Header[MsgTraceDest]; !reflect.DeepEqual(got, []string{"my.trace"}) {
		t.Fatalf("request headers %v", ev.Request.Header)
	}
	// msgsize is the header block plus the payload, as nats-server counts.
	hdr := "NATS/1.0\r\nNats-Trace-Dest: my.trace\r\n\r\n"
	if ev.Request.MsgSize != len(hdr)+len("hello") {
		t.Fatalf("msgsize %d, want %d", ev.Request.MsgSize, len(hdr)+5)
	}
	// The message itself is delivered, headers included.
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "hello" || m.Header.Get(MsgTraceDest) != "my.trace" {
		t.Fatalf("delivered %q %v", m.Data, m.Header)
	}
	// The event message has no header block of its own.
	if err := nc.PublishMsg(tracedMsg("orders.new", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	raw, err := traces.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Header) != 0 {
		t.Fatalf("event carries headers %v", raw.Header)
	}
}

func TestMsgTraceNoInterest(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()
	if err := nc.PublishMsg(tracedMsg("nobody.here", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in")
	if ev.Events[0].Subject != "nobody.here" {
		t.Fatalf("ingress %+v", ev.Events[0])
	}
}

func TestMsgTraceQueueGroup(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	rc := connect(t, s, nats.Name("worker"))
	q1, _ := rc.QueueSubscribeSync("jobs", "workers")
	q2, _ := rc.QueueSubscribeSync("jobs", "workers")
	rc.Flush()
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()
	if err := nc.PublishMsg(tracedMsg("jobs", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if eg := ev.Events[1]; eg.Sub != "jobs" || eg.Queue != "workers" || eg.Name != "worker" || eg.Error != "" {
		t.Fatalf("egress %+v", eg)
	}
	// The event can overtake the message; a marker from the same publisher
	// cannot.
	marker, _ := rc.SubscribeSync("marker")
	rc.Flush()
	if err := nc.Publish("marker", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := marker.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("marker: %v", err)
	}
	n1, _, _ := q1.Pending()
	n2, _, _ := q2.Pending()
	if n1+n2 != 1 {
		t.Fatalf("queue members got %d+%d messages, want 1 in all", n1, n2)
	}
}

func TestMsgTraceOnlyDeliversNothing(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	rc := connect(t, s, nats.Name("receiver"))
	sub, _ := rc.SubscribeSync("orders.new")
	q, _ := rc.QueueSubscribeSync("orders.new", "g")
	marker, _ := rc.SubscribeSync("marker")
	rc.Flush()
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()

	if err := nc.PublishMsg(tracedMsg("orders.new", "my.trace", true)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg", "eg")
	if ev.Events[1].Error != "" || ev.Events[2].Queue != "g" || ev.Events[2].Error != "" {
		t.Fatalf("egresses %+v", ev.Events[1:])
	}
	if got := ev.Request.Header[MsgTraceOnly]; !reflect.DeepEqual(got, []string{"true"}) {
		t.Fatalf("request headers %v", ev.Request.Header)
	}
	noTraceMsg(t, nc, sub, marker)
	noTraceMsg(t, nc, q, marker)
}

func TestMsgTraceOnlyAutoUnsubscribeCountsNothing(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	rc := connect(t, s)
	sub, _ := rc.SubscribeSync("once")
	if err := sub.AutoUnsubscribe(1); err != nil {
		t.Fatal(err)
	}
	rc.Flush()
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()
	for i := 0; i < 2; i++ {
		if err := nc.PublishMsg(tracedMsg("once", "my.trace", true)); err != nil {
			t.Fatal(err)
		}
		ev := nextTrace(t, traces)
		wantTypes(t, ev, "in", "eg")
		if ev.Events[1].Error != "" {
			t.Fatalf("trace-only %d: egress %+v", i, ev.Events[1])
		}
	}
	// The trace-only messages did not use up the subscription's one message.
	if err := nc.Publish("once", []byte("real")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(10 * time.Second); err != nil || string(m.Data) != "real" {
		t.Fatalf("real message: %v %v", m, err)
	}
}

func TestMsgTraceNoEcho(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s, nats.NoEcho())
	own, _ := nc.SubscribeSync("loop")
	nc.Flush()
	tc := connect(t, s)
	traces, _ := tc.SubscribeSync("my.trace")
	tc.Flush()
	if err := nc.PublishMsg(tracedMsg("loop", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if ev.Events[1].Error != msgTraceErrNoEcho {
		t.Fatalf("egress %+v", ev.Events[1])
	}
	if n, _, _ := own.Pending(); n != 0 {
		t.Fatalf("no-echo publisher received its own message")
	}
}

func TestMsgTracePermissions(t *testing.T) {
	s := permServer(t,
		auth.User{Username: "u", Password: "p", Permissions: &auth.Permissions{
			Publish: &auth.SubjectPermission{Allow: []string{"orders.>", "my.trace"}},
		}},
		auth.User{Username: "nodest", Password: "p", Permissions: &auth.Permissions{
			Publish: &auth.SubjectPermission{Allow: []string{"orders.>"}},
		}},
		auth.User{Username: "w", Password: "p"},
		auth.User{Username: "r", Password: "p", Permissions: &auth.Permissions{
			Subscribe: &auth.SubjectPermission{Deny: []string{"orders.secret"}},
		}})
	w := connect(t, s, nats.UserInfo("w", "p"))
	traces, _ := w.SubscribeSync("my.trace")
	w.Flush()
	r := connect(t, s, nats.UserInfo("r", "p"))
	rsub, _ := r.SubscribeSync("orders.*")
	marker, _ := r.SubscribeSync("marker")
	r.Flush()

	errs := make(chan error, 4)
	u := connect(t, s, nats.UserInfo("u", "p"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	// Publishing where the user may not: the event says why at ingress.
	if err := u.PublishMsg(tracedMsg("other", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in")
	if want := `Permissions Violation for Publish to "other"`; ev.Events[0].Error != want {
		t.Fatalf("ingress error %q, want %q", ev.Events[0].Error, want)
	}
	select {
	case err := <-errs:
		if err == nil {
			t.Fatal("nil async error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no -ERR for the denied publish")
	}
	// A subscription that denies the subject.
	if err := u.PublishMsg(tracedMsg("orders.secret", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev = nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if ev.Events[1].Error != msgTraceErrSubDeny {
		t.Fatalf("egress %+v", ev.Events[1])
	}
	noTraceMsg(t, w, rsub, marker)

	// A trace destination the user may not publish to: -ERR and the
	// message is dropped, as nats-server does.
	errs2 := make(chan error, 4)
	nd := connect(t, s, nats.UserInfo("nodest", "p"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs2 <- err }))
	if err := nd.PublishMsg(tracedMsg("orders.new", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs2:
		if want := `nats: permissions violation: Permissions Violation for Publish to "my.trace"`; err == nil || err.Error() != want {
			t.Fatalf("async error %v, want %s", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no -ERR for the denied trace destination")
	}
	noTraceMsg(t, w, rsub, marker)
	if n, _, _ := traces.Pending(); n != 0 {
		t.Fatalf("%d trace events for a denied destination", n)
	}
}

func TestMsgTraceHeadersThatDoNotTrace(t *testing.T) {
	s := startServer(t, Options{})
	nc := connect(t, s)
	rc := connect(t, s)
	sub, _ := rc.SubscribeSync("data")
	marker, _ := rc.SubscribeSync("marker")
	rc.Flush()
	traces, _ := nc.SubscribeSync(">")
	nc.Flush()

	send := func(hdr nats.Header) {
		t.Helper()
		m := nats.NewMsg("data")
		m.Header = hdr
		m.Data = []byte("x")
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	got := func() int {
		t.Helper()
		if err := nc.Publish("marker", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := marker.NextMsg(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		n, _, _ := sub.Pending()
		for i := 0; i < n; i++ {
			_, _ = sub.NextMsg(0)
		}
		return n
	}
	cases := []struct {
		name string
		hdr  nats.Header
		want int // messages delivered to sub
	}{
		{"trace-only without a destination is delivered", nats.Header{MsgTraceOnly: {"true"}}, 1},
		{"disabled tracing is delivered", nats.Header{MsgTraceDest: {msgTraceDestDisabled}}, 1},
		{"invalid destination is delivered untraced", nats.Header{MsgTraceDest: {"bad..subject"}}, 1},
		{"invalid destination with trace-only is dropped", nats.Header{MsgTraceDest: {"bad..subject"}, MsgTraceOnly: {"on"}}, 0},
		{"origin account header is delivered untraced", nats.Header{MsgTraceDest: {"my.trace"}, MsgTraceOriginAccount: {"A"}}, 1},
		{"origin account header with trace-only is dropped", nats.Header{MsgTraceDest: {"my.trace"}, MsgTraceOriginAccount: {"A"}, MsgTraceOnly: {"1"}}, 0},
		{"traceparent alone does not trace", nats.Header{"traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}, 1},
		{"other headers", nats.Header{"X-Thing": {"Nats-Trace-Dest"}}, 1},
	}
	for _, tc := range cases {
		send(tc.hdr)
		if n := got(); n != tc.want {
			t.Errorf("%s: %d delivered, want %d", tc.name, n, tc.want)
		}
	}
	// Only the marker and data messages reached the ">" subscriber: no event.
	for {
		m, err := traces.NextMsg(0)
		if err != nil {
			break
		}
		if m.Subject != "data" && m.Subject != "marker" {
			t.Fatalf("unexpected message on %s: %s", m.Subject, m.Data)
		}
	}
}

func TestMsgTraceHeaderParsing(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nNats-Trace-Dest:  a.b \r\ntraceparent: tp\r\nX: 1\r\nX: 2\r\nEmpty:\r\n:novalue\r\n\r\n")
	h, dest, ok := traceHeaders(hdr)
	if !ok || dest != "a.b" {
		t.Fatalf("dest %q ok %v", dest, ok)
	}
	want := map[string][]string{"Nats-Trace-Dest": {"a.b"}, "traceparent": {"tp"}, "X": {"1", "2"}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	for _, bad := range []string{
		"NATS/1.0\r\nnats-trace-dest: a\r\n\r\n", // the name is case-sensitive
		"NATS/1.0\r\nNats-Trace-Dest: trace disabled\r\n\r\n",
		"NATS/1.0\r\nNats-Trace-Dest:\r\n\r\n",
		"NATS/1.0\r\nNats-Trace-Dest: a", // no line end
		"garbage",
		"",
	} {
		if _, _, ok := traceHeaders([]byte(bad)); ok {
			t.Errorf("%q starts a trace", bad)
		}
	}
	for v, want := range map[string]bool{"true": true, "TRUE": true, "1": true, "On": true, "false": false, "yes": false, "": false} {
		if got := traceOnlyValue([]string{v}); got != want {
			t.Errorf("Nats-Trace-Only %q: %v, want %v", v, got, want)
		}
	}
}

func TestMsgTraceInternalSubscriptions(t *testing.T) {
	s := startServer(t, Options{})
	got := make(chan string, 4)
	if _, err := s.Subscribe("svc.>", "", func(m *Msg) { got <- m.Subject }); err != nil {
		t.Fatal(err)
	}
	s.SetStreamTracer(func(filter, subj string) (string, string, bool) {
		if filter == "svc.>" {
			return "SVC", "stored." + subj, true
		}
		return "", "", false
	})
	nc := connect(t, s)
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()

	// Trace-only: the stream is reported, its handler does not run.
	if err := nc.PublishMsg(tracedMsg("svc.a", "my.trace", true)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "js")
	if js := ev.Events[1]; js.Stream != "SVC" {
		t.Fatalf("js event %+v", js)
	}
	// The js event's subject is "subject", not the ingress' "subj".
	if err := nc.PublishMsg(tracedMsg("svc.b", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	m, err := traces.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(m.Data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Events) != 2 || doc.Events[1]["subject"] != "stored.svc.b" || doc.Events[1]["type"] != "js" {
		t.Fatalf("events %v", doc.Events)
	}
	select {
	case subj := <-got:
		if subj != "svc.b" {
			t.Fatalf("handler got %s, want only svc.b", subj)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler did not run for the delivered message")
	}
	if len(got) != 0 {
		t.Fatalf("handler ran %d more times", len(got))
	}
}

func TestMsgTraceRoute(t *testing.T) {
	servers := startMesh(t, 2)
	a, b := servers[0], servers[1]
	bc := connect(t, b, nats.Name("far"))
	far, _ := bc.SubscribeSync("over.there")
	bc.Flush()
	waitFor(t, "remote interest", func() bool { return hasRemoteInterest(a, "over.there") })
	ac := connect(t, a)
	traces, _ := ac.SubscribeSync("my.trace")
	ac.Flush()

	// Trace-only: the route is reported and not used.
	if err := ac.PublishMsg(tracedMsg("over.there", "my.trace", true)); err != nil {
		t.Fatal(err)
	}
	ev := nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if eg := ev.Events[1]; eg.Kind != MsgTraceKindRouter || eg.Name != "s1" || eg.Error != msgTraceErrOnlyNoSupport {
		t.Fatalf("route egress %+v", eg)
	}
	// Delivered: the route takes it, and says it will not trace.
	if err := ac.PublishMsg(tracedMsg("over.there", "my.trace", false)); err != nil {
		t.Fatal(err)
	}
	ev = nextTrace(t, traces)
	wantTypes(t, ev, "in", "eg")
	if eg := ev.Events[1]; eg.Kind != MsgTraceKindRouter || eg.Error != msgTraceErrNoSupport {
		t.Fatalf("route egress %+v", eg)
	}
	m, err := far.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The first message to arrive is the delivered one: the trace-only one
	// was not forwarded.
	if string(m.Data) != "hello" || m.Header.Get(MsgTraceOnly) != "" {
		t.Fatalf("far subscriber got %q %v", m.Data, m.Header)
	}
}

func TestMsgTraceDisableHeader(t *testing.T) {
	for in, want := range map[string]string{
		"NATS/1.0\r\nNats-Trace-Dest: a.b\r\nX: 1\r\n\r\n": "NATS/1.0\r\nNats-Trace-Dest: trace disabled\r\nX: 1\r\n\r\n",
		"NATS/1.0\r\nX: 1\r\nNats-Trace-Dest:a\r\n\r\n":    "NATS/1.0\r\nX: 1\r\nNats-Trace-Dest:trace disabled\r\n\r\n",
		"NATS/1.0\r\nX: 1\r\n\r\n":                         "NATS/1.0\r\nX: 1\r\n\r\n",
	} {
		if got := string(disableTraceHeader([]byte(in))); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
