package jetstream

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/apiserver"
)

// apiErrorOf decodes the error object of an API reply, failing when the
// reply is not JSON.
func apiErrorOf(t *testing.T, data []byte) *api.ApiError {
	t.Helper()
	var r api.Response
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("reply is not JSON: %q", data)
	}
	return r.Error
}

// TestHardeningPagingOverflow guards the remote crash: an offset near the
// top of int in NAMES and LIST requests wrapped the paging arithmetic and
// panicked the API worker, taking the process down.
func TestHardeningPagingOverflow(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
	request(t, nc, "$JS.API.CONSUMER.CREATE.S.C", `{"stream_name":"S","config":{"name":"C"}}`)
	for _, subj := range []string{"$JS.API.CONSUMER.NAMES.S", "$JS.API.CONSUMER.LIST.S", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST"} {
		for _, off := range []string{"9223372036854775000", "9223372036854775807", "-9223372036854775808", "-1"} {
			m := request(t, nc, subj, `{"offset":`+off+`}`)
			if aerr := apiErrorOf(t, m.Data); aerr != nil {
				t.Fatalf("%s offset %s: error %v", subj, off, aerr)
			}
			var p api.Paged
			json.Unmarshal(m.Data, &p)
			if p.Total != 1 {
				t.Fatalf("%s offset %s: total %d, want 1 (%s)", subj, off, p.Total, m.Data)
			}
		}
	}
	if m := request(t, nc, "$JS.API.INFO", ""); apiErrorOf(t, m.Data) != nil {
		t.Fatalf("server stopped serving: %s", m.Data)
	}
}

// TestHardeningHandlerPanicRecovered: a panic in an API handler costs only
// its request, which gets a 500 error; the same queue serves the next one.
func TestHardeningHandlerPanicRecovered(t *testing.T) {
	ts := startServer(t, Config{})
	ts.js.api.Register("TEST.PANIC", apiserver.Mgmt, func(r *apiserver.Request) { panic("boom") })
	nc := ts.connect()
	m := request(t, nc, "$JS.API.TEST.PANIC", "")
	aerr := apiErrorOf(t, m.Data)
	if aerr == nil || aerr.Code != 500 {
		t.Fatalf("panicking handler answered %s, want a 500 error", m.Data)
	}
	if m := request(t, nc, "$JS.API.STREAM.NAMES", ""); apiErrorOf(t, m.Data) != nil {
		t.Fatalf("management queue stopped serving: %s", m.Data)
	}
}

// TestHardeningUnknownAPIAnswered: an unknown $JS.API operation is answered
// with an error at once, instead of leaving the client to its timeout.
func TestHardeningUnknownAPIAnswered(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	for _, subj := range []string{"$JS.API.NOPE", "$JS.API.STREAM.NOPE.X", "$JS.API.CONSUMER.FROB.S.C"} {
		m := request(t, nc, subj, "{}")
		aerr := apiErrorOf(t, m.Data)
		if aerr == nil || aerr.Code != 400 || !strings.Contains(aerr.Description, "unknown") {
			t.Fatalf("%s answered %s, want a 400 unknown-request error", subj, m.Data)
		}
	}
}

// TestHardeningDirectGetMalformed: a DIRECT.GET whose body is not JSON gets
// nats-server's 408 Malformed Request status.
func TestHardeningDirectGetMalformed(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"],"allow_direct":true}`)
	for _, subj := range []string{"$JS.API.DIRECT.GET.S", "$JS.API.DIRECT.GET.S.s.a"} {
		m := request(t, nc, subj, `{"seq":`)
		if got := m.Header.Get("Status") + " " + m.Header.Get("Description"); got != "408 Malformed Request" {
			t.Fatalf("%s with a malformed body: status %q, want 408 Malformed Request", subj, got)
		}
	}
}

// TestHardeningHugeLimitsSaturate: the account's reserved storage is a sum
// of the streams' max_bytes; huge values saturate instead of wrapping.
func TestHardeningHugeLimitsSaturate(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	for _, name := range []string{"A", "B", "C"} {
		m := request(t, nc, "$JS.API.STREAM.CREATE."+name, `{"name":"`+name+`","subjects":["`+strings.ToLower(name)+`.>"],"max_bytes":9223372036854775807}`)
		if aerr := apiErrorOf(t, m.Data); aerr != nil {
			t.Fatalf("create %s: %v", name, aerr)
		}
	}
	m := request(t, nc, "$JS.API.INFO", "")
	var info api.AccountInfoResponse
	if err := json.Unmarshal(m.Data, &info); err != nil {
		t.Fatal(err)
	}
	if info.ReservedStore < 1<<63 {
		t.Fatalf("reserved_storage %d wrapped below one stream's max_bytes", info.ReservedStore)
	}
}

