package crashtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterMembershipUnderLoad changes an R3 stream's servers while
// publishers and a consumer run, on four servers: its leader removed from
// the replicas (the stream moves to the fourth server), up to 4 replicas,
// down to 2, back to 3. After every step, once every replica is current: every acknowledged
// message is stored at its acknowledged sequence, no confirmed consumer ack
// was redelivered, and no publisher went more than rollingOutage without
// an acknowledgement.
func TestClusterMembershipUnderLoad(t *testing.T) {
	nodes, nc, js, try := startProcClusterOf(t, procCluster{size: 4})
	defer nc.Close()
	cfg := jetstream.StreamConfig{Name: "CHAOS", Subjects: []string{"chaos.>"}, Replicas: 3}
	try("create stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, cfg)
		return err
	})
	try("create consumer", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "CHAOS", jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 10 * time.Minute})
		return err
	})
	replicasCurrent(t, js, try, "CHAOS")

	l := newLedger()
	acks := newAckChecker(l)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.publishUntil(stop, js, "chaos.m", fmt.Sprintf("w%d", w), 2*time.Second, 0)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		acks.consumeUntil(stop, js, "CHAOS", "W")
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}()

	replicas := func(n int) func() {
		return func() {
			c := cfg
			c.Replicas = n
			try(fmt.Sprintf("replicas %d", n), func(ctx context.Context) error {
				_, err := js.UpdateStream(ctx, c)
				return err
			})
		}
	}
	steps := []struct {
		what string
		do   func()
	}{
		// A move needs a spare server, so it comes while the stream is R3.
		{"leader removed from the replicas", func() {
			victim := leaderOf(t, nodes, js, try, "CHAOS")
			try("peer-remove "+victim.name, func(ctx context.Context) error {
				return peerRemove(ctx, nc, "CHAOS", victim.name)
			})
		}},
		{"replicas 3 -> 4", replicas(4)},
		{"replicas 4 -> 2", replicas(2)},
		{"replicas 2 -> 3", replicas(3)},
	}
	for _, step := range steps {
		before := l.count()
		time.Sleep(time.Second)
		step.do()
		replicasCurrent(t, js, try, "CHAOS")
		t.Logf("%s: %d acknowledged since the last step, longest outage so far %v", step.what, l.count()-before, l.longestOutage())
		if f := l.failures(); f != "" {
			t.Fatalf("after %s: %s", step.what, f)
		}
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	l.verify(try, js, "CHAOS")
	t.Logf("%d acknowledged, %d confirmed consumer acks, longest outage %v", l.count(), acks.count(), l.longestOutage())
	if f := l.failures(); f != "" {
		t.Fatal(f)
	}
	if l.count() == 0 || acks.count() == 0 {
		t.Fatalf("nothing acknowledged (%d) or consumed (%d)", l.count(), acks.count())
	}
	if o := l.longestOutage(); o > rollingOutage {
		t.Fatalf("a publisher went %v without an ack (bound %v)", o, rollingOutage)
	}
}
