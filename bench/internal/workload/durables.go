package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DurableName is the name of the i-th durable consumer CreateDurables makes.
func DurableName(i int) string { return fmt.Sprintf("D%05d", i) }

// CreateDurables creates n durable pull consumers (explicit ack, deliver
// all) on stream, one API request at a time, and returns how long that took.
func CreateDurables(ctx context.Context, url, stream string, n int) (time.Duration, error) {
	nc, js, err := connectJS(url, "durables")
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	start := time.Now()
	for i := range n {
		actx, cancel := apiCtx(ctx)
		_, err := js.CreateConsumer(actx, stream, jetstream.ConsumerConfig{
			Durable:       DurableName(i),
			AckPolicy:     jetstream.AckExplicitPolicy,
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		cancel()
		if err != nil {
			return 0, consumerErr(ctx, fmt.Sprintf("create durable %s (%d of %d)", DurableName(i), i+1, n), stream, err)
		}
	}
	return time.Since(start), nil
}

// ConsumerInfo asks for the durable consumer name on stream once and
// returns the number of messages it has pending.
func ConsumerInfo(ctx context.Context, url, stream, name string) (uint64, error) {
	nc, js, err := connectJS(url, "admin")
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	actx, cancel := apiCtx(ctx)
	defer cancel()
	c, err := js.Consumer(actx, stream, name)
	if err != nil {
		return 0, fmt.Errorf("workload: consumer %s on %s: %w", name, stream, err)
	}
	info, err := c.Info(actx)
	if err != nil {
		return 0, fmt.Errorf("workload: consumer info %s on %s: %w", name, stream, err)
	}
	return info.NumPending, nil
}

// StreamConsumers returns the number of consumers stream info reports.
func StreamConsumers(ctx context.Context, url, stream string) (int, error) {
	info, err := streamInfo(ctx, url, stream)
	if err != nil {
		return 0, err
	}
	return info.State.Consumers, nil
}