// TestHardeningPullNumbersSaturate: pull requests with the largest expires
// and heartbeat values are refused or served, never wrapped into the past.
func TestHardeningPullNumbersSaturate(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`)
	request(t, nc, "$JS.API.CONSUMER.CREATE.S.C", `{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}`)
	nc.Publish("s.a", []byte("x"))
	for _, body := range []string{
		`{"batch":1,"expires":9223372036854775807}`,
		`{"batch":1,"expires":9223372036854775807,"idle_heartbeat":9223372036854775807}`,
		`{"batch":1,"expires":9223372036854775000,"idle_heartbeat":4611686018427387904}`,
	} {
		m := request(t, nc, "$JS.API.CONSUMER.MSG.NEXT.S.C", body)
		if st := m.Header.Get("Status"); st != "" && st != "409" && st != "400" {
			t.Fatalf("%s: status %q %q", body, st, m.Header.Get("Description"))
		}
		if st := m.Header.Get("Status"); st == "" && string(m.Data) != "x" {
			t.Fatalf("%s: got %q, want the message", body, m.Data)
		}
		if st := m.Header.Get("Status"); st == "" {
			m.Nak()
		}
	}
}

// TestHardeningLongNamesAndNoPaths: stream names up to the 255-byte limit
// work end to end (create, publish, delete, restart); longer ones get
// nats-server's error; and no error reply ever holds the store's path.
func TestHardeningLongNamesAndNoPaths(t *testing.T) {
	ts := startServer(t, Config{})
	nc := ts.connect()
	for _, n := range []int{250, 251, 253, 255} {
		name := strings.Repeat("N", n-3) + strconv.Itoa(n)
		m := request(t, nc, "$JS.API.STREAM.CREATE."+name, `{"name":"`+name+`","subjects":["long.`+strconv.Itoa(n)+`"]}`)
		if aerr := apiErrorOf(t, m.Data); aerr != nil {
			t.Fatalf("%d-byte name refused: %v", n, aerr)
		}
		if m, err := nc.Request("long."+strconv.Itoa(n), []byte("x"), 5e9); err != nil || apiErrorOf(t, m.Data) != nil {
			t.Fatalf("%d-byte name: publish: %v", n, err)
		}
	}
	name := strings.Repeat("N", 256)
	m := request(t, nc, "$JS.API.STREAM.CREATE."+name, `{"name":"`+name+`","subjects":["long.256"]}`)
	// nats-server answers this with its invalid-config error (10052, code
	// 500); clients branch on the err_code, so jetwal gives the same.
	if aerr := apiErrorOf(t, m.Data); aerr == nil || aerr.ErrCode != api.ErrStreamInvalidConfig || !strings.Contains(aerr.Description, "too long") {
		t.Fatalf("256-byte name: %s, want nats-server's name-too-long error", m.Data)
	}
	ts = ts.restart()
	nc = ts.connect()
	for _, n := range []int{250, 251, 253, 255} {
		name := strings.Repeat("N", n-3) + strconv.Itoa(n)
		if ts.js.lookup(name) == nil {
			t.Fatalf("%d-byte name not loaded after restart", n)
		}
		if m := request(t, nc, "$JS.API.STREAM.DELETE."+name, ""); apiErrorOf(t, m.Data) != nil {
			t.Fatalf("%d-byte name: delete: %s", n, m.Data)
		}
	}
	// An error that would carry a path in the store reads without it.
	got := string(ts.js.api.HidePaths([]byte(`{"error":{"description":"open ` + ts.cfg.StoreDir + `/jetstream/x: denied"}}`)))
	if strings.Contains(got, ts.cfg.StoreDir) || !strings.Contains(got, "open jetstream/x") {
		t.Fatalf("hidePaths left %q", got)
	}
}

// TestHardeningSlowAdminRequestBlocksOnlyItsStream: while one management
// request for stream A is stuck, requests for stream B and account-wide
// ones are answered; the next request for A waits its turn.
func TestHardeningSlowAdminRequestBlocksOnlyItsStream(t *testing.T) {
	ts := startServer(t, Config{})
	release := make(chan struct{})
	ts.js.api.Register("TEST.SLOW", apiserver.Mgmt, func(r *apiserver.Request) {
		<-release
		ts.js.api.Respond(r, api.Response{Type: "slow"}, false)
	})
	nc := ts.connect()
	request(t, nc, "$JS.API.STREAM.CREATE.A", `{"name":"A","subjects":["a.>"]}`)
	request(t, nc, "$JS.API.STREAM.CREATE.B", `{"name":"B","subjects":["b.>"]}`)
	slow, err := nc.Request("$JS.API.TEST.SLOW.A", nil, time.Millisecond)
	_ = slow // times out at once: the handler is stuck on purpose
	if err == nil {
		t.Fatal("the stuck request was answered")
	}
	for _, subj := range []string{"$JS.API.STREAM.INFO.B", "$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.CONSUMER.NAMES.B"} {
		if m := request(t, nc, subj, ""); apiErrorOf(t, m.Data) != nil {
			t.Fatalf("%s while A's request is stuck: %s", subj, m.Data)
		}
	}
	// A's next request queues behind the stuck one, and runs once it ends.
	sub, err := nc.SubscribeSync(nats.NewInbox())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.STREAM.INFO.A", sub.Subject, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(50 * time.Millisecond); err == nil {
		t.Fatal("a request for A overtook the stuck one")
	}
	close(release)
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("A's queued request after the stuck one ended: %v", err)
	}
}
