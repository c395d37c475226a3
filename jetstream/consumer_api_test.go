package jetstream

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestConsumerAPIErrors checks the error codes of the consumer API.
func TestConsumerAPIErrors(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	request(t, nc, api.SubjStreamCreate+"S", `{"name":"S","subjects":["s.>"]}`)
	request(t, nc, api.SubjStreamCreate+"WQ", `{"name":"WQ","subjects":["wq.>"],"retention":"workqueue"}`)
	code := func(subj, body string) api.ErrCode {
		t.Helper()
		var r api.ConsumerInfoResponse
		requestJSON(t, nc, subj, body, &r)
		if r.Error == nil {
			return 0
		}
		return r.Error.ErrCode
	}
	for _, c := range []struct {
		subj, body string
		want       api.ErrCode
	}{
		{api.SubjConsumerCreate + "NOPE.x", `{"stream_name":"NOPE","config":{"durable_name":"x","ack_policy":"explicit"}}`, api.ErrStreamNotFound},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S"}`, api.ErrConsumerConfigRequired},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"y","ack_policy":"explicit"}}`, api.ErrConsumerDurableNameNotMatch},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"explicit"},"action":"update"}`, api.ErrConsumerDoesNotExist},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"explicit"},"action":"create"}`, 0},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"explicit"},"action":"create"}`, 0},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"explicit","max_deliver":5},"action":"create"}`, api.ErrConsumerAlreadyExists},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"none"}}`, api.ErrConsumerCreate},
		{api.SubjConsumerCreate + "S.x", `{"stream_name":"S","config":{"durable_name":"x","ack_policy":"explicit","max_deliver":5}}`, 0},
		{api.SubjConsumerCreate + "S.y.s.other", `{"stream_name":"S","config":{"durable_name":"y","ack_policy":"explicit","filter_subject":"s.a"}}`, api.ErrConsumerFilterMismatch},
		// A filter outside the stream's subjects is accepted, as by
		// nats-server 2.15 (it never sends 10093).
		{api.SubjConsumerCreate + "S.nsub", `{"stream_name":"S","config":{"durable_name":"nsub","filter_subject":"t.a"}}`, 0},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","filter_subjects":["s.a","s.*"]}}`, api.ErrConsumerOverlappingFilters},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","filter_subject":"s.a","filter_subjects":["s.b"]}}`, api.ErrConsumerDuplicateFilters},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","filter_subjects":["s.a",""]}}`, api.ErrConsumerEmptyFilter},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","filter_subject":"s..a"}}`, api.ErrStreamInvalidConfig},
		// Filters that share subjects without one containing the other are
		// allowed (nats-server 2.15).
		{api.SubjConsumerCreate + "S.ov", `{"stream_name":"S","config":{"durable_name":"ov","filter_subjects":["s.*.c","s.b.*"]}}`, 0},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","deliver_subject":"out.*"}}`, api.ErrConsumerDeliverToWildcards},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","idle_heartbeat":1000000000}}`, api.ErrConsumerHBRequiresPush},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","deliver_policy":"by_start_sequence"}}`, api.ErrConsumerInvalidPolicy},
		{api.SubjConsumerCreate + "S.y", `{"stream_name":"S","config":{"durable_name":"y","backoff":[1000000000,2000000000],"max_deliver":2}}`, api.ErrConsumerMaxDeliverBackoff},
		{api.SubjConsumerCreate + "WQ.a", `{"stream_name":"WQ","config":{"durable_name":"a","ack_policy":"none"}}`, api.ErrConsumerWQRequiresExplicitAck},
		{api.SubjConsumerCreate + "WQ.a", `{"stream_name":"WQ","config":{"durable_name":"a","ack_policy":"explicit"}}`, 0},
		{api.SubjConsumerCreate + "WQ.b", `{"stream_name":"WQ","config":{"durable_name":"b","ack_policy":"explicit","filter_subject":"wq.b"}}`, api.ErrConsumerWQNotUnique},
		{api.SubjConsumerDurableCreate + "S.old", `{"stream_name":"S","config":{"ack_policy":"explicit"}}`, 0},
		{api.SubjConsumerInfo + "S.missing", ``, api.ErrConsumerNotFound},
		{api.SubjConsumerDelete + "S.missing", ``, api.ErrConsumerNotFound},
	} {
		if got := code(c.subj, c.body); got != c.want {
			t.Errorf("%s %s: err_code %d, want %d", c.subj, c.body, got, c.want)
		}
	}
	var ci api.ConsumerInfoResponse
	requestJSON(t, nc, api.SubjConsumerInfo+"S.old", "", &ci)
	if ci.ConsumerInfo == nil || ci.Config.Durable != "old" || ci.Config.Name != "old" {
		t.Fatalf("durable create: %+v", ci)
	}
	requestJSON(t, nc, api.SubjConsumerInfo+"S.x", "", &ci)
	if ci.Config.MaxDeliver != 5 {
		t.Fatalf("update not applied: %+v", ci.Config)
	}

	// Paging of NAMES.
	for i := 0; i < 30; i++ {
		request(t, nc, api.SubjConsumerCreate+"S", `{"stream_name":"S","config":{"ack_policy":"explicit"}}`)
	}
	var names api.ConsumerNamesResponse
	requestJSON(t, nc, api.SubjConsumerNames+"S", `{"offset":10}`, &names)
	if names.Total != 34 || names.Offset != 10 || len(names.Consumers) != 24 {
		t.Fatalf("names page: total %d offset %d len %d", names.Total, names.Offset, len(names.Consumers))
	}
	var si api.StreamInfoResponse
	requestJSON(t, nc, api.SubjStreamInfo+"S", "", &si)
	if si.State.Consumers != 34 {
		t.Fatalf("consumer_count %d", si.State.Consumers)
	}

	// Max waiting: the 3rd waiting pull is refused with 409.
	request(t, nc, api.SubjConsumerCreate+"S.mw", `{"stream_name":"S","config":{"durable_name":"mw","ack_policy":"explicit","max_waiting":2}}`)
	for i := 0; i < 2; i++ {
		inbox := fmt.Sprintf("mw.inbox.%d", i)
		sub, _ := nc.SubscribeSync(inbox)
		defer sub.Unsubscribe()
		nc.PublishRequest(api.SubjConsumerNext+"S.mw", inbox, []byte(`{"batch":1,"expires":30000000000}`))
	}
	eventually(t, "two waiting", func() bool {
		var ci api.ConsumerInfoResponse
		requestJSON(t, nc, api.SubjConsumerInfo+"S.mw", "", &ci)
		return ci.NumWaiting == 2
	})
	m := request(t, nc, api.SubjConsumerNext+"S.mw", `{"batch":1,"expires":30000000000}`)
	if m.Header.Get("Status") != "409" || m.Header.Get("Description") != "Exceeded MaxWaiting" {
		t.Fatalf("max waiting: %v", m.Header)
	}
	// A pull on a consumer that does not exist has no responder.
	if _, err := nc.Request(api.SubjConsumerNext+"S.none", nil, 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("missing consumer pull: %v", err)
	}
}
