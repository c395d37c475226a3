package jetstream

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// Message tracing of messages a stream captures: the server reports the
// stream through TraceStream (msgtrace_hook.go), as cmd/jetwal installs it.

// startTraced is startServer with the stream tracer installed.
func startTraced(t *testing.T) *testServer {
	t.Helper()
	ts := startServer(t, fastSync())
	ts.srv.SetStreamTracer(ts.js.TraceStream)
	return ts
}

// jsTrace is the part of a trace event these tests read.
type jsTrace struct {
	Events []struct {
		Type       string `json:"type"`
		Stream     string `json:"stream"`
		Subject    string `json:"subject"`
		NoInterest bool   `json:"nointerest"`
		Error      string `json:"error"`
	} `json:"events"`
}

func publishTraced(t *testing.T, nc *nats.Conn, traces *nats.Subscription, subj string, only bool) *jsTrace {
	t.Helper()
	m := nats.NewMsg(subj)
	m.Header.Set("Nats-Trace-Dest", traces.Subject)
	if only {
		m.Header.Set("Nats-Trace-Only", "true")
	}
	m.Data = []byte("traced")
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	ev, err := traces.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no trace event: %v", err)
	}
	var tr jsTrace
	if err := json.Unmarshal(ev.Data, &tr); err != nil {
		t.Fatalf("%s: %v", ev.Data, err)
	}
	return &tr
}

func TestMsgTraceStreamCapture(t *testing.T) {
	ts := startTraced(t)
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, njs.StreamConfig{
		Name: "ORDERS", Subjects: []string{"orders.>"},
		SubjectTransform: &njs.SubjectTransformConfig{Source: "orders.>", Destination: "stored.>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	traces, _ := nc.SubscribeSync("my.trace")
	nc.Flush()

	// Trace-only: the event names the stream and the subject it would
	// store under; nothing is stored.
	tr := publishTraced(t, nc, traces, "orders.new", true)
	if len(tr.Events) != 2 || tr.Events[0].Type != "in" || tr.Events[1].Type != "js" {
		t.Fatalf("events %+v", tr.Events)
	}
	if e := tr.Events[1]; e.Stream != "ORDERS" || e.Subject != "stored.new" || e.Error != "" || e.NoInterest {
		t.Fatalf("js event %+v", e)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("trace-only message stored: %d messages", info.State.Msgs)
	}

	// Delivered: the same event, and the message is stored with tracing
	// turned off in its header, as nats-server stores it.
	tr = publishTraced(t, nc, traces, "orders.new", false)
	if len(tr.Events) != 2 || tr.Events[1].Type != "js" || tr.Events[1].Stream != "ORDERS" {
		t.Fatalf("events %+v", tr.Events)
	}
	var stored *njs.RawStreamMsg
	eventually(t, "stored message", func() bool {
		stored, err = st.GetMsg(ctx, 1)
		return err == nil
	})
	if stored.Subject != "stored.new" || string(stored.Data) != "traced" || stored.Header.Get("Nats-Trace-Dest") != "trace disabled" {
		t.Fatalf("stored %s %q %v", stored.Subject, stored.Data, stored.Header)
	}
	if info, err = st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream info %+v %v, want 1 message", info, err)
	}

	// Another subject, outside every stream: no js event.
	tr = publishTraced(t, nc, traces, "elsewhere", false)
	if len(tr.Events) != 1 {
		t.Fatalf("events %+v", tr.Events)
	}
}

// The nats CLI's `nats trace`, against jetwal, prints what it prints against
// nats-server v2.15.2. Recorded by hand from nats-server v2.15.2 (-js) with
// the pinned CLI v0.5.0, a plain subscriber on foo, a queue subscriber (qq)
// on bar and a stream ST on st.>; ids and versions are normalized below:
var traceWant = map[string]string{
	"none": `Tracing message route to subject none 

Client "NATS CLI Version v0.5.0" cid:N server:"ID" version:"V"
--X No active interest

Legend: Client: --C Router: --> Gateway: ==> Leafnode: ~~> JetStream: --J Error: --X

`,
	"foo": `Tracing message route to subject foo 

Client "NATS CLI Version v0.5.0" cid:N server:"ID" version:"V"
--C Client "SUBNAME" cid:N subject:"foo"

Legend: Client: --C Router: --> Gateway: ==> Leafnode: ~~> JetStream: --J Error: --X

Egress Count:

  Client: 1
`,
	"bar": `Tracing message route to subject bar 

Client "NATS CLI Version v0.5.0" cid:N server:"ID" version:"V"
--C Client "SUBNAME" cid:N subject:"bar" queue:"qq"

Legend: Client: --C Router: --> Gateway: ==> Leafnode: ~~> JetStream: --J Error: --X

Egress Count:

  Client: 1
`,
	"st.x": `Tracing message route to subject st.x 

Client "NATS CLI Version v0.5.0" cid:N server:"ID" version:"V"
--J JetStream action:"stored" stream:"ST" subject:"st.x"
--X No active interest

Legend: Client: --C Router: --> Gateway: ==> Leafnode: ~~> JetStream: --J Error: --X

Egress Count:

  JetStream: 1
`,
}

func TestMsgTraceCLI(t *testing.T) {
	ts := startTraced(t)
	c := newCLI(t, ts)
	nc := ts.connect()
	sc, err := nats.Connect(ts.srv.ClientURL(), nats.Name("SUBNAME"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.Close)
	foo, _ := sc.SubscribeSync("foo")
	bar, _ := sc.QueueSubscribeSync("bar", "qq")
	sc.Flush()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "ST", Subjects: []string{"st.>"}})
	if err != nil {
		t.Fatal(err)
	}

	cid := regexp.MustCompile(`cid:\d+`)
	server := regexp.MustCompile(`server:"[A-Z0-9]+" version:"[0-9.]+"`)
	for _, subj := range []string{"none", "foo", "bar", "st.x"} {
		out := c.ok(args("trace", subj))
		out = cid.ReplaceAllString(out, "cid:N")
		out = server.ReplaceAllString(out, `server:"ID" version:"V"`)
		if out != traceWant[subj] {
			t.Errorf("nats trace %s:\n%s\nwant:\n%s", subj, out, traceWant[subj])
		}
	}
	// Without --deliver nothing reached the subscribers or the stream.
	sc.Flush()
	if n, _, _ := foo.Pending(); n != 0 {
		t.Errorf("foo subscriber got %d messages", n)
	}
	if n, _, _ := bar.Pending(); n != 0 {
		t.Errorf("bar subscriber got %d messages", n)
	}
	info, err := st.Info(ctxT(t))
	if err != nil || info.State.Msgs != 0 {
		t.Fatalf("stream info %+v %v, want no message", info, err)
	}
	// With --deliver the message is stored.
	c.ok(args("trace", "--deliver", "st.x"), `--J JetStream action:"stored" stream:"ST" subject:"st.x"`)
	eventually(t, "stored message", func() bool {
		info, err := st.Info(ctxT(t))
		return err == nil && info.State.Msgs == 1
	})
	c.ok(args("trace", "--deliver", "foo"), `subject:"foo"`, "Client: 1")
	if _, err := foo.NextMsg(10 * time.Second); err != nil {
		t.Fatalf("foo subscriber: %v", err)
	}
}
