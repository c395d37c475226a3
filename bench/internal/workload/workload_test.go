package workload_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/benchtest"
	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// TestWorkloadsAgainstNATSServer runs every workload briefly against the
// reference server and checks each completes its whole count.
func TestWorkloadsAgainstNATSServer(t *testing.T) {
	srv := benchtest.Start(t, benchtest.NATSServer(t), proc.ModeDefault)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const count = 300
	for _, size := range []int{16, 4096} {
		stream := fmt.Sprintf("T%d", size)
		subject := fmt.Sprintf("t.%d", size)
		if err := workload.CreateStream(ctx, srv.URL(), stream, subject); err != nil {
			t.Fatal(err)
		}
		for _, w := range workload.All() {
			t.Run(fmt.Sprintf("%s/size=%d", w.Name, size), func(t *testing.T) {
				p := workload.Params{URL: srv.URL(), Size: size, Count: count, Stream: stream, Subject: subject}
				if !w.JetStream {
					p.Subject = "core." + subject
				}
				if w.Name == workload.JSPubSync {
					p.Subject = subject // appends to the same stream after the readers ran
				}
				r, err := w.Run(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if r.Msgs != count || r.Bytes != int64(count*size) || r.Errors != 0 {
					t.Fatalf("result %+v, want %d msgs of %d bytes, no errors", r, count, size)
				}
				if r.Elapsed <= 0 || r.MsgsPerSec() <= 0 {
					t.Fatalf("no elapsed time in %+v", r)
				}
				if w.Latency != (r.Latency != nil) {
					t.Fatalf("latency presence %v, want %v", r.Latency != nil, w.Latency)
				}
				if r.Latency != nil && (r.Latency.N != count || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max) {
					t.Fatalf("bad latency summary %+v", r.Latency)
				}
			})
		}
		n, err := workload.StreamMsgs(ctx, srv.URL(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2*count { // async + sync publishes
			t.Fatalf("stream %s holds %d messages, want %d", stream, n, 2*count)
		}
		if err := workload.DeleteStream(ctx, srv.URL(), stream); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimeCapStopsEarly checks a time-capped run stops before its count and
// reports what it did.
func TestTimeCapStopsEarly(t *testing.T) {
	srv := benchtest.Start(t, benchtest.NATSServer(t), proc.ModeDefault)
	ctx := context.Background()
	p := workload.Params{URL: srv.URL(), Size: 128, Count: 1 << 30, MaxTime: 50 * time.Millisecond, Subject: "cap"}
	r, err := workload.RequestReply(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Msgs <= 0 || r.Msgs >= int64(p.Count) {
		t.Fatalf("time-capped run did %d requests", r.Msgs)
	}
}

func TestSummarize(t *testing.T) {
	if workload.Summarize(nil) != nil {
		t.Fatal("empty samples gave a summary")
	}
	s := make([]time.Duration, 1000)
	for i := range s {
		s[len(s)-1-i] = time.Duration(i+1) * time.Microsecond
	}
	l := workload.Summarize(s)
	if l.N != 1000 || l.P50 != 500*time.Microsecond || l.P99 != 990*time.Microsecond ||
		l.P999 != 999*time.Microsecond || l.Max != 1000*time.Microsecond {
		t.Fatalf("summary %+v", l)
	}
}

func TestWindowAndBatchBounds(t *testing.T) {
	for _, size := range []int{0, 16, 128, 1024, 16 << 10, 256 << 10, 8 << 20} {
		if w := workload.AsyncWindow(size); w < 16 || w > 4000 {
			t.Fatalf("AsyncWindow(%d) = %d", size, w)
		}
		if b := workload.ReadBatch(size); b < 1 || b > 1000 {
			t.Fatalf("ReadBatch(%d) = %d", size, b)
		}
	}
	if workload.AsyncWindow(256<<10) != 256 || workload.ReadBatch(256<<10) != 32 {
		t.Fatal("large-payload window or batch not scaled down")
	}
}
