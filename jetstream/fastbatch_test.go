package jetstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// fastClient publishes fast batch messages with raw reply subjects (nats.go
// v1.55 has no fast batch API) and reads what the server sends back.
type fastClient struct {
	t   *testing.T
	nc  *nats.Conn
	sub *nats.Subscription
}

func newFastClient(t *testing.T, nc *nats.Conn) *fastClient {
	t.Helper()
	sub, err := nc.SubscribeSync("_FI.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &fastClient{t: t, nc: nc, sub: sub}
}

// pub publishes message seq of batch id with operation op.
func (c *fastClient) pub(subj, id string, flow int, gap string, seq, op int, hdr nats.Header) {
	c.t.Helper()
	m := nats.NewMsg(subj)
	m.Data = []byte(fmt.Sprintf("%s-%d", id, seq))
	if hdr != nil {
		m.Header = hdr
	}
	m.Reply = fmt.Sprintf("_FI.%s.%d.%s.%d.%d.$FI", id, flow, gap, seq, op)
	if err := c.nc.PublishMsg(m); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next message the server sent: its reply subject's
// sequence and op, and the body.
func (c *fastClient) next() (string, string) {
	c.t.Helper()
	m, err := c.sub.NextMsg(10 * time.Second)
	if err != nil {
		c.t.Fatalf("no fast batch reply: %v", err)
	}
	return m.Subject, string(m.Data)
}

// want reads the next replies and fails unless they are, in order, the
// bodies given (each on the reply subject of the batch message that caused
// it: "<id>.<seq>.<op> <body>", flow and gap mode omitted).
func (c *fastClient) want(lines ...string) {
	c.t.Helper()
	for _, want := range lines {
		subj, body := c.next()
		parts := strings.Split(subj, ".")
		if len(parts) < 7 {
			c.t.Fatalf("reply subject %q", subj)
		}
		id := strings.Join(parts[1:len(parts)-5], ".")
		seq, op := parts[len(parts)-3], parts[len(parts)-2]
		if got := fmt.Sprintf("%s.%s.%s %s", id, seq, op, body); got != want {
			c.t.Fatalf("fast batch reply\n got  %s\n want %s", got, want)
		}
	}
}

// none fails if the server sends anything more within a short while.
func (c *fastClient) none() {
	c.t.Helper()
	if err := c.nc.Flush(); err != nil {
		c.t.Fatal(err)
	}
	if m, err := c.sub.NextMsg(200 * time.Millisecond); err == nil {
		c.t.Fatalf("unexpected reply %s %s", m.Subject, m.Data)
	}
}

func fastStream(t *testing.T, js njs.JetStream, cfg njs.StreamConfig) {
	t.Helper()
	if _, err := js.CreateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
}

// TestFastBatch: on both stores, a batch with a flow of 2 gets the ack
// interval on its first message, a flow ack every 2 stored messages, and
// the commit's PubAck names the batch and its count; an end-of-batch
// commit is not stored and counts what was. The stored messages carry the
// client's headers only.
func TestFastBatch(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, Storage: storage, AllowBatchPublish: true})
		c := newFastClient(t, ts.connect())
		c.pub("f.a", "h", 2, "fail", 1, 0, nil)
		for i := 2; i <= 6; i++ {
			c.pub("f.a", "h", 2, "fail", i, 1, nil)
		}
		c.pub("f.a", "h", 2, "fail", 7, 2, nil)
		c.want(`h.1.0 {"type":"ack","seq":0,"msgs":2}`,
			`h.2.1 {"type":"ack","seq":2,"msgs":2}`,
			`h.4.1 {"type":"ack","seq":4,"msgs":2}`,
			`h.6.1 {"type":"ack","seq":6,"msgs":2}`,
			`h.7.2 {"stream":"F","seq":7,"batch":"h","count":7}`)

		c.pub("f.b", "e", 10, "fail", 1, 0, nil)
		c.pub("f.b", "e", 10, "fail", 2, 1, nil)
		c.pub("f.b", "e", 10, "fail", 3, 3, nil)
		c.want(`e.1.0 {"type":"ack","seq":0,"msgs":10}`, `e.3.3 {"stream":"F","seq":9,"batch":"e","count":2}`)
		c.none()

		if n := batchStreamMsgs(t, js, "F"); n != 9 {
			t.Fatalf("stream holds %d messages, want 9", n)
		}
		s, _ := js.Stream(ctxT(t), "F")
		m, err := s.GetMsg(ctxT(t), 9)
		if err != nil || string(m.Data) != "e-2" || len(m.Header) != 0 {
			t.Fatalf("message 9: %+v %v", m, err)
		}
		if n := ts.js.lookup("F").fast.count(); n != 0 {
			t.Fatalf("%d fast batches open after their commits", n)
		}
	})
}

