package jetstream

import (
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// TestNumWaitingAfterConsumeStops: once a client stops consume(), its inbox
// has no subscriber, and consumer info counts none of the pull requests it
// left behind (nats-server drops them when it reports num_waiting), though
// they were sent with a 30s expiry that has not passed.
func TestNumWaitingAfterConsumeStops(t *testing.T) {
	ts := startServer(t, fastSync())
	nc := ts.connect()
	js, err := njs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := consumerStream(t, js, njs.FileStorage, njs.StreamConfig{})
	c, err := s.CreateOrUpdateConsumer(ctxT(t), njs.ConsumerConfig{Durable: "w", AckPolicy: njs.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := c.Consume(func(m njs.Msg) { m.Ack() }, njs.PullExpiry(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "consume() has a pull request waiting", func() bool {
		ci, err := c.Info(ctxT(t))
		return err == nil && ci.NumWaiting > 0
	})
	cc.Stop()
	<-cc.Closed()
	// The unsubscribe of the inbox goes out before the info request on the
	// same connection, so the server has processed it when it answers.
	ci := consumerInfo(t, c)
	if ci.NumWaiting != 0 {
		t.Fatalf("num_waiting %d after consume() stopped, want 0", ci.NumWaiting)
	}

	// A request whose requester is still there stays counted.
	cc, err = c.Consume(func(m njs.Msg) { m.Ack() }, njs.PullExpiry(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	eventually(t, "the new consume() has a pull request waiting", func() bool {
		ci, err := c.Info(ctxT(t))
		return err == nil && ci.NumWaiting > 0
	})
	publishN(t, js, "orders.new", 1, 1)
	eventually(t, "the message is consumed and acknowledged", func() bool {
		ci, err := c.Info(ctxT(t))
		return err == nil && ci.AckFloor.Stream == 1 && ci.NumWaiting > 0
	})
}
