package jetstream

import (
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// TestPublishWildcardTokens: a message published to a subject with
// wildcard tokens ("orders.*", accepted outside pedantic mode) is stored
// as it came when a stream captures it, as nats-server does; consumers
// filter it like any other subject, and it survives a restart.
func TestPublishWildcardTokens(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctxT(t), njs.StreamConfig{Name: "W", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"orders.*", "orders.new", "orders.>"} {
		if _, err := js.Publish(ctxT(t), subj, []byte(subj)); err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
	}
	m, err := s.GetMsg(ctxT(t), 1)
	if err != nil || m.Subject != "orders.*" || string(m.Data) != "orders.*" {
		t.Fatalf("message 1: %+v %v", m, err)
	}
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "N", FilterSubject: "orders.new", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := c.Info(ctxT(t)); info.NumPending != 1 {
		t.Fatalf("a literal filter sees %d messages, want 1", info.NumPending)
	}
	ts = ts.restart()
	nc = ts.connect()
	js, _ = njs.New(nc)
	s, err = js.Stream(ctxT(t), "W")
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetLastMsgForSubject(ctxT(t), "orders.>")
	if err != nil || last.Subject != "orders.>" || last.Sequence != 3 {
		t.Fatalf("last message after restart: %+v %v", last, err)
	}
	sub, err := nc.SubscribeSync("orders.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("orders.*", []byte("core")); err != nil {
		t.Fatal(err)
	}
	if got, err := sub.NextMsg(5 * time.Second); err != nil || got.Subject != "orders.*" {
		t.Fatalf("core delivery: %+v %v", got, err)
	}
}
