package jetstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/wal"
)

// BenchmarkConsumerCreate creates durable consumers one after another, as
// `nats consumer add` or a client's CreateOrUpdateConsumer does, under sync
// always: each reply waits for the consumer's files to be durable. Reports
// ms per create and fsyncs' share is what dominates.
func BenchmarkConsumerCreate(b *testing.B) {
	srv, stop := benchServer(b, Config{Sync: wal.SyncAlways})
	defer stop()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.STREAM.CREATE.S", []byte(`{"name":"S","subjects":["s.>"]}`), 10*time.Second); err != nil {
		b.Fatal(err)
	}
	i := 0
	start := time.Now()
	for b.Loop() {
		name := fmt.Sprintf("D%06d", i)
		i++
		body := fmt.Sprintf(`{"stream_name":"S","config":{"durable_name":%q,"ack_policy":"explicit"}}`, name)
		m, err := nc.Request("$JS.API.CONSUMER.DURABLE.CREATE.S."+name, []byte(body), 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if len(m.Data) == 0 || m.Data[0] != '{' {
			b.Fatalf("reply %q", m.Data)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(i), "ms/create")
}
