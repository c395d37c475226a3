package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
)

// The tests in this file pin replies that were compared with nats-server
// v2.15.2 answering the same requests (issue 20): the error or status each
// server sends, through the nats.go jetstream client.

// apiErr returns the nats.go API error inside err, or fails the test.
func apiErr(t *testing.T, err error) *njs.APIError {
	t.Helper()
	var ae *njs.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae
}

func TestCompatReplicasRefused(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	const text = "replicas > 1 not supported in non-clustered mode"
	check := func(what string, err error, code njs.ErrorCode, status int, desc string) {
		t.Helper()
		ae := apiErr(t, err)
		if ae.ErrorCode != code || ae.Code != status || ae.Description != desc {
			t.Errorf("%s: %d %d %q, want %d %d %q", what, ae.Code, ae.ErrorCode, ae.Description, status, code, desc)
		}
	}
	_, err = js.CreateStream(ctxT(t), njs.StreamConfig{Name: "R", Subjects: []string{"r"}, Replicas: 3})
	check("create R3", err, 10074, 500, text)
	// Above 5 the config check refuses first.
	_, err = js.CreateStream(ctxT(t), njs.StreamConfig{Name: "R", Subjects: []string{"r"}, Replicas: 6})
	check("create R6", err, 10052, 500, "maximum replicas is 5")

	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}, Replicas: 3})
	check("update R3", err, 10074, 500, text)
	_, err = js.UpdateStream(ctxT(t), njs.StreamConfig{Name: "NOPE", Subjects: []string{"n"}, Replicas: 3})
	check("update missing stream", err, 10059, 404, "stream not found")

	_, err = s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", Replicas: 3})
	check("consumer R3", err, 10074, 500, text)
	// The consumer's replicas are checked before its stream is looked up.
	_, err = js.CreateOrUpdateConsumer(ctxT(t), "NOPE", njs.ConsumerConfig{Durable: "C", Replicas: 2})
	check("consumer R2 on a missing stream", err, 10074, 500, text)
	if info, err := s.Info(ctxT(t)); err != nil || info.Config.Replicas != 1 || info.State.Consumers != 0 {
		t.Fatalf("stream after refusals: %+v %v", info, err)
	}
}

func TestCompatDirectGetStatuses(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []njs.StreamConfig{
		{Name: "PLAIN", Subjects: []string{"p.*"}},
		{Name: "D", Subjects: []string{"d.*"}, AllowDirect: true, Storage: njs.MemoryStorage},
	} {
		if _, err := js.CreateStream(ctxT(t), cfg); err != nil {
			t.Fatal(err)
		}
	}
	publishN(t, js, "p.a", 0, 1)
	publishN(t, js, "d.a", 0, 1)

	// No responder without allow_direct, nor for a stream that does not exist.
	for _, subj := range []string{api.SubjDirectGet + "PLAIN", api.SubjDirectGet + "PLAIN.p.a", api.SubjDirectGet + "NOPE"} {
		if _, err := nc.Request(subj, []byte(`{"seq":1}`), 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
			t.Errorf("%s: %v, want no responders", subj, err)
		}
	}
	for _, c := range []struct {
		subj, body string
		status     string // "" for a message
		desc       string
	}{
		{"D", ``, "408", "Empty Request"},
		{"D", `{}`, "408", "Empty Request"},
		{"D", `{"no_hdr":true}`, "408", "Empty Request"},
		{"D", ` `, "408", "Malformed Request"},
		{"D", `{"seq":`, "408", "Malformed Request"},
		{"D", `{"seq":1,"last_by_subj":"d.a"}`, "408", "Bad Request"},
		{"D", `{"last_by_subj":"d.a","next_by_subj":"d.a"}`, "408", "Bad Request"},
		{"D", `{"seq":9}`, "404", "Message Not Found"},
		{"D", `{"last_by_subj":"a..b"}`, "404", "Message Not Found"},
		{"D", `{"last_by_subj":"d.zz"}`, "404", "Message Not Found"},
		{"D", `{"seq":1}`, "", ""},
		{"D", `{"next_by_subj":"d.*","seq":1}`, "", ""},
		{"D.d.a", ``, "", ""},
		{"D.d.a", `{"seq":1}`, "408", "Bad Request"},
		{"D.d.a", ` `, "408", "Malformed Request"},
		{"D.d.zz", ``, "404", "Message Not Found"},
	} {
		m, err := nc.Request(api.SubjDirectGet+c.subj, []byte(c.body), 5*time.Second)
		if err != nil {
			t.Errorf("%s %q: %v", c.subj, c.body, err)
			continue
		}
		if got, desc := m.Header.Get("Status"), m.Header.Get("Description"); got != c.status || desc != c.desc {
			t.Errorf("%s %q: status %q %q, want %q %q", c.subj, c.body, got, desc, c.status, c.desc)
		}
		if c.status == "" && (string(m.Data) != "msg-0" || m.Header.Get("Nats-Sequence") != "1") {
			t.Errorf("%s %q: message %v %q", c.subj, c.body, m.Header, m.Data)
		}
	}
	// no_hdr: the bare payload, without even the Nats-* headers.
	m := request(t, nc, api.SubjDirectGet+"D", `{"seq":1,"no_hdr":true}`)
	if len(m.Header) != 0 || string(m.Data) != "msg-0" {
		t.Errorf("no_hdr: %v %q", m.Header, m.Data)
	}
}

