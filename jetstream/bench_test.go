package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/wal"
)

// benchServer starts a server with JetStream for a benchmark.
func benchServer(b *testing.B, cfg Config) (*server.Server, func()) {
	srv, _, stop := benchServerJS(b, cfg)
	return srv, stop
}

func benchServerJS(b *testing.B, cfg Config) (*server.Server, *JetStream, func()) {
	b.Helper()
	cfg.StoreDir = b.TempDir()
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

// BenchmarkPublishAsync measures stored-and-acknowledged messages per
// second through the nats.go async publisher, 500 in flight, as
// `nats bench js pub async` runs it.
func BenchmarkPublishAsync(b *testing.B) {
	for _, c := range []struct {
		name    string
		storage njs.StorageType
		sync    wal.SyncMode
	}{
		{"storage=file/sync=always", njs.FileStorage, wal.SyncAlways},
		{"storage=file/sync=never", njs.FileStorage, wal.SyncNever},
		{"storage=memory", njs.MemoryStorage, wal.SyncAlways},
	} {
		b.Run(fmt.Sprintf("size=128/%s", c.name), func(b *testing.B) {
			srv, stop := benchServer(b, Config{Sync: c.sync})
			defer stop()
			nc, err := nats.Connect(srv.ClientURL())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, _ := njs.New(nc, njs.WithPublishAsyncMaxPending(500))
			ctx := context.Background()
			if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b"}, Storage: c.storage}); err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, 128)
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := js.PublishAsync("b", payload); err != nil {
					b.Fatal(err)
				}
			}
			<-js.PublishAsyncComplete()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// BenchmarkPublishSync measures one publish and its PubAck at a time.
func BenchmarkPublishSync(b *testing.B) {
	srv, stop := benchServer(b, Config{Sync: wal.SyncAlways})
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := njs.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: "B", Subjects: []string{"b"}}); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 128)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := js.Publish(ctx, "b", payload); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkHandlePublish measures the stream layer alone: the subscription
// handler of a stream, called as the server calls it, through AppendAsync to
// the PubAck publish (to a reply nobody listens on).
func BenchmarkHandlePublish(b *testing.B) {
	for _, c := range []struct {
		name    string
		storage api.StorageType
		hdr     []byte
	}{
		{"storage=memory/hdr=none", api.MemoryStorage, nil},
		{"storage=file/sync=never/hdr=none", api.FileStorage, nil},
		{"storage=memory/hdr=msgid", api.MemoryStorage, []byte("NATS/1.0\r\nNats-Msg-Id: 0123456789\r\n\r\n")},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, jsm, stop := benchServerJS(b, Config{Sync: wal.SyncNever})
			defer stop()
			cfg, aerr := validate.Stream(&api.StreamConfig{Name: "H", Subjects: []string{"h"}, Storage: c.storage})
			if aerr != nil {
				b.Fatal(aerr)
			}
			s, _, aerr := jsm.createStream(cfg)
			if aerr != nil {
				b.Fatal(aerr)
			}
			payload := make([]byte, 128)
			m := &server.Msg{Subject: "h", Reply: "_INBOX.x.y", Data: payload}
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Header = c.hdr
				if c.hdr != nil {
					// A fresh id each time: the dedupe table grows as in use.
					m.Header = fmt.Appendf(m.Header[:0:0], "NATS/1.0\r\nNats-Msg-Id: %d\r\n\r\n", i)
				}
				s.handlePublish(m)
			}
			b.StopTimer()
			for s.store.State().Msgs != uint64(b.N) {
				time.Sleep(time.Millisecond)
			}
		})
	}
}
