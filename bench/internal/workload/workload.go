package workload

import (
	"context"
	"fmt"
	"time"
)

// Name identifies a workload in reports and CSV files.
type Name string

// The workloads, in report order.
const (
	JSPubAsync Name = "js-pub-async"
	JSPubSync  Name = "js-pub-sync"
	JSFetch    Name = "js-fetch"
	JSConsume  Name = "js-consume"
	JSOrdered  Name = "js-ordered"
	CorePub    Name = "core-pub"
	CorePubSub Name = "core-pubsub"
	ReqReply   Name = "req-reply"
)

// Params configures one run of a workload.
type Params struct {
	// URL is the server's client URL.
	URL string
	// Size is the payload size in bytes.
	Size int
	// Count is the number of messages to publish, read or exchange.
	Count int
	// MaxTime stops a run early once it has taken this long; zero means
	// no limit.
	MaxTime time.Duration
	// Stall is how long a run may make no progress before it fails; zero
	// means 10s.
	Stall time.Duration
	// Stream is the JetStream stream the run writes to or reads from.
	Stream string
	// Subject is the subject messages are published on.
	Subject string
	// Window caps the async publish window below AsyncWindow(Size); zero
	// means no extra cap.
	Window int
}

func (p Params) stall() time.Duration {
	if p.Stall <= 0 {
		return 10 * time.Second
	}
	return p.Stall
}

// expired reports whether a run that started at start has used its time cap.
func (p Params) expired(start time.Time) bool {
	return p.MaxTime > 0 && time.Since(start) >= p.MaxTime
}

// Result is what one run measured.
type Result struct {
	// Msgs is the number of messages that completed: acknowledged
	// publishes, delivered messages, or answered requests.
	Msgs int64
	// Bytes is the payload bytes of those messages.
	Bytes int64
	// Elapsed is the measured wall time.
	Elapsed time.Duration
	// Errors counts operations that failed without aborting the run
	// (negative acknowledgements, dropped core messages).
	Errors int64
	// Latency holds per-operation latency percentiles for workloads that
	// measure it, else nil.
	Latency *Latency
}

// MsgsPerSec is the message rate of the run.
func (r Result) MsgsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Msgs) / r.Elapsed.Seconds()
}

// MBPerSec is the payload rate of the run in MiB per second.
func (r Result) MBPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Bytes) / (1 << 20) / r.Elapsed.Seconds()
}

// Func runs one workload.
type Func func(ctx context.Context, p Params) (Result, error)

// Workload describes one workload.
type Workload struct {
	Name Name
	// Run executes the workload.
	Run Func
	// JetStream is true for workloads that touch the store; the others
	// do not depend on the durability mode.
	JetStream bool
	// Reads is true for workloads that read a stream filled beforehand.
	Reads bool
	// Latency is true for workloads whose Result carries percentiles.
	Latency bool
	// Summary is a one-line description for the report.
	Summary string
}

// All returns every workload in report order.
func All() []Workload {
	return []Workload{
		{Name: JSPubAsync, Run: PubAsync, JetStream: true, Summary: "JetStream publish, async acks, in batches (scaled to payload size) awaited whole"},
		{Name: JSFetch, Run: Fetch, JetStream: true, Reads: true, Summary: "pull consumer, Fetch batches, explicit ack per message"},
		{Name: JSConsume, Run: Consume, JetStream: true, Reads: true, Summary: "pull consumer, Consume callback, explicit ack per message"},
		{Name: JSOrdered, Run: Ordered, JetStream: true, Reads: true, Summary: "ordered consumer, Consume callback, no acks"},
		{Name: JSPubSync, Run: PubSync, JetStream: true, Latency: true, Summary: "JetStream publish, one at a time, waiting for each ack"},
		{Name: CorePub, Run: Pub, Summary: "core publish, no subscriber"},
		{Name: CorePubSub, Run: PubSub, Summary: "core publish with one subscriber on another connection"},
		{Name: ReqReply, Run: RequestReply, Latency: true, Summary: "core request/reply, one outstanding request"},
	}
}

// Lookup finds a workload by name.
func Lookup(n Name) (Workload, error) {
	for _, w := range All() {
		if w.Name == n {
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("workload: unknown workload %q", n)
}
