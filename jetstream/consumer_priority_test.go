package jetstream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
)

// TestPriorityConfig: the priority settings nats-server refuses, with its
// codes, and the pinned_client default priority_timeout.
func TestPriorityConfig(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	var sr api.StreamCreateResponse
	requestJSON(t, nc, api.Prefix+"STREAM.CREATE.PG", `{"name":"PG","subjects":["pg.>"]}`, &sr)
	for _, c := range []struct {
		cfg  string
		code api.ErrCode
	}{
		{`"priority_policy":"pinned_client"`, api.ErrConsumerPolicyWithoutGroup},
		{`"priority_groups":["A"]`, api.ErrConsumerGroupWithPolicyNone},
		{`"priority_timeout":1000000000`, api.ErrConsumerPinnedTTLWithoutPolicy},
		{`"priority_policy":"overflow","priority_groups":["bad name"]`, api.ErrConsumerInvalidGroupName},
		{`"priority_policy":"overflow","priority_groups":[""]`, api.ErrConsumerEmptyGroupName},
		{`"priority_policy":"overflow","priority_groups":["A"],"deliver_subject":"push.here"`, api.ErrConsumerPushWithPriority},
	} {
		var resp api.ConsumerInfoResponse
		requestJSON(t, nc, api.Prefix+"CONSUMER.CREATE.PG", `{"stream_name":"PG","config":{"ack_policy":"explicit",`+c.cfg+`}}`, &resp)
		if resp.Error == nil || resp.Error.ErrCode != c.code {
			t.Errorf("%s: %+v, want %d", c.cfg, resp.Error, c.code)
		}
	}
	var resp api.ConsumerInfoResponse
	requestJSON(t, nc, api.Prefix+"CONSUMER.CREATE.PG.P", `{"stream_name":"PG","config":{"durable_name":"P","ack_policy":"explicit",`+
		`"priority_policy":"pinned_client","priority_groups":["A"]}}`, &resp)
	if resp.Error != nil || resp.ConsumerInfo.Config.PinnedTTL != validate.DefaultPinnedTTL {
		t.Fatalf("pinned consumer: %+v %+v", resp.Error, resp.ConsumerInfo)
	}
	if g := resp.ConsumerInfo.PriorityGroups; len(g) != 1 || g[0].Group != "A" || g[0].PinnedClientID != "" {
		t.Fatalf("priority groups in info: %+v", g)
	}
}

// pull sends one pull request from its own inbox and returns the inbox's
// subscription.
func pull(t *testing.T, nc *nats.Conn, stream, consumer, body string) *nats.Subscription {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	if err := nc.PublishRequest(api.Prefix+"CONSUMER.MSG.NEXT."+stream+"."+consumer, inbox, []byte(body)); err != nil {
		t.Fatal(err)
	}
	return sub
}

// TestPinnedClient: the first request is pinned and its messages carry the
// pin id; another client waits; a wrong id gets 423; CONSUMER.UNPIN and
// priority_timeout move the pin to a waiting client, with advisories.
func TestPinnedClient(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "PC", Subjects: []string{"pc.>"}}); err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "pc.a", 0, 20)
	if _, err := js.CreateOrUpdateConsumer(ctxT(t), "PC", njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckNonePolicy,
		PriorityPolicy: njs.PriorityPolicyPinned, PriorityGroups: []string{"A"}, PinnedTTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	adv, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.*.PC.C") // PINNED and UNPINNED
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	const long = `"expires":20000000000`

	// A JSON request without a group is refused on a priority consumer.
	if m := nextMsg(t, pull(t, nc, "PC", "C", `{"batch":1}`)); m.Header.Get("Status") != "400" ||
		m.Header.Get("Description") != "Bad Request - Priority Group missing" {
		t.Fatalf("no group: %v", m.Header)
	}
	if m := nextMsg(t, pull(t, nc, "PC", "C", `{"batch":1,"group":"B"}`)); m.Header.Get("Description") != "Bad Request - Invalid Priority Group" {
		t.Fatalf("unknown group: %v", m.Header)
	}

	first := pull(t, nc, "PC", "C", `{"batch":2,"group":"A",`+long+`}`)
	m := nextMsg(t, first)
	pin := m.Header.Get("Nats-Pin-Id")
	if pin == "" || string(m.Data) == "" {
		t.Fatalf("first delivery: %v %q", m.Header, m.Data)
	}
	if m := nextMsg(t, first); m.Header.Get("Nats-Pin-Id") != pin {
		t.Fatalf("second delivery pin %q, want %q", m.Header.Get("Nats-Pin-Id"), pin)
	}
	var pinned api.ConsumerGroupPinned
	if err := json.Unmarshal(nextMsg(t, adv).Data, &pinned); err != nil || pinned.PinnedID != pin || pinned.Group != "A" ||
		pinned.Type != api.TypeAdvisoryConsumerPinned {
		t.Fatalf("pinned advisory %+v %v", pinned, err)
	}

	// Another client waits while the pinned one is served.
	other := pull(t, nc, "PC", "C", `{"batch":1,"group":"A",`+long+`}`)
	again := pull(t, nc, "PC", "C", `{"batch":1,"group":"A","id":"`+pin+`",`+long+`}`)
	if m := nextMsg(t, again); m.Header.Get("Nats-Pin-Id") != pin {
		t.Fatalf("pinned client's next request: %v", m.Header)
	}
	if m, err := other.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("an unpinned client got %v %q while the pin holds", m.Header, m.Data)
	}
	if m := nextMsg(t, pull(t, nc, "PC", "C", `{"batch":1,"group":"A","id":"bogus"}`)); m.Header.Get("Status") != "423" ||
		m.Header.Get("Description") != "Nats-Pin-Id mismatch" {
		t.Fatalf("wrong pin id: %v", m.Header)
	}
	var info api.ConsumerInfoResponse
	requestJSON(t, nc, api.Prefix+"CONSUMER.INFO.PC.C", "", &info)
	if g := info.ConsumerInfo.PriorityGroups; len(g) != 1 || g[0].PinnedClientID != pin || g[0].PinnedTS.IsZero() {
		t.Fatalf("info priority groups %+v", g)
	}

	// UNPIN: the waiting client is pinned with a new id.
	var ur api.Response
	requestJSON(t, nc, api.Prefix+"CONSUMER.UNPIN.PC.C", `{"group":"A"}`, &ur)
	if ur.Error != nil {
		t.Fatal(ur.Error)
	}
	m = nextMsg(t, other)
	pin2 := m.Header.Get("Nats-Pin-Id")
	if pin2 == "" || pin2 == pin {
		t.Fatalf("after unpin the waiting client got pin %q (old %q)", pin2, pin)
	}
	var unpinned api.ConsumerGroupUnpinned
	if err := json.Unmarshal(nextMsg(t, adv).Data, &unpinned); err != nil || unpinned.Reason != "admin" {
		t.Fatalf("unpinned advisory %+v %v", unpinned, err)
	}
	nextMsg(t, adv) // pinned again
	// The old id is refused now.
	if m := nextMsg(t, pull(t, nc, "PC", "C", `{"batch":1,"group":"A","id":"`+pin+`"}`)); m.Header.Get("Status") != "423" {
		t.Fatalf("old pin id: %v", m.Header)
	}

	// The new pin makes no request for priority_timeout (1s): it goes,
	// and a waiting client is pinned.
	third := pull(t, nc, "PC", "C", `{"batch":1,"group":"A",`+long+`}`)
	m = nextMsg(t, third)
	if p := m.Header.Get("Nats-Pin-Id"); p == "" || p == pin2 {
		t.Fatalf("after the timeout: pin %q (previous %q)", p, pin2)
	}
	if err := json.Unmarshal(nextMsg(t, adv).Data, &unpinned); err != nil || unpinned.Reason != "timeout" {
		t.Fatalf("unpinned advisory %+v %v", unpinned, err)
	}
}