// TestFastBatchFlowRamp: a batch that shares the stream with another
// starts acking every message and doubles its interval at each ack, up to
// its flow; a ping is answered with the last flow ack.
func TestFastBatchFlowRamp(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true})
	c := newFastClient(t, nc)
	c.pub("f.a", "one", 100, "fail", 1, 0, nil)
	c.want(`one.1.0 {"type":"ack","seq":0,"msgs":100}`)
	c.pub("f.a", "two", 4, "fail", 1, 0, nil)
	c.want(`two.1.0 {"type":"ack","seq":0,"msgs":1}`, `two.1.0 {"type":"ack","seq":1,"msgs":2}`)
	for i := 2; i <= 7; i++ {
		c.pub("f.a", "two", 4, "fail", i, 1, nil)
	}
	c.want(`two.3.1 {"type":"ack","seq":3,"msgs":4}`, `two.7.1 {"type":"ack","seq":7,"msgs":4}`)
	c.pub("f.a", "two", 4, "fail", 7, 4, nil)
	c.want(`two.7.4 {"type":"ack","seq":7,"msgs":4}`)
	c.none()
}

// TestFastBatchGaps: with gap "fail" a missing message is reported and
// ends the batch with what was stored before it (later messages are of an
// unknown batch); with gap "ok" the batch goes on past the gap, and a ping
// ahead of the last message is a gap too.
func TestFastBatchGaps(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true})
	c := newFastClient(t, nc)

	c.pub("f.a", "g", 10, "fail", 1, 0, nil)
	c.pub("f.a", "g", 10, "fail", 3, 1, nil)
	c.want(`g.1.0 {"type":"ack","seq":0,"msgs":10}`,
		`g.3.1 {"type":"gap","last_seq":2,"seq":3}`,
		`g.3.1 {"stream":"F","seq":1,"batch":"g","count":1}`)
	// Once the PubAck is out the batch is gone. (Before, while the
	// message before the gap is being stored, a message is ignored: its
	// publisher is to wait for the PubAck.)
	c.pub("f.a", "g", 10, "fail", 4, 1, nil)
	c.want(`g.4.1 {"error":{"code":400,"err_code":10208,"description":"batch publish ID unknown"},"stream":"F","seq":0}`)

	c.pub("f.a", "o", 10, "ok", 1, 0, nil)
	c.pub("f.a", "o", 10, "ok", 3, 1, nil)
	c.pub("f.a", "o", 10, "ok", 5, 4, nil)
	c.pub("f.a", "o", 10, "ok", 6, 2, nil)
	c.want(`o.1.0 {"type":"ack","seq":0,"msgs":10}`,
		`o.3.1 {"type":"gap","last_seq":2,"seq":3}`,
		`o.5.4 {"type":"gap","last_seq":4,"seq":6}`,
		`o.5.4 {"type":"ack","seq":0,"msgs":10}`,
		`o.6.2 {"stream":"F","seq":4,"batch":"o","count":6}`)
	c.none()
	if n := batchStreamMsgs(t, js, "F"); n != 4 {
		t.Fatalf("stream holds %d messages, want 4", n)
	}
}

