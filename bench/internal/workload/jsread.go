package workload

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrConsumerAPI marks a consumer that could not be created because the
// server never answered the consumer API request (no responders or a
// timeout): a server without consumers. Callers use it to stop asking.
var ErrConsumerAPI = errors.New("consumer API did not answer")

// consumerErr wraps an error of creating a consumer, adding ErrConsumerAPI
// when the server did not answer while ctx itself was still live.
func consumerErr(ctx context.Context, what, stream string, err error) error {
	unanswered := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders)
	if unanswered && ctx.Err() == nil {
		return fmt.Errorf("workload: %s on %s: %w (%w)", what, stream, ErrConsumerAPI, err)
	}
	return fmt.Errorf("workload: %s on %s: %w", what, stream, err)
}

// ReadBatch is the pull batch size for a payload size: 1000 messages,
// reduced so that one batch carries no more than about 8 MiB.
func ReadBatch(size int) int {
	return max(1, min(1000, (8<<20)/max(size, 1)))
}

// maxAckPending bounds unacknowledged deliveries for the acking consumers;
// it is far above any batch so acks in flight never throttle delivery.
const maxAckPending = 65536

func pullConsumer(ctx context.Context, js jetstream.JetStream, stream string) (jetstream.Consumer, error) {
	actx, cancel := apiCtx(ctx)
	defer cancel()
	c, err := js.CreateConsumer(actx, stream, jetstream.ConsumerConfig{
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: maxAckPending,
	})
	if err != nil {
		return nil, consumerErr(ctx, "create consumer", stream, err)
	}
	return c, nil
}

// Fetch reads p.Count messages from p.Stream with repeated Fetch calls on a
// pull consumer, acknowledging each message.
func Fetch(ctx context.Context, p Params) (Result, error) {
	nc, js, err := connectJS(p.URL, "fetch")
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	cons, err := pullConsumer(ctx, js, p.Stream)
	if err != nil {
		return Result{}, err
	}
	batch := ReadBatch(p.Size)
	var got, bytes int64
	start := time.Now()
	for got < int64(p.Count) && !p.expired(start) {
		want := min(batch, p.Count-int(got))
		b, err := cons.Fetch(want, jetstream.FetchMaxWait(p.stall()))
		if err != nil {
			return Result{}, fmt.Errorf("workload: fetch after %d messages: %w", got, err)
		}
		n := 0
		for m := range b.Messages() {
			if err := m.Ack(); err != nil {
				return Result{}, fmt.Errorf("workload: ack message %d: %w", got, err)
			}
			bytes += int64(len(m.Data()))
			n++
			got++
		}
		if err := b.Error(); err != nil && n == 0 {
			return Result{}, fmt.Errorf("workload: fetch after %d messages: %w", got, err)
		}
		if n == 0 {
			return Result{}, fmt.Errorf("workload: fetch returned nothing after %d of %d messages", got, p.Count)
		}
	}
	return Result{Msgs: got, Bytes: bytes, Elapsed: time.Since(start)}, nil
}

// Consume reads p.Count messages from p.Stream with a pull consumer's
// Consume callback, acknowledging each message.
func Consume(ctx context.Context, p Params) (Result, error) {
	return consume(ctx, p, false)
}

// Ordered reads p.Count messages from p.Stream with an ordered consumer.
func Ordered(ctx context.Context, p Params) (Result, error) {
	return consume(ctx, p, true)
}

func consume(ctx context.Context, p Params, ordered bool) (Result, error) {
	role := "consume"
	if ordered {
		role = "ordered"
	}
	nc, js, err := connectJS(p.URL, role)
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	var cons jetstream.Consumer
	if ordered {
		actx, cancel := apiCtx(ctx)
		cons, err = js.OrderedConsumer(actx, p.Stream, jetstream.OrderedConsumerConfig{})
		cancel()
		if err != nil {
			return Result{}, consumerErr(ctx, "ordered consumer", p.Stream, err)
		}
	} else if cons, err = pullConsumer(ctx, js, p.Stream); err != nil {
		return Result{}, err
	}
	want := int64(p.Count)
	var got, ackErrs atomic.Int64
	done := make(chan struct{})
	var end atomic.Int64 // UnixNano of the delivery that completed the run
	handler := func(m jetstream.Msg) {
		if !ordered {
			if err := m.Ack(); err != nil {
				ackErrs.Add(1)
			}
		}
		if got.Add(1) == want {
			end.Store(time.Now().UnixNano())
			close(done)
		}
	}
	start := time.Now()
	cc, err := cons.Consume(handler, jetstream.PullMaxMessages(ReadBatch(p.Size)))
	if err != nil {
		return Result{}, fmt.Errorf("workload: consume %s: %w", p.Stream, err)
	}
	_, werr := waitCount(ctx, p, start, &got, want, done)
	elapsed := time.Since(start)
	if e := end.Load(); e != 0 {
		elapsed = time.Unix(0, e).Sub(start)
	}
	cc.Stop()
	if werr != nil {
		return Result{}, fmt.Errorf("workload: %s %s: %w", role, p.Stream, werr)
	}
	n := min(got.Load(), want)
	return Result{Msgs: n, Bytes: n * int64(p.Size), Elapsed: elapsed, Errors: ackErrs.Load()}, nil
}
