package proc_test

import (
	"context"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/benchtest"
	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// TestSmallStreamsDisk: 1,000 file streams holding one 128-byte message
// each take at most 1.5x the disk (allocated blocks, as du counts them) of
// nats-server's store for the same streams, each in its default mode.
func TestSmallStreamsDisk(t *testing.T) {
	const streams = 1000
	usage := map[string]proc.Bytes{}
	for _, spec := range []proc.Spec{benchtest.Jetwal(t), benchtest.NATSServer(t)} {
		srv := benchtest.Start(t, spec, proc.ModeDefault)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		if err := workload.SmallStreams(ctx, srv.URL(), streams, 128); err != nil {
			cancel()
			t.Fatalf("%s: %v", spec.Name, err)
		}
		cancel()
		if err := srv.Stop(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		du, err := proc.DiskUsage(srv.StoreDir())
		if err != nil {
			t.Fatal(err)
		}
		usage[spec.Name] = du
	}
	ratio := float64(usage["jetwal"]) / float64(usage["nats-server"])
	t.Logf("%d streams of one 128 B message: jetwal %.1f MiB, nats-server %.1f MiB on disk (%.2fx)",
		streams, usage["jetwal"].MiB(), usage["nats-server"].MiB(), ratio)
	if ratio > 1.5 {
		t.Fatalf("jetwal uses %.2fx the disk of nats-server for %d small streams, want at most 1.5x", ratio, streams)
	}
}