// TestFastBatchErrors: the refusals of nats-server, as a plain error
// PubAck before a batch exists or for its first message, as an "err"
// report inside it (gap "fail" then ends the batch, gap "ok" goes on);
// a message over max_msg_size is refused like any other.
func TestFastBatchErrors(t *testing.T) {
	cfg := fastSync()
	cfg.staged.fastPerStream = 2
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, _ := njs.New(nc)
	fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true, MaxMsgSize: 90})
	fastStream(t, js, njs.StreamConfig{Name: "N", Subjects: []string{"n.>"}})
	c := newFastClient(t, nc)
	refused := func(code int, errCode api.ErrCode, stream string) string {
		return fmt.Sprintf(`{"error":{"code":%d,"err_code":%d,"description":%q},"stream":%q,"seq":0}`, code, errCode, api.NewError(errCode).Description, stream)
	}

	c.pub("n.a", "d", 10, "fail", 1, 0, nil)
	c.want("d.1.0 " + refused(400, api.ErrBatchPublishDisabled, "N"))
	c.pub("f.a", "p", 10, "fail", 2, 0, nil) // a start must be message 1
	c.want("p.2.0 " + refused(400, api.ErrBatchPublishInvalidPattern, "F"))
	c.pub("f.a", "p", 10, "sometimes", 1, 0, nil)
	c.want("p.1.0 " + refused(400, api.ErrBatchPublishInvalidPattern, "F"))
	c.pub("f.a", "u", 10, "fail", 2, 1, nil)
	c.want("u.2.1 " + refused(400, api.ErrBatchPublishUnknownBatchID, "F"))
	long := "x0123456789012345678901234567890123456789012345678901234567890123"
	c.pub("f.a", long, 10, "fail", 1, 0, nil)
	c.want(long + ".1.0 " + refused(400, api.ErrBatchPublishInvalidBatchID, "F"))
	lvl := nats.Header{}
	lvl.Set("Nats-Required-Api-Level", "99")
	c.pub("f.a", "lv", 10, "fail", 1, 0, lvl)
	c.want("lv.1.0 " + `{"error":{"code":412,"err_code":10185,"description":"JetStream minimum api level required"},"stream":"F","seq":0}`)

	wrong := nats.Header{}
	wrong.Set("Nats-Expected-Last-Sequence", "7")
	c.pub("f.a", "x", 10, "fail", 1, 0, nil)
	c.pub("f.a", "x", 10, "fail", 2, 1, wrong)
	c.want(`x.1.0 {"type":"ack","seq":0,"msgs":10}`,
		`x.2.1 {"type":"err","seq":2,"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 1"}}`,
		`x.2.1 {"stream":"F","seq":1,"batch":"x","count":1}`)
	c.pub("f.a", "x", 10, "fail", 3, 1, nil)
	c.want("x.3.1 " + refused(400, api.ErrBatchPublishUnknownBatchID, "F"))

	// Oversize: refused as a plain publish before the batch is looked at,
	// so the batch never sees the message: the next one finds a gap.
	big := nats.NewMsg("f.a")
	big.Data = make([]byte, 100)
	big.Reply = "_FI.big.10.fail.1.0.$FI"
	if err := nc.PublishMsg(big); err != nil {
		t.Fatal(err)
	}
	c.want("big.1.0 " + refused(400, api.ErrMessageExceedsMaximum, "F"))
	want := map[string][]string{
		"ok": {`yok.1.0 {"type":"ack","seq":0,"msgs":10}`,
			"yok.2.1 " + refused(400, api.ErrMessageExceedsMaximum, "F"),
			`yok.3.2 {"type":"gap","last_seq":2,"seq":3}`,
			`yok.3.2 {"stream":"F","seq":3,"batch":"yok","count":3}`},
		"fail": {`yfail.1.0 {"type":"ack","seq":0,"msgs":10}`,
			"yfail.2.1 " + refused(400, api.ErrMessageExceedsMaximum, "F"),
			`yfail.3.2 {"type":"gap","last_seq":2,"seq":3}`,
			`yfail.3.2 {"stream":"F","seq":4,"batch":"yfail","count":1}`},
	}
	for _, gap := range []string{"ok", "fail"} {
		id := "y" + gap
		c.pub("f.a", id, 10, gap, 1, 0, nil)
		big.Reply = "_FI." + id + ".10." + gap + ".2.1.$FI"
		if err := nc.PublishMsg(big); err != nil {
			t.Fatal(err)
		}
		c.pub("f.a", id, 10, gap, 3, 2, nil)
		c.want(want[gap]...)
	}

	// An error inside a gap "ok" batch is reported and the batch goes on.
	c.pub("f.a", "w", 10, "ok", 1, 0, nil)
	c.pub("f.a", "w", 10, "ok", 2, 1, wrong)
	c.pub("f.a", "w", 10, "ok", 3, 2, nil)
	c.want(`w.1.0 {"type":"ack","seq":0,"msgs":10}`,
		`w.2.1 {"type":"err","seq":2,"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"}}`,
		`w.3.2 {"stream":"F","seq":6,"batch":"w","count":3}`)

	// Bounds: two open batches on the stream, a third is refused.
	c.pub("f.a", "b1", 10, "fail", 1, 0, nil)
	c.want(`b1.1.0 {"type":"ack","seq":0,"msgs":10}`)
	c.pub("f.a", "b2", 10, "fail", 1, 0, nil)
	c.want(`b2.1.0 {"type":"ack","seq":0,"msgs":1}`, `b2.1.0 {"type":"ack","seq":1,"msgs":2}`)
	c.pub("f.a", "b3", 10, "fail", 1, 0, nil)
	c.want("b3.1.0 " + refused(429, api.ErrBatchPublishTooManyInflight, "F"))

	// A mirror cannot take fast batches (10209).
	var cr api.StreamCreateResponse
	requestJSON(t, nc, api.SubjStreamCreate+"M", `{"name":"M","mirror":{"name":"F"},"allow_batched":true}`, &cr)
	if cr.Error == nil || cr.Error.ErrCode != api.ErrMirrorWithBatchPublish || cr.Error.Description != "stream mirrors can not also use batch publishing" {
		t.Fatalf("mirror with allow_batched: %+v", cr.Error)
	}

	// Turning allow_batched off ends the open batches.
	if _, err := js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, MaxMsgSize: 90}); err != nil {
		t.Fatal(err)
	}
	if n := ts.js.lookup("F").fast.count(); n != 0 {
		t.Fatalf("%d fast batches open after allow_batched was turned off", n)
	}
}