func TestCompatDeleteOutOfRange(t *testing.T) {
	forEachStorage(t, func(t *testing.T, ts *testServer, js njs.JetStream, storage njs.StorageType) {
		nc := ts.connect()
		consumerStream(t, js, storage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
		publishN(t, js, "s.a", 0, 3)
		type want struct {
			code njs.ErrorCode
			desc string
		}
		ok := want{}
		gap := want{10043, "sequence 2 not found"}
		eof := want{10057, "stream store EOF"}
		gone := want{10057, "no message found"}
		steps := []struct {
			seq  uint64
			file want
		}{{2, ok}, {2, gap}, {1, ok}, {1, gone}, {4, eof}, {0, gone}, {3, ok}, {3, gone}}
		for _, step := range steps {
			w := step.file
			if storage == njs.MemoryStorage && w.code == 10057 {
				// nats-server's memory store knows no EOF: a plain
				// "not found".
				w = want{10043, ""}
			}
			// nats.go's DeleteMsg flattens the error into its text, so
			// the reply is read as it comes.
			var r api.MsgDeleteResponse
			requestJSON(t, nc, api.SubjMsgDelete+"S", fmt.Sprintf(`{"seq":%d}`, step.seq), &r)
			if w.code == 0 {
				if r.Error != nil || !r.Success {
					t.Fatalf("delete %d: %+v", step.seq, r.Error)
				}
				continue
			}
			if r.Error == nil {
				t.Fatalf("delete %d succeeded, want %d", step.seq, w.code)
			}
			ae := &njs.APIError{Code: r.Error.Code, ErrorCode: njs.ErrorCode(r.Error.ErrCode), Description: r.Error.Description}
			if ae.ErrorCode != w.code || (w.desc != "" && ae.Description != w.desc) {
				t.Errorf("delete %d: %d %q, want %d %q", step.seq, ae.ErrorCode, ae.Description, w.code, w.desc)
			}
			if wantStatus := map[njs.ErrorCode]int{10043: 400, 10057: 500}[w.code]; ae.Code != wantStatus {
				t.Errorf("delete %d: status %d, want %d", step.seq, ae.Code, wantStatus)
			}
		}
	})
}

func TestCompatFilterOutsideStreamSubjects(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "W", Subjects: []string{"w.*"}})
	publishN(t, js, "w.a", 0, 2)
	c, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "X", FilterSubject: "x.y", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("filter x.y on w.*: %v", err)
	}
	if ci := consumerInfo(t, c); ci.NumPending != 0 || ci.Config.FilterSubject != "x.y" {
		t.Fatalf("info: pending %d filter %q", ci.NumPending, ci.Config.FilterSubject)
	}
	if got := fetchAll(t, c, 2, 200*time.Millisecond); len(got) != 0 {
		t.Fatalf("fetched %d messages through a filter that matches none", len(got))
	}
}

