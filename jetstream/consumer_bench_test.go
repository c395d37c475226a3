package jetstream

import (
	"context"
	"fmt"
	"github.com/jetwal/jetwal/internal/proccpu"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// BenchmarkFetch measures messages per second a pull consumer hands to a
// nats.go client fetching batches of 500, as `nats bench js fetch` does,
// from a file stream preloaded with b.N messages of 128 bytes.
func BenchmarkFetch(b *testing.B) {
	for _, ack := range []njs.AckPolicy{njs.AckNonePolicy, njs.AckExplicitPolicy} {
		b.Run(fmt.Sprintf("size=128/ack=%s", ack), func(b *testing.B) {
			srv, stop := benchServer(b, Config{Sync: wal.SyncNever})
			defer stop()
			nc, err := nats.Connect(srv.ClientURL())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, _ := njs.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b.>"}})
			if err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, 128)
			for i := 0; i < b.N; i++ {
				if _, err := js.PublishAsync("b.x", payload); err != nil {
					b.Fatal(err)
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				b.Fatal("publish timed out")
			}
			c, err := s.CreateOrUpdateConsumer(ctx, njs.ConsumerConfig{Durable: "f", AckPolicy: ack})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(128)
			b.ResetTimer()
			got := 0
			for got < b.N {
				batch, err := c.Fetch(min(500, b.N-got), njs.FetchMaxWait(10*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				for m := range batch.Messages() {
					if ack != njs.AckNonePolicy {
						m.Ack()
					}
					got++
				}
				if batch.Error() != nil {
					b.Fatal(batch.Error())
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkRestartDurables measures how long JetStream takes to start over
// a stream with 1,000 durable consumers (each with a delivered and acked
// position), and reports the CPU the idle server then uses per second.
func BenchmarkRestartDurables(b *testing.B) {
	const consumers = 1000
	dir := b.TempDir()
	cfg := Config{StoreDir: dir, Sync: wal.SyncNever}
	srv, js0, stop := benchServerJSDir(b, cfg)
	nc, _ := nats.Connect(srv.ClientURL())
	js, _ := njs.New(nc)
	ctx := context.Background()
	s, err := js.CreateStream(ctx, njs.StreamConfig{Name: "R", Subjects: []string{"r.>"}})
	if err != nil {
		b.Fatal(err)
	}
	js.Publish(ctx, "r.x", []byte("x"))
	for i := 0; i < consumers; i++ {
		c, err := s.CreateOrUpdateConsumer(ctx, njs.ConsumerConfig{Durable: fmt.Sprintf("c%04d", i), AckPolicy: njs.AckExplicitPolicy})
		if err != nil {
			b.Fatal(err)
		}
		if m, err := c.Next(); err == nil {
			m.DoubleAck(ctx)
		}
	}
	_ = js0
	nc.Close()
	stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		srv, js1, stop := benchServerJSDir(b, cfg)
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "restart-ms")
		if n := js1.lookup("R").cons.count(); n != consumers {
			b.Fatalf("%d consumers after restart", n)
		}
		time.Sleep(200 * time.Millisecond) // let the first rounds finish
		before := cpuTime()
		time.Sleep(time.Second)
		b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000, "idle-cpu-ms/s")
		_ = srv
		stop()
	}
}

// benchServerJSDir is benchServerJS over a given store directory.
func benchServerJSDir(b *testing.B, cfg Config) (*server.Server, *JetStream, func()) {
	b.Helper()
	srv, err := server.New(server.Options{Host: "127.0.0.1", Port: 0, JetStream: true, APILevel: api.Level})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	js, err := New(srv, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return srv, js, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	d, _ := proccpu.Used()
	return d
}