// TestFastBatchAbandoned: batches whose client goes away are dropped after
// the idle wait: the stream's and the process's counts come back down, and
// a late message is of an unknown batch.
func TestFastBatchAbandoned(t *testing.T) {
	cfg := fastSync()
	cfg.waits.batchIdle = 200 * time.Millisecond
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, _ := njs.New(nc)
	fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true})
	before := fastBatchesTotal.Load()
	gone := ts.connect()
	c := newFastClient(t, gone)
	for i := range 20 {
		c.pub("f.a", fmt.Sprintf("a%d", i), 10, "fail", 1, 0, nil)
	}
	if err := gone.Flush(); err != nil {
		t.Fatal(err)
	}
	st := ts.js.lookup("F")
	eventually(t, "20 batches open", func() bool { return st.fast.count() == 20 })
	gone.Close()
	eventually(t, "abandoned batches dropped", func() bool {
		return st.fast.count() == 0 && fastBatchesTotal.Load() == before
	})
	c = newFastClient(t, nc)
	c.pub("f.a", "a1", 10, "fail", 2, 1, nil)
	var resp api.PubAckResponse
	_, body := c.next()
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Error == nil || resp.Error.ErrCode != api.ErrBatchPublishUnknownBatchID {
		t.Fatalf("late message: %s", body)
	}
	if n := batchStreamMsgs(t, js, "F"); n != 20 {
		t.Fatalf("stream holds %d messages, want the 20 first messages", n)
	}
}