func TestCompatAckNoneHasNoResponder(t *testing.T) {
	ts := startServer(t, fastSync())
	js, err := njs.New(ts.connect())
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{Name: "S", Subjects: []string{"s.*"}})
	publishN(t, js, "s.a", 0, 2)
	none, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "NONE", AckPolicy: njs.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := s.CreateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "EXP", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fetchAll(t, none, 1, time.Second)
	if len(msgs) != 1 {
		t.Fatalf("fetched %d", len(msgs))
	}
	if err := msgs[0].DoubleAck(ctxT(t)); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("double ack on ack_policy none: %v, want no responders", err)
	}
	msgs = fetchAll(t, explicit, 1, time.Second)
	if len(msgs) != 1 {
		t.Fatalf("fetched %d", len(msgs))
	}
	if err := msgs[0].DoubleAck(ctxT(t)); err != nil {
		t.Fatalf("double ack on ack_policy explicit: %v", err)
	}
	if ci := consumerInfo(t, explicit); ci.AckFloor.Stream != 1 {
		t.Fatalf("explicit ack floor %d", ci.AckFloor.Stream)
	}
}

// TestCompatRequiredAPILevel: jetwal announces API level 4 and, as
// nats-server, refuses a request whose Nats-Required-Api-Level is higher
// with 412 (10185), or a DIRECT.GET with a 412 status.
func TestCompatRequiredAPILevel(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	if got := nc.ConnectedServerVersion(); got != server.DefaultVersion {
		t.Fatalf("announced version %q", got)
	}
	req := func(subj, level, body string) *nats.Msg {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-Required-Api-Level", level)
		m.Data = []byte(body)
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subj, err)
		}
		return r
	}
	body := `{"name":"S","subjects":["s.*"],"allow_direct":true}`
	for _, level := range []string{"5", "x"} {
		var r api.StreamCreateResponse
		if err := json.Unmarshal(req(api.SubjStreamCreate+"S", level, body).Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != api.TypeStreamCreate || r.Error == nil || r.Error.Code != 412 || r.Error.ErrCode != 10185 ||
			r.Error.Description != "JetStream minimum api level required" {
			t.Fatalf("level %s: %+v %+v", level, r.Response, r.Error)
		}
	}
	var r api.StreamCreateResponse
	if err := json.Unmarshal(req(api.SubjStreamCreate+"S", "4", body).Data, &r); err != nil || r.Error != nil || r.Config.Metadata[api.MetaServerLevel] != "4" {
		t.Fatalf("level 4: %+v %v", r.Error, err)
	}
	nc.Publish("s.a", []byte("x"))
	if m := req(api.SubjDirectGet+"S", "5", `{"seq":1}`); m.Header.Get("Status") != "412" || m.Header.Get("Description") != "Required Api Level" {
		t.Fatalf("direct get at level 5: %v", m.Header)
	}
	// The other operations nats-server checks, in their responses' forms.
	if _, err := nc.Request(api.SubjConsumerCreate+"S.C", []byte(`{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ subj, body, want string }{
		{"$JS.API.STREAM.SNAPSHOT.S", `{"deliver_subject":"_snap.x"}`, `{"type":"io.nats.jetstream.api.v1.stream_snapshot_response","error":{"code":412,"err_code":10185,"description":"JetStream minimum api level required"}}`},
		{"$JS.API.STREAM.RESTORE.R", `{"config":{"name":"R"}}`, `{"type":"io.nats.jetstream.api.v1.stream_restore_response","error":{"code":412,"err_code":10185,"description":"JetStream minimum api level required"},"deliver_subject":""}`},
		{"$JS.API.CONSUMER.PAUSE.S.C", `{}`, `{"type":"io.nats.jetstream.api.v1.consumer_pause_response","error":{"code":412,"err_code":10185,"description":"JetStream minimum api level required"},"paused":false,"pause_until":"0001-01-01T00:00:00Z"}`},
	} {
		if got := string(req(c.subj, "5", c.body).Data); got != c.want {
			t.Fatalf("%s at level 5:\n got  %s\n want %s", c.subj, got, c.want)
		}
	}
	if m := req(api.SubjConsumerNext+"S.C", "5", `{"batch":1,"no_wait":true}`); m.Header.Get("Status") != "412" || m.Header.Get("Description") != "Required Api Level" {
		t.Fatalf("pull request at level 5: %v", m.Header)
	}
	var ai api.AccountInfoResponse
	requestJSON(t, nc, api.SubjAccountInfo, "", &ai)
	if ai.API.Level != 4 {
		t.Fatalf("account info api level %d", ai.API.Level)
	}
}
