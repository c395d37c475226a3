package crashtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// chaosLoad is the workload of the cluster's operation tests: an R3
// stream CHAOS with a durable W, three publishers recording what is
// acknowledged in a ledger and a consumer double-acking, running until
// finish.
type chaosLoad struct {
	l    *ledger
	acks *ackChecker
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// startChaosLoad creates the stream and its durable, waits until every
// replica is current, and starts the publishers and the consumer.
func startChaosLoad(t *testing.T, js jetstream.JetStream, try func(string, func(context.Context) error)) *chaosLoad {
	t.Helper()
	try("create stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CHAOS", Subjects: []string{"chaos.>"}, Replicas: 3})
		return err
	})
	try("create consumer", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "CHAOS", jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 10 * time.Minute})
		return err
	})
	replicasCurrent(t, js, try, "CHAOS")
	c := &chaosLoad{l: newLedger(), stop: make(chan struct{})}
	c.acks = newAckChecker(c.l)
	for w := range 3 {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.l.publishUntil(c.stop, js, "chaos.m", fmt.Sprintf("w%d", w), 2*time.Second, 0)
		}()
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.acks.consumeUntil(c.stop, js, "CHAOS", "W")
	}()
	t.Cleanup(c.halt)
	return c
}

// halt stops the publishers and the consumer and waits for them.
func (c *chaosLoad) halt() {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
	})
}

// checkStep waits until every replica is current after an operation and
// fails the test on any problem the ledger found so far.
func (c *chaosLoad) checkStep(t *testing.T, js jetstream.JetStream, try func(string, func(context.Context) error), what string, before int) {
	t.Helper()
	replicasCurrent(t, js, try, "CHAOS")
	t.Logf("%s: %d acknowledged since the last step, longest outage so far %v", what, c.l.count()-before, c.l.longestOutage())
	if f := c.l.failures(); f != "" {
		t.Fatalf("after %s: %s", what, f)
	}
}

// finish lets the load run a second more, stops it and checks the end:
// every acknowledged message stored at its sequence, no confirmed ack
// redelivered, something acknowledged and consumed, and no publisher
// more than rollingOutage without an acknowledgement.
func (c *chaosLoad) finish(t *testing.T, js jetstream.JetStream, try func(string, func(context.Context) error)) {
	t.Helper()
	time.Sleep(time.Second)
	c.halt()
	c.l.verify(try, js, "CHAOS")
	t.Logf("%d acknowledged, %d confirmed consumer acks, longest outage %v", c.l.count(), c.acks.count(), c.l.longestOutage())
	if f := c.l.failures(); f != "" {
		t.Fatal(f)
	}
	if c.l.count() == 0 || c.acks.count() == 0 {
		t.Fatalf("nothing acknowledged (%d) or consumed (%d)", c.l.count(), c.acks.count())
	}
	if o := c.l.longestOutage(); o > rollingOutage {
		t.Fatalf("a publisher went %v without an ack (bound %v)", o, rollingOutage)
	}
}
