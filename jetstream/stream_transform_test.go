package jetstream

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestStreamSubjectTransform: messages are stored under the transformed
// subject (wildcard tokens and $N), consumers see that subject, the config
// survives a restart, and an update can add a transform.
func TestStreamSubjectTransform(t *testing.T) {
	for _, st := range storages {
		t.Run(st.name, func(t *testing.T) {
			ts := startServer(t, fastSync())
			js, err := njs.New(ts.connect())
			if err != nil {
				t.Fatal(err)
			}
			cfg := njs.StreamConfig{Name: "T", Subjects: []string{"orders.*.*"}, Storage: storageOf(st.typ),
				SubjectTransform: &njs.SubjectTransformConfig{Source: "orders.*.*", Destination: "stored.{{wildcard(2)}}.$1"}}
			s, err := js.CreateStream(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CachedInfo().Config.SubjectTransform; got == nil || got.Destination != "stored.{{wildcard(2)}}.$1" {
				t.Fatalf("config transform %+v", got)
			}
			ack, err := js.Publish(ctxT(t), "orders.eu.42", []byte("one"))
			if err != nil || ack.Sequence != 1 {
				t.Fatalf("publish: %+v %v", ack, err)
			}
			m, err := s.GetMsg(ctxT(t), 1)
			if err != nil || m.Subject != "stored.42.eu" || string(m.Data) != "one" {
				t.Fatalf("stored: %+v %v", m, err)
			}
			// A consumer filters on the stored subject.
			c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", FilterSubject: "stored.42.*"})
			if err != nil {
				t.Fatal(err)
			}
			msgs := fetchAll(t, c, 1, 5*time.Second)
			if len(msgs) != 1 || msgs[0].Subject() != "stored.42.eu" {
				t.Fatalf("consumer got %d messages", len(msgs))
			}
			// Expected-last-subject-sequence sees the stored subject too.
			pm := nats.NewMsg("orders.eu.42")
			pm.Header.Set("Nats-Expected-Last-Subject-Sequence", "1")
			if _, err := js.PublishMsg(ctxT(t), pm); err != nil {
				t.Fatalf("expected last subject sequence on the stored subject: %v", err)
			}

			if st.typ == api.FileStorage {
				ts = ts.restart()
				js, err = njs.New(ts.connect())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := js.Publish(ctxT(t), "orders.us.7", nil); err != nil {
					t.Fatal(err)
				}
				s, err = js.Stream(ctxT(t), "T")
				if err != nil {
					t.Fatal(err)
				}
				if m, err := s.GetMsg(ctxT(t), 3); err != nil || m.Subject != "stored.7.us" {
					t.Fatalf("after restart: %+v %v", m, err)
				}
			}

			// Update: add a transform to a plain stream.
			p, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "P", Subjects: []string{"p.>"}, Storage: storageOf(st.typ)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctxT(t), "p.a", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "P", Subjects: []string{"p.>"}, Storage: storageOf(st.typ),
				SubjectTransform: &njs.SubjectTransformConfig{Source: "p.>", Destination: "q.>"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctxT(t), "p.a.b", nil); err != nil {
				t.Fatal(err)
			}
			for seq, want := range map[uint64]string{1: "p.a", 2: "q.a.b"} {
				if m, err := p.GetMsg(ctxT(t), seq); err != nil || m.Subject != want {
					t.Errorf("P %d: %+v %v, want %s", seq, m, err, want)
				}
			}
		})
	}
}

// TestStreamTransformConfigErrors: invalid transforms and republish
// mappings are refused with nats-server's codes and texts.
func TestStreamTransformConfigErrors(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	for _, c := range []struct {
		body string
		code api.ErrCode
		desc string
	}{
		{`{"name":"E","subjects":["a.*"],"subject_transform":{"src":"a..b","dest":"x"}}`,
			api.ErrStreamTransformSource, "stream transform source: invalid subject a..b"},
		{`{"name":"E","subjects":["a.*"],"subject_transform":{"src":"a.*","dest":"b.$2"}}`,
			api.ErrStreamTransformDest, "stream transform: invalid mapping destination: wildcard index out of range in $2: [2]"},
		{`{"name":"E","subjects":["a.*"],"subject_transform":{"src":"a.*","dest":"b.{{nope(1)}}"}}`,
			api.ErrStreamTransformDest, "stream transform: invalid mapping destination: unknown function in {{nope(1)}}"},
		{`{"name":"E","subjects":["a.*"],"subject_transform":{"src":"a.*","dest":"b.*"}}`,
			api.ErrStreamTransformDest, "stream transform: invalid subject"},
		{`{"name":"E","subjects":["a.*"],"republish":{"src":"a.*","dest":"a.>"}}`,
			api.ErrStreamInvalidConfig, "stream configuration for republish destination forms a cycle"},
		{`{"name":"E","subjects":["a.*"],"republish":{"dest":">"}}`,
			api.ErrStreamInvalidConfig, "stream configuration for republish destination forms a cycle"},
		{`{"name":"E","subjects":["a.*"],"republish":{"src":"a.*","dest":"r.$3"}}`,
			api.ErrStreamInvalidConfig, "stream configuration for republish with transform from 'a.*' to 'r.$3' not valid"},
	} {
		var resp api.StreamCreateResponse
		requestJSON(t, nc, api.SubjStreamCreate+"E", c.body, &resp)
		if resp.Error == nil || resp.Error.ErrCode != c.code || resp.Error.Description != c.desc {
			t.Errorf("%s: %+v, want %d %q", c.body, resp.Error, c.code, c.desc)
		}
	}
	var names api.StreamNamesResponse
	requestJSON(t, nc, api.SubjStreamNames, ``, &names)
	if len(names.Streams) != 0 {
		t.Fatalf("refused configs created streams: %v", names.Streams)
	}
}

// republished collects messages on subj.
func republished(t *testing.T, nc *nats.Conn, subj string) *nats.Subscription {
	t.Helper()
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

func nextMsg(t *testing.T, sub *nats.Subscription) *nats.Msg {
	t.Helper()
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no message on %s: %v", sub.Subject, err)
	}
	return m
}

// TestStreamRepublish: every stored message matching the source goes to the
// mapped subject with the stream's headers, in order, with the previous
// sequence of its subject; headers_only sends the size instead of the body;
// the config survives a restart.
func TestStreamRepublish(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "R", Subjects: []string{"r.*"},
		RePublish: &njs.RePublish{Source: "r.*", Destination: "rp.$1"}}); err != nil {
		t.Fatal(err)
	}
	sub := republished(t, nc, "rp.>")
	for i, subj := range []string{"r.a", "r.a", "r.b"} {
		m := nats.NewMsg(subj)
		m.Data = []byte("body-" + strconv.Itoa(i+1))
		m.Header.Set("X-Own", "v")
		if _, err := js.PublishMsg(ctxT(t), m); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []struct{ subj, orig, last string }{{"rp.a", "r.a", "0"}, {"rp.a", "r.a", "1"}, {"rp.b", "r.b", "0"}} {
		m := nextMsg(t, sub)
		seq := strconv.Itoa(i + 1)
		h := m.Header
		if m.Subject != want.subj || string(m.Data) != "body-"+seq || h.Get("X-Own") != "v" ||
			h.Get("Nats-Stream") != "R" || h.Get("Nats-Subject") != want.orig || h.Get("Nats-Sequence") != seq ||
			h.Get("Nats-Last-Sequence") != want.last || h.Get("Nats-Msg-Size") != "" {
			t.Errorf("republished %d: %s %v %q", i+1, m.Subject, h, m.Data)
		}
		if _, err := time.Parse(time.RFC3339Nano, h.Get("Nats-Time-Stamp")); err != nil {
			t.Errorf("republished %d: time stamp %q", i+1, h.Get("Nats-Time-Stamp"))
		}
	}

	// headers_only, and the implicit form: ">" to ">" on a stream whose one
	// subject is the transform's source republishes the stored subjects.
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "H", Subjects: []string{"in.>"},
		SubjectTransform: &njs.SubjectTransformConfig{Source: "in.>", Destination: "out.>"},
		RePublish:        &njs.RePublish{Destination: ">", HeadersOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if rp := s.CachedInfo().Config.RePublish; rp == nil || rp.Source != "out.>" || rp.Destination != "out.>" || !rp.HeadersOnly {
		t.Fatalf("implicit republish config: %+v", rp)
	}
	hsub := republished(t, nc, "out.>")
	check := func(seq int, body string) {
		t.Helper()
		m := nextMsg(t, hsub)
		if m.Subject != "out.x.y" || len(m.Data) != 0 || m.Header.Get("Nats-Msg-Size") != strconv.Itoa(len(body)) ||
			m.Header.Get("Nats-Subject") != "out.x.y" || m.Header.Get("Nats-Sequence") != strconv.Itoa(seq) {
			t.Errorf("headers only %d: %s %v %q", seq, m.Subject, m.Header, m.Data)
		}
	}
	if _, err := js.Publish(ctxT(t), "in.x.y", []byte("twelve bytes")); err != nil {
		t.Fatal(err)
	}
	check(1, "twelve bytes")

	// After a restart both streams still republish.
	ts = ts.restart()
	nc = ts.connect()
	js, err = njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	sub, hsub = republished(t, nc, "rp.>"), republished(t, nc, "out.>")
	if _, err := js.Publish(ctxT(t), "r.a", []byte("body-4")); err != nil {
		t.Fatal(err)
	}
	if m := nextMsg(t, sub); m.Subject != "rp.a" || m.Header.Get("Nats-Sequence") != "4" || m.Header.Get("Nats-Last-Sequence") != "2" {
		t.Errorf("after restart: %s %v", m.Subject, m.Header)
	}
	if _, err := js.Publish(ctxT(t), "in.x.y", []byte("")); err != nil {
		t.Fatal(err)
	}
	check(2, "")

	// Removing republish stops it.
	if _, err := js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "R", Subjects: []string{"r.*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctxT(t), "r.a", nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The PubAck came after the store, and republish precedes the PubAck
	// on the same connection's delivery path; nothing may be queued now.
	if n, _, _ := sub.Pending(); n != 0 {
		m, _ := sub.NextMsg(0)
		t.Errorf("republished after removal: %v", m)
	}
}

// TestCLIStreamTransformRepublish: the pinned nats CLI creates a stream
// with a subject transform and republish and shows both.
func TestCLIStreamTransformRepublish(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	c.ok(args("stream", "add", "CT", "--subjects", "ct.*", "--storage", "file",
		"--transform-source", "ct.*", "--transform-destination", "ctx.$1",
		"--republish-source", "ctx.*", "--republish-destination", "ctrp.{{wildcard(1)}}", "--republish-headers",
		"--defaults"), "Stream CT was created")
	out := c.ok(args("stream", "info", "CT", "--json"), `"subject_transform"`, `"republish"`)
	for _, want := range []string{`"src": "ct.*"`, `"dest": "ctx.$1"`, `"dest": "ctrp.{{wildcard(1)}}"`, `"headers_only": true`} {
		if !strings.Contains(out, want) {
			t.Errorf("stream info lacks %s:\n%s", want, out)
		}
	}
	nc := ts.connect()
	sub := republished(t, nc, "ctrp.*")
	c.ok(args("pub", "ct.k", "payload"), "Published")
	if m := nextMsg(t, sub); m.Subject != "ctrp.k" || m.Header.Get("Nats-Subject") != "ctx.k" || m.Header.Get("Nats-Msg-Size") != "7" {
		t.Errorf("republished: %s %v", m.Subject, m.Header)
	}
	c.ok(args("stream", "get", "CT", "1"), "ctx.k")
	c.fails(args("stream", "add", "BAD", "--subjects", "bad.*", "--transform-source", "bad.*",
		"--transform-destination", "b.$2", "--defaults"), "wildcard index out of range")
}
