package jetstream

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/testbin"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// BenchmarkPublishPath drives a stream's subscription handler the way the
// server does for `nats bench js pub async`: 128 B messages, every one with
// its own reply inbox under one wildcard subscription (as nats.go's async
// publisher does), at most 500 in flight. The PubAcks are really delivered
// (to an internal subscription that counts them), so the cost of routing
// each PubAck is included; the client's own costs are not.
func BenchmarkPublishPath(b *testing.B) {
	msgID := func(i int) []byte { return fmt.Appendf(nil, "NATS/1.0\r\nNats-Msg-Id: %d\r\n\r\n", i) }
	for _, c := range []struct {
		name    string
		storage api.StorageType
		sync    wal.SyncMode
		hdr     func(i int) []byte
	}{
		{"file/sync=always/hdr=none", api.FileStorage, wal.SyncAlways, nil},
		{"file/sync=never/hdr=none", api.FileStorage, wal.SyncNever, nil},
		{"file/sync=never/hdr=msgid", api.FileStorage, wal.SyncNever, msgID},
		{"memory/hdr=none", api.MemoryStorage, wal.SyncNever, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv, jsm, stop := benchServerJS(b, Config{Sync: c.sync})
			defer stop()
			cfg, aerr := validate.Stream(&api.StreamConfig{Name: "P", Subjects: []string{"p"}, Storage: c.storage})
			if aerr != nil {
				b.Fatal(aerr)
			}
			s, _, aerr := jsm.createStream(cfg)
			if aerr != nil {
				b.Fatal(aerr)
			}
			const window = 500
			var acked atomic.Int64
			wake := make(chan struct{}, 1)
			sub, err := srv.Subscribe("_INBOX.bench.*", "", func(m *server.Msg) {
				acked.Add(1)
				select {
				case wake <- struct{}{}:
				default:
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Unsubscribe()
			// More distinct inboxes than any result cache holds, built
			// before the clock starts.
			replies := make([]string, 1<<16)
			for i := range replies {
				replies[i] = "_INBOX.bench." + strconv.Itoa(i)
			}
			var hdrs [][]byte
			if c.hdr != nil {
				hdrs = make([][]byte, b.N)
				for i := range hdrs {
					hdrs[i] = c.hdr(i)
				}
			}
			payload := make([]byte, 128)
			m := &server.Msg{Subject: "p", Data: payload}
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for int64(i)-acked.Load() >= window {
					select {
					case <-wake:
					case <-time.After(10 * time.Second):
						b.Fatalf("no PubAck for 10s: %d of %d acked", acked.Load(), i)
					}
				}
				m.Reply = replies[i&(len(replies)-1)]
				if hdrs != nil {
					m.Header = hdrs[i]
				}
				s.handlePublish(m)
			}
			for acked.Load() < int64(b.N) {
				select {
				case <-wake:
				case <-time.After(10 * time.Second):
					b.Fatalf("no PubAck for 10s: %d of %d acked", acked.Load(), b.N)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			b.StopTimer()
			if got := s.store.State().Msgs; got != uint64(b.N) {
				b.Fatalf("stored %d messages, want %d", got, b.N)
			}
		})
	}
}

// BenchmarkPublishCLI runs the real `nats bench js pub async` (1 client,
// batches of 500, 128 B, file storage) against an in-process server in its
// default mode (sync always), so a -cpuprofile shows the server side only.
// b.N is the message count; use e.g. -benchtime 300000x.
func BenchmarkPublishCLI(b *testing.B) {
	bin := testbin.NatsCLI(b)
	srv, _, stop := benchServerJS(b, Config{Sync: wal.SyncAlways})
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--server", srv.ClientURL(), "bench", "js", "pub", "async", "benchsubj",
		"--create", "--storage", "file", "--msgs", strconv.Itoa(b.N), "--size", "128", "--no-progress")
	cmd.Env = append(cmd.Environ(), "HOME="+b.TempDir())
	b.SetBytes(128)
	b.ResetTimer()
	out, err := cmd.CombinedOutput()
	b.StopTimer()
	if err != nil {
		b.Fatalf("nats bench: %v\n%s", err, out)
	}
	rate, ok := parseBenchRate(string(out))
	if !ok {
		b.Fatalf("no rate in nats bench output:\n%s", out)
	}
	b.ReportMetric(rate, "msgs/s")
}

var benchRateRE = regexp.MustCompile(`stats: ([0-9,]+) msgs/sec`)

// parseBenchRate picks the aggregate msgs/sec from `nats bench` output.
func parseBenchRate(out string) (float64, bool) {
	m := benchRateRE.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	return v, err == nil
}
