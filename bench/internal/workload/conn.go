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

// apiTimeout bounds one JetStream API exchange (stream and consumer
// management), as nats.go's default does when ctx has no deadline.
const apiTimeout = 5 * time.Second

// apiCtx derives the context of one JetStream API exchange.
func apiCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, apiTimeout)
}

// connectJS opens a client connection for a workload, as connect does,
// with a JetStream context on it; the caller closes the connection.
func connectJS(url, role string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := connect(url, role)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("workload: jetstream context: %w", err)
	}
	return nc, js, nil
}

// connect opens a client connection for a workload.
func connect(url, role string) (*nats.Conn, error) {
	nc, err := nats.Connect(url,
		nats.Name("jetwal-bench-"+role),
		nats.Timeout(5*time.Second),
		nats.NoReconnect(),
	)
	if err != nil {
		return nil, fmt.Errorf("workload: connect %s as %s: %w", url, role, err)
	}
	return nc, nil
}

// payload returns size bytes of a fixed, not very compressible pattern.
func payload(size int) []byte {
	b := make([]byte, size)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// waitCount blocks until counter reaches want, the run's time cap passes,
// no progress is seen for p.stall(), or ctx ends. It returns whether the
// count was reached; a stall is an error.
func waitCount(ctx context.Context, p Params, start time.Time, counter *atomic.Int64, want int64, done <-chan struct{}) (bool, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	last, lastAt := counter.Load(), time.Now()
	for {
		select {
		case <-done:
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
		}
		n := counter.Load()
		if n >= want {
			return true, nil
		}
		if p.expired(start) {
			return false, nil
		}
		if n != last {
			last, lastAt = n, time.Now()
			continue
		}
		if time.Since(lastAt) > p.stall() {
			return false, fmt.Errorf("workload: stalled at %d of %d messages for %s", n, want, p.stall())
		}
	}
}

// StreamConfig is the stream every JetStream workload uses: file storage,
// one replica, limits retention, no limits.
func StreamConfig(name, subject string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:      name,
		Subjects:  []string{subject},
		Storage:   jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy,
		Replicas:  1,
	}
}

// CreateStream creates (or replaces) the stream name capturing subject.
func CreateStream(ctx context.Context, url, name, subject string) error {
	nc, js, err := connectJS(url, "admin")
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := apiCtx(ctx)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("workload: delete old stream %s: %w", name, err)
	}
	if _, err := js.CreateStream(ctx, StreamConfig(name, subject)); err != nil {
		return fmt.Errorf("workload: create stream %s: %w", name, err)
	}
	return nil
}

// DeleteStream removes the stream name.
func DeleteStream(ctx context.Context, url, name string) error {
	nc, js, err := connectJS(url, "admin")
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := apiCtx(ctx)
	defer cancel()
	if err := js.DeleteStream(ctx, name); err != nil {
		return fmt.Errorf("workload: delete stream %s: %w", name, err)
	}
	return nil
}

// StreamMsgs returns the number of messages stored in stream name.
func StreamMsgs(ctx context.Context, url, name string) (uint64, error) {
	info, err := streamInfo(ctx, url, name)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// streamInfo asks for the info of stream name once, on an admin
// connection.
func streamInfo(ctx context.Context, url, name string) (*jetstream.StreamInfo, error) {
	nc, js, err := connectJS(url, "admin")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	ctx, cancel := apiCtx(ctx)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("workload: stream %s: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("workload: stream info %s: %w", name, err)
	}
	return info, nil
}
