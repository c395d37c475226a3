package workload

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// AsyncWindow is the number of unacknowledged async publishes allowed in
// flight for a payload size: nats.go's default of 4000, reduced so that no
// more than about 64 MiB is outstanding.
func AsyncWindow(size int) int {
	return max(16, min(4000, (64<<20)/max(size, 1)))
}

// PubAsync publishes p.Count messages with PublishAsync, a window at a time,
// waiting for every acknowledgement of a window before the next.
func PubAsync(ctx context.Context, p Params) (Result, error) {
	nc, err := connect(p.URL, "pub-async")
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	var nacks atomic.Int64
	window := AsyncWindow(p.Size)
	if p.Window > 0 {
		window = min(window, p.Window)
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(window),
		jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) { nacks.Add(1) }),
	)
	if err != nil {
		return Result{}, fmt.Errorf("workload: jetstream context: %w", err)
	}
	data := payload(p.Size)
	start := time.Now()
	sent := 0
	// Publish a window's worth, then wait for all of its acknowledgements,
	// as `nats bench js pub async` does with its --batch. Publishing into
	// a full window instead stalls the publisher once per acknowledgement
	// (a wake-up per message), which made the client the bound at 128 B.
	for sent < p.Count && !p.expired(start) && ctx.Err() == nil {
		for n := min(window, p.Count-sent); n > 0; n-- {
			if _, err := js.PublishAsync(p.Subject, data); err != nil {
				return Result{}, fmt.Errorf("workload: publish async #%d: %w", sent, err)
			}
			sent++
		}
		if err := waitAcks(ctx, js, p.stall()); err != nil {
			return Result{}, err
		}
	}
	elapsed := time.Since(start)
	ok := int64(sent) - nacks.Load()
	return Result{Msgs: ok, Bytes: ok * int64(p.Size), Elapsed: elapsed, Errors: nacks.Load()}, nil
}

// waitAcks waits until every async publish in flight is acknowledged.
func waitAcks(ctx context.Context, js jetstream.JetStream, stall time.Duration) error {
	select {
	case <-js.PublishAsyncComplete():
		return nil
	case <-time.After(stall):
		return fmt.Errorf("workload: %d async publishes still unacknowledged after %s", js.PublishAsyncPending(), stall)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PubSync publishes messages one at a time, waiting for each
// acknowledgement, and records the latency of each.
func PubSync(ctx context.Context, p Params) (Result, error) {
	nc, js, err := connectJS(p.URL, "pub-sync")
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	data := payload(p.Size)
	return timeEach(p, func(i int) (time.Duration, error) {
		c, cancel := context.WithTimeout(ctx, p.stall())
		t0 := time.Now()
		_, err := js.Publish(c, p.Subject, data)
		d := time.Since(t0)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("workload: publish #%d: %w", i, err)
		}
		return d, nil
	})
}