// TestOverflowPriority: a request with min_pending is served only while
// that many messages are pending; nats.go's FetchMinPending sends it.
func TestOverflowPriority(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "OV", Subjects: []string{"ov.>"}})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "ov.a", 0, 10)
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy,
		PriorityPolicy: njs.PriorityPolicyOverflow, PriorityGroups: []string{"A"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(5, njs.FetchPriorityGroup("A"), njs.FetchMinPending(50), njs.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		t.Fatalf("min_pending 50 with 10 pending got %s", m.Subject())
	}
	// Served while at least 5 are pending, counting the one being sent
	// (10, 9, 8, 7, 6), as nats-server counts.
	b, err = c.Fetch(5, njs.FetchPriorityGroup("A"), njs.FetchMinPending(5), njs.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b.Messages() {
		m.Ack()
		n++
	}
	if n != 5 {
		t.Fatalf("min_pending 5 with 10 pending: %d messages, %v", n, b.Error())
	}
	// Not an overflow consumer: min_pending is refused.
	if _, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "N", AckPolicy: njs.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	m := nextMsg(t, pull(t, nc, "OV", "N", `{"batch":1,"group":"A","min_pending":1}`))
	if !strings.Contains(m.Header.Get("Description"), "Not a Overflow Priority consumer") {
		t.Fatalf("min_pending on a plain consumer: %v", m.Header)
	}
}

// TestPrioritizedPolicy: waiting requests are served lowest priority
// first, whatever their order of arrival.
func TestPrioritizedPolicy(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, _ := njs.New(nc)
	if _, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "PR", Subjects: []string{"pr.>"}}); err != nil {
		t.Fatal(err)
	}
	var resp api.ConsumerInfoResponse
	requestJSON(t, nc, api.Prefix+"CONSUMER.CREATE.PR.C", `{"stream_name":"PR","config":{"durable_name":"C","ack_policy":"explicit",`+
		`"priority_policy":"prioritized","priority_groups":["A"]}}`, &resp)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	low := pull(t, nc, "PR", "C", `{"batch":1,"group":"A","priority":5,"expires":20000000000}`)
	high := pull(t, nc, "PR", "C", `{"batch":1,"group":"A","priority":1,"expires":20000000000}`)
	if m := nextMsg(t, pull(t, nc, "PR", "C", `{"batch":1,"group":"A","priority":10}`)); m.Header.Get("Status") != "400" {
		t.Fatalf("priority 10: %v", m.Header)
	}
	eventually(t, "two waiting requests", func() bool {
		var ci api.ConsumerInfoResponse
		requestJSON(t, nc, api.Prefix+"CONSUMER.INFO.PR.C", "", &ci)
		return ci.ConsumerInfo != nil && ci.ConsumerInfo.NumWaiting == 2
	})
	publishN(t, js, "pr.a", 0, 1)
	if m := nextMsg(t, high); len(m.Data) == 0 {
		t.Fatalf("priority 1 got %v", m.Header)
	}
	if m, err := low.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("priority 5 got %v %q before any second message", m.Header, m.Data)
	}
	publishN(t, js, "pr.a", 1, 1)
	nextMsg(t, low)
}
