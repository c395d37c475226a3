package jetstream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
)

// TestDomain: with a JetStream domain the whole API, pull requests
// included, is served under $JS.<domain>.API as well as $JS.API; PubAcks
// and account info name the domain; nats.go's NewWithDomain and the
// pinned CLI's --js-domain work.
func TestDomain(t *testing.T) {
	cfg := fastSync()
	cfg.Domain = "hub"
	ts := startServer(t, cfg)
	nc := ts.connect()
	js, err := njs.NewWithDomain(nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "D", Subjects: []string{"d.*"}})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctxT(t), "d.a", []byte("one"))
	if err != nil || ack.Domain != "hub" || ack.Sequence != 1 {
		t.Fatalf("puback %+v %v", ack, err)
	}
	// The PubAck on the wire: the domain between stream and seq.
	m, err := nc.Request("d.a", []byte("two"), 5*time.Second)
	if err != nil || string(m.Data) != `{"stream":"D","domain":"hub","seq":2}` {
		t.Fatalf("raw puback %q %v", m.Data, err)
	}
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "C", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(2, njs.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for msg := range b.Messages() {
		if err := msg.Ack(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 || b.Error() != nil {
		t.Fatalf("fetched %d through the domain: %v", n, b.Error())
	}
	info, err := js.AccountInfo(ctxT(t))
	if err != nil || info.Domain != "hub" || info.Streams != 1 {
		t.Fatalf("account info %+v %v", info, err)
	}
	// The plain prefix still serves, and says the domain too.
	var ai api.AccountInfoResponse
	requestJSON(t, nc, api.Prefix+"INFO", "", &ai)
	if ai.AccountStats == nil || ai.Domain != "hub" {
		raw, _ := json.Marshal(ai)
		t.Fatalf("account info on $JS.API: %s", raw)
	}
	// Another domain reaches nothing.
	if _, err := nc.Request("$JS.other.API.INFO", nil, 500*time.Millisecond); err == nil {
		t.Fatal("a request to another domain was answered")
	}
	out := newCLI(t, ts).ok([]string{"--js-domain", "hub", "stream", "info", "D", "--json"}, `"name": "D"`)
	if !strings.Contains(out, `"messages": 2`) {
		t.Fatalf("nats --js-domain hub stream info:\n%s", out)
	}
}

func TestDomainValidation(t *testing.T) {
	for _, d := range []string{"a.b", "a b", "*", ">", "x\x00", strings.Repeat("x", 256)} {
		if err := (Config{Domain: d}).Validate(); err == nil {
			t.Errorf("domain %q accepted", d)
		}
	}
	for _, d := range []string{"hub", "HUB-1", "leaf_2"} {
		if err := (Config{Domain: d}).Validate(); err != nil {
			t.Errorf("domain %q: %v", d, err)
		}
	}
}
