package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusteredConsumerReset: a durable consumer of an R3 stream is reset
// (CONSUMER.RESET) on the stream's leader; the leadership then moves, and
// the consumer the new leader runs starts from the reset position (the
// reset was checkpointed into the meta group before it was answered).
func TestClusteredConsumerReset(t *testing.T) {
	servers := startCluster(t, 3)
	nc, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	try := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		eventually(t, what, 60*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return f(ctx)
		})
	}
	try("create R3 stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3})
		return err
	})
	for i := range 5 {
		try("publish", func(ctx context.Context) error {
			_, err := js.Publish(ctx, "s.a", fmt.Appendf(nil, "m%d", i), jetstream.WithMsgID(fmt.Sprint(i)))
			return err
		})
	}
	var c jetstream.Consumer
	try("create durable", func(ctx context.Context) error {
		c, err = js.CreateOrUpdateConsumer(ctx, "S", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy})
		return err
	})
	// Deliver and acknowledge all five (confirmed acks: checkpointed).
	got := 0
	try("fetch and ack", func(ctx context.Context) error {
		b, err := c.Fetch(5-got, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		for m := range b.Messages() {
			if err := m.DoubleAck(ctx); err != nil {
				return err
			}
			got++
		}
		if got < 5 {
			return fmt.Errorf("%d of 5 acknowledged", got)
		}
		return nil
	})
	try("reset to 2", func(ctx context.Context) error {
		r, err := js.ResetConsumerToSequence(ctx, "S", "D", 2)
		if err == nil && (r.ResetSeq != 2 || r.NumPending != 4 || r.Delivered.Stream != 1) {
			t.Fatalf("reset reply: reset_seq %d pending %d delivered %+v", r.ResetSeq, r.NumPending, r.Delivered)
		}
		return err
	})
	var leader string
	try("stream leader", func(ctx context.Context) error {
		s, err := js.Stream(ctx, "S")
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("no leader yet: %v", err)
		}
		leader = info.Cluster.Leader
		return nil
	})
	try("stream step-down", func(ctx context.Context) error {
		m, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN.S", nil)
		if err != nil {
			return err
		}
		var r stepDownResp
		if err := json.Unmarshal(m.Data, &r); err != nil || !r.Success {
			return fmt.Errorf("step-down: %s %v", m.Data, err)
		}
		return nil
	})
	try("the new leader's consumer at the reset position", func(ctx context.Context) error {
		s, err := js.Stream(ctx, "S")
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || info.Cluster.Leader == leader {
			return fmt.Errorf("leadership has not moved from %s: %v", leader, err)
		}
		ci, err := js.Consumer(ctx, "S", "D")
		if err != nil {
			return err
		}
		in := ci.CachedInfo()
		if in.Delivered.Stream != 1 || in.Delivered.Consumer != 0 || in.AckFloor.Stream != 1 || in.NumPending != 4 {
			t.Fatalf("on %s after the step-down: delivered %+v ack floor %+v pending %d", info.Cluster.Leader, in.Delivered, in.AckFloor, in.NumPending)
		}
		return nil
	})
}
