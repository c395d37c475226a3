package jetstream

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

// statusOf returns the status code and description nats.go parsed from a
// status message's "NATS/1.0 <code> <description>" line.
func statusOf(m *nats.Msg) (code, desc string) {
	return m.Header.Get("Status"), m.Header.Get("Description")
}

// TestConsumerWalkthroughWire replays the walkthrough's consumer API traffic
// with the CLI's captured requests and compares every response with
// nats-server's: same fields in the same order, and the values that matter.
func TestConsumerWalkthroughWire(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	req := capturedBody(t, "req", "02-", api.SubjStreamCreate)
	request(t, nc, api.SubjStreamCreate+walkStream, string(req))
	for _, b := range append(walkBodies, "Python Error Handling") {
		if err := nc.Publish("hello.python", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "6 messages", func() bool {
		var info api.StreamInfoResponse
		requestJSON(t, nc, api.SubjStreamInfo+walkStream, "", &info)
		return info.State.Msgs == 6
	})

	// 14: info of a missing consumer, then create.
	got := request(t, nc, api.SubjConsumerInfo+walkStream+".pull_consumer", "").Data
	if want := capturedBody(t, "resp", "14-", api.SubjConsumerInfo, `"error"`); !bytes.Equal(got, want) {
		t.Errorf("missing consumer\n got %s\nwant %s", got, want)
	}
	got = request(t, nc, api.SubjConsumerCreate+walkStream+".pull_consumer",
		string(capturedBody(t, "req", "14-", api.SubjConsumerCreate))).Data
	want := capturedBody(t, "resp", "14-", api.SubjConsumerCreate)
	sameShape(t, "pull create", got, want)
	sameConsumerJSON(t, ts, "pull create", got, want)

	// 15: names and list.
	got = request(t, nc, api.SubjConsumerNames+walkStream, `{"offset":0}`).Data
	if want := capturedBody(t, "resp", "15-", api.SubjConsumerNames); !bytes.Equal(got, want) {
		t.Errorf("names\n got %s\nwant %s", got, want)
	}
	got = request(t, nc, api.SubjConsumerList+walkStream, `{"offset":0}`).Data
	sameShape(t, "list", got, capturedBody(t, "resp", "15-", api.SubjConsumerList))

	// 16: next, one message per request, acked.
	ackRe := regexp.MustCompile(`^\$JS\.ACK\.python_articles\.pull_consumer\.1\.(\d+)\.(\d+)\.\d{19}\.(\d+)$`)
	for i := 1; i <= 6; i++ {
		m := request(t, nc, api.SubjConsumerNext+walkStream+".pull_consumer", `{"expires":5000000000,"batch":1}`)
		sm := ackRe.FindStringSubmatch(m.Reply)
		if m.Subject != "hello.python" || sm == nil || sm[1] != sm[2] || sm[1] != string(rune('0'+i)) || sm[3] != string(rune('0'+6-i)) {
			t.Fatalf("next %d: subject %s reply %s", i, m.Subject, m.Reply)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	got = request(t, nc, api.SubjConsumerInfo+walkStream+".pull_consumer", "").Data
	var ci api.ConsumerInfoResponse
	json.Unmarshal(got, &ci)
	if ci.Delivered.Stream != 6 || ci.AckFloor.Stream != 6 || ci.NumAckPending != 0 || ci.NumPending != 0 ||
		ci.Delivered.Last == nil || ci.AckFloor.Last == nil {
		t.Errorf("info after next: %s", got)
	}

	// 19-20: push consumer, created without interest, then info with it.
	got = request(t, nc, api.SubjConsumerCreate+walkStream+".push_consumer",
		string(capturedBody(t, "req", "19-", api.SubjConsumerCreate))).Data
	want = capturedBody(t, "resp", "19-", api.SubjConsumerCreate)
	sameShape(t, "push create", got, want)
	sameConsumerJSON(t, ts, "push create", got, want)

	// 21: an ephemeral push consumer with a subscriber.
	sub, _ := nc.SubscribeSync("hello.others")
	nc.Flush()
	got = request(t, nc, api.SubjConsumerCreate+walkStream+".m0DnjYmP",
		string(capturedBody(t, "req", "21-", api.SubjConsumerCreate))).Data
	want = capturedBody(t, "resp", "21-", api.SubjConsumerCreate)
	sameShape(t, "ephemeral create", got, want)
	sameConsumerJSON(t, ts, "ephemeral create", got, want)
	for i := 0; i < 6; i++ {
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("ephemeral push %d: %v", i, err)
		}
	}
	var list api.ConsumerListResponse
	requestJSON(t, nc, api.SubjConsumerList+walkStream, `{"offset":0}`, &list)
	if list.Total != 3 || len(list.Consumers) != 3 || list.Consumers[0].Name != "m0DnjYmP" || !list.Consumers[0].PushBound {
		t.Errorf("list of three: %+v", list)
	}

	// 11: the stream pager's create and delete.
	pager := capturedBody(t, "req", "11-", api.SubjConsumerCreate)
	got = request(t, nc, api.SubjConsumerCreate+walkStream+".stream_pager_127471796200119327592898.>", string(pager)).Data
	want = capturedBody(t, "resp", "11-", api.SubjConsumerCreate)
	sameShape(t, "pager create", got, want)
	sameConsumerJSON(t, ts, "pager create", got, want)
	got = request(t, nc, api.SubjConsumerDelete+walkStream+".stream_pager_127471796200119327592898", "").Data
	if want := capturedBody(t, "resp", "11-", api.SubjConsumerDelete); !bytes.Equal(got, want) {
		t.Errorf("delete\n got %s\nwant %s", got, want)
	}

	// Status messages: no_wait, max_batch, expiry.
	m := request(t, nc, api.SubjConsumerNext+walkStream+".pull_consumer", `{"batch":1,"no_wait":true}`)
	if c, d := statusOf(m); c != "404" || d != "No Messages" {
		t.Errorf("no_wait: %v", m.Header)
	}
	m = request(t, nc, api.SubjConsumerNext+walkStream+".pull_consumer", `{"batch":2,"expires":200000000}`)
	if c, d := statusOf(m); c != "408" || d != "Request Timeout" ||
		m.Header.Get("Nats-Pending-Messages") != "2" || m.Header.Get("Nats-Pending-Bytes") != "0" {
		t.Errorf("expiry: %v", m.Header)
	}
	request(t, nc, api.SubjConsumerCreate+walkStream+".x_pull", string(capturedBody(t, "req", "X5-", api.SubjConsumerCreate)))
	m = request(t, nc, api.SubjConsumerNext+walkStream+".x_pull", `{"batch":5}`)
	if c, d := statusOf(m); c != "409" || d != "Exceeded MaxRequestBatch of 2" {
		t.Errorf("max batch: %v", m.Header)
	}
	// A waiting pull hears 409 Consumer Deleted.
	inbox := nats.NewInbox()
	wsub, _ := nc.SubscribeSync(inbox)
	nc.PublishRequest(api.SubjConsumerNext+walkStream+".x_pull", inbox, []byte(`{"batch":1,"expires":30000000000}`))
	nc.Flush()
	eventually(t, "waiting pull", func() bool {
		var ci api.ConsumerInfoResponse
		requestJSON(t, nc, api.SubjConsumerInfo+walkStream+".x_pull", "", &ci)
		return ci.ConsumerInfo != nil && ci.NumWaiting == 1
	})
	request(t, nc, api.SubjConsumerDelete+walkStream+".x_pull", "")
	for {
		m, err := wsub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if c, d := statusOf(m); c != "409" || d != "Consumer Deleted" {
			t.Fatalf("waiting pull of a deleted consumer got %v %q", m.Header, m.Data)
		}
		break
	}
}

// sameConsumerJSON compares the "config" objects of two create responses, up to
// the server version and API level.
func sameConsumerJSON(t *testing.T, ts *testServer, what string, got, want []byte) {
	t.Helper()
	var g, w api.ConsumerInfoResponse
	json.Unmarshal(got, &g)
	json.Unmarshal(want, &w)
	if g.ConsumerInfo == nil || w.ConsumerInfo == nil {
		t.Fatalf("%s: no info: %s", what, got)
	}
	if w.Config.Metadata != nil {
		if _, ok := w.Config.Metadata[api.MetaServerVersion]; ok {
			w.Config.Metadata[api.MetaServerVersion] = ts.srv.Version()
		}
		// The capture's nats-server 2.15 is at API level 5; jetwal at its own.
		if _, ok := w.Config.Metadata[api.MetaServerLevel]; ok {
			w.Config.Metadata[api.MetaServerLevel] = strconv.Itoa(api.Level)
		}
	}
	if w.Config.Name != g.Config.Name && w.Config.Durable == "" {
		w.Config.Name = g.Config.Name
	}
	gc, _ := json.Marshal(g.Config)
	wc, _ := json.Marshal(w.Config)
	if !bytes.Equal(gc, wc) {
		t.Errorf("%s config\n got %s\nwant %s", what, gc, wc)
	}
	if g.Delivered != w.Delivered || g.AckFloor != w.AckFloor || g.NumAckPending != w.NumAckPending {
		t.Errorf("%s state: got %+v %+v, want %+v %+v", what, g.Delivered, g.AckFloor, w.Delivered, w.AckFloor)
	}
}

// TestPullHeartbeatTooLarge: a pull request whose idle_heartbeat is more
// than half its expires (or that has no expires) is answered as
// nats-server answers it: 400 "Bad Request - heartbeat value too large",
// checked before the consumer's request limits; the clients raise their
// bad-request error on it.
func TestPullHeartbeatTooLarge(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var r api.StreamCreateResponse
	requestJSON(t, nc, api.SubjStreamCreate+"HB", `{"name":"HB","subjects":["hb"]}`, &r)
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	var cr api.ConsumerInfoResponse
	requestJSON(t, nc, api.SubjConsumerCreate+"HB.P", `{"stream_name":"HB","config":{"name":"P","ack_policy":"explicit","max_batch":1}}`, &cr)
	if cr.Error != nil {
		t.Fatal(cr.Error)
	}
	for _, body := range []string{
		`{"batch":1,"expires":1000000000,"idle_heartbeat":600000000}`,
		`{"batch":5,"expires":1000000000,"idle_heartbeat":600000000}`, // past max_batch too
		`{"batch":1,"idle_heartbeat":1000000000}`,                     // no expires
	} {
		m := request(t, nc, api.SubjConsumerNext+"HB.P", body)
		if c, d := statusOf(m); c != "400" || d != "Bad Request - heartbeat value too large" {
			t.Errorf("%s: %v", body, m.Header)
		}
	}
	// Half of expires is allowed: the request waits and expires.
	m := request(t, nc, api.SubjConsumerNext+"HB.P", `{"batch":1,"expires":400000000,"idle_heartbeat":200000000}`)
	if c, _ := statusOf(m); c != "100" && c != "408" {
		t.Errorf("heartbeat of half the expiry: %v", m.Header)
	}
}