// TestParseFastReply: the reply subject patterns nats-server accepts and
// refuses, read from the right so a prefix may hold dots.
func TestParseFastReply(t *testing.T) {
	for _, c := range []struct {
		reply       string
		fast, valid bool
		want        fastRef
	}{
		{"_INBOX.abc", false, false, fastRef{}},
		{".$FI", false, false, fastRef{}},
		{"a.id.5.fail.1.0.$FI", true, true, fastRef{id: "id", seq: 1, flow: 5, op: fastStart}},
		{"a.b.c.id.0.ok.7.1.$FI", true, true, fastRef{id: "id", seq: 7, flow: 10, gapOK: true, op: fastAppend}},
		{"a.id.99999.fail.3.2.$FI", true, true, fastRef{id: "id", seq: 3, flow: 65535, op: fastCommit}},
		{"a.id.-4.fail.3.3.$FI", true, true, fastRef{id: "id", seq: 3, flow: 10, op: fastCommitEOB}},
		{"a.id.5.fail.9.4.$FI", true, true, fastRef{id: "id", seq: 9, flow: 5, op: fastPing}},
		{"a.id.5.fail.2.0.$FI", true, false, fastRef{}},                    // a start is message 1
		{"a.id.5.fail.1.1.$FI", true, false, fastRef{}},                    // an append is not
		{"a.id.5.fail.1.3.$FI", true, false, fastRef{}},                    // an EOB ending nothing
		{"a.id.5.fail.1.5.$FI", true, false, fastRef{}},                    // no op 5
		{"a.id.5.fail.0.2.$FI", true, false, fastRef{}},                    // no message 0
		{"a.id.5.fail.18446744073709551615.1.$FI", true, false, fastRef{}}, // max uint64
		{"a.id.5.maybe.2.1.$FI", true, false, fastRef{}},
		{"id.5.fail.2.1.$FI", true, false, fastRef{}}, // no prefix token
		{"a.id.5.fail.x.1.$FI", true, false, fastRef{}},
	} {
		ref, valid, fast := parseFastReply(c.reply)
		if fast != c.fast || valid != c.valid || (valid && ref != c.want) {
			t.Errorf("%q: fast %v valid %v %+v, want %v %v %+v", c.reply, fast, valid, ref, c.fast, c.valid, c.want)
		}
	}
}

// FuzzParseFastReply: any reply subject parses without a panic, and a
// valid one names a batch sequence of at least 1 and a flow of at least 1.
func FuzzParseFastReply(f *testing.F) {
	for _, s := range []string{"a.id.5.fail.1.0.$FI", "x.$FI", ".....$FI", "a.b.c.d.e.f.$FI", "a.id.0.ok.2.1.$FI"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		ref, valid, fast := parseFastReply(reply)
		if valid && (!fast || ref.seq == 0 || ref.flow == 0 || ref.op > fastPing) {
			t.Fatalf("%q: %+v", reply, ref)
		}
	})
}

// TestFastBatchProcessBound: the open batches of every stream count
// against the process's bound (10211 past it), and a finished batch gives
// its room back.
func TestFastBatchProcessBound(t *testing.T) {
	cfg := fastSync()
	cfg.staged.fastTotal = int(fastBatchesTotal.Load()) + 2
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, _ := njs.New(nc)
	fastStream(t, js, njs.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true})
	fastStream(t, js, njs.StreamConfig{Name: "G", Subjects: []string{"g.>"}, AllowBatchPublish: true})
	c := newFastClient(t, nc)
	c.pub("f.a", "f1", 10, "fail", 1, 0, nil)
	c.want(`f1.1.0 {"type":"ack","seq":0,"msgs":10}`)
	c.pub("g.a", "g1", 10, "fail", 1, 0, nil)
	c.want(`g1.1.0 {"type":"ack","seq":0,"msgs":10}`)
	c.pub("g.a", "g2", 10, "fail", 1, 0, nil)
	c.want(`g2.1.0 {"error":{"code":429,"err_code":10211,"description":"batch publish too many inflight"},"stream":"G","seq":0}`)
	c.pub("f.a", "f1", 10, "fail", 2, 3, nil)
	c.want(`f1.2.3 {"stream":"F","seq":1,"batch":"f1","count":1}`)
	c.pub("g.a", "g2", 10, "fail", 1, 0, nil)
	c.want(`g2.1.0 {"type":"ack","seq":0,"msgs":1}`, `g2.1.0 {"type":"ack","seq":1,"msgs":2}`)
}
