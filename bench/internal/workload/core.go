package workload

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Pub publishes p.Count core messages on a subject nobody subscribes to
// and flushes; the rate includes the final round trip.
func Pub(ctx context.Context, p Params) (Result, error) {
	nc, err := connect(p.URL, "pub")
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	data := payload(p.Size)
	start := time.Now()
	sent, err := publishCore(ctx, p, nc, data, start)
	if err != nil {
		return Result{}, err
	}
	n := int64(sent)
	return Result{Msgs: n, Bytes: n * int64(p.Size), Elapsed: time.Since(start)}, nil
}

// publishCore publishes up to p.Count core messages of data on p.Subject
// through nc, stopping early when p's time is up (from start) or ctx
// ends, and flushes; it returns how many it sent.
func publishCore(ctx context.Context, p Params, nc *nats.Conn, data []byte, start time.Time) (int, error) {
	sent := 0
	for sent < p.Count {
		if sent%256 == 0 && (p.expired(start) || ctx.Err() != nil) {
			break
		}
		if err := nc.Publish(p.Subject, data); err != nil {
			return sent, fmt.Errorf("workload: publish #%d: %w", sent, err)
		}
		sent++
	}
	if err := nc.FlushTimeout(p.stall()); err != nil {
		return sent, fmt.Errorf("workload: flush after %d publishes: %w", sent, err)
	}
	return sent, nil
}

// PubSub publishes p.Count core messages from one connection to one
// subscriber on another and measures until the last one arrives. Messages
// the server drops are counted as errors.
func PubSub(ctx context.Context, p Params) (Result, error) {
	sc, err := connect(p.URL, "sub")
	if err != nil {
		return Result{}, err
	}
	defer sc.Close()
	// got and end are written by the subscription callback; the end
	// timestamp is what the rate is measured to.
	var got, end atomic.Int64
	sub, err := sc.Subscribe(p.Subject, func(*nats.Msg) {
		got.Add(1)
		end.Store(time.Now().UnixNano())
	})
	if err != nil {
		return Result{}, fmt.Errorf("workload: subscribe %s: %w", p.Subject, err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return Result{}, fmt.Errorf("workload: pending limits: %w", err)
	}
	if err := sc.FlushTimeout(p.stall()); err != nil {
		return Result{}, fmt.Errorf("workload: flush subscription: %w", err)
	}
	pc, err := connect(p.URL, "pub")
	if err != nil {
		return Result{}, err
	}
	defer pc.Close()
	data := payload(p.Size)
	start := time.Now()
	sent, err := publishCore(ctx, p, pc, data, start)
	if err != nil {
		return Result{}, err
	}
	// The subscriber may lose messages (slow consumer); wait for the count
	// or for deliveries to stop, with no time cap.
	noCap := p
	noCap.MaxTime = 0
	noCap.Stall = min(p.stall(), 2*time.Second)
	reached, werr := waitCount(ctx, noCap, start, &got, int64(sent), nil)
	if werr != nil && got.Load() == 0 {
		return Result{}, fmt.Errorf("workload: subscriber received nothing: %w", werr)
	}
	if err := sub.Unsubscribe(); err != nil {
		return Result{}, fmt.Errorf("workload: unsubscribe: %w", err)
	}
	n := min(got.Load(), int64(sent))
	if n == 0 {
		return Result{}, fmt.Errorf("workload: subscriber received none of %d messages", sent)
	}
	elapsed := time.Unix(0, end.Load()).Sub(start)
	var lost int64
	if !reached {
		lost = int64(sent) - n
	}
	return Result{Msgs: n, Bytes: n * int64(p.Size), Elapsed: elapsed, Errors: lost}, nil
}

// RequestReply sends requests one at a time to a responder on another
// connection that echoes the payload, and records each round trip.
func RequestReply(ctx context.Context, p Params) (Result, error) {
	rc, err := connect(p.URL, "responder")
	if err != nil {
		return Result{}, err
	}
	defer rc.Close()
	sub, err := rc.Subscribe(p.Subject, func(m *nats.Msg) { _ = m.Respond(m.Data) })
	if err != nil {
		return Result{}, fmt.Errorf("workload: subscribe responder %s: %w", p.Subject, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := rc.FlushTimeout(p.stall()); err != nil {
		return Result{}, fmt.Errorf("workload: flush responder: %w", err)
	}
	nc, err := connect(p.URL, "requester")
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	data := payload(p.Size)
	return timeEach(p, func(i int) (time.Duration, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		if _, err := nc.Request(p.Subject, data, p.stall()); err != nil {
			return 0, fmt.Errorf("workload: request #%d: %w", i, err)
		}
		return time.Since(t0), nil
	})
}

// timeEach runs op (i counts from 0) one at a time, up to p.Count times or
// until p's time is up, and reports the latencies op returns; an error of
// op ends the run with it.
func timeEach(p Params, op func(i int) (time.Duration, error)) (Result, error) {
	lat := make([]time.Duration, 0, min(p.Count, 1<<20))
	start := time.Now()
	for len(lat) < p.Count && !p.expired(start) {
		d, err := op(len(lat))
		if err != nil {
			return Result{}, err
		}
		lat = append(lat, d)
	}
	elapsed := time.Since(start)
	n := int64(len(lat))
	return Result{Msgs: n, Bytes: n * int64(p.Size), Elapsed: elapsed, Latency: Summarize(lat)}, nil
}
