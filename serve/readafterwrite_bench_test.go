package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// BenchmarkKVReadAfterWrite measures how often a KV get through each
// server of a 3-server cluster, sent right after a put was acknowledged,
// misses that put: direct gets of an R3 bucket are answered by any current
// replica (cluster_direct.go), and a follower may not have the put yet.
// stale/op is the fraction of gets that returned an older value; the same
// program against three nats-server v2.15.2 gave about 0.05.
//
//	go test -run '^$' -bench KVReadAfterWrite -benchtime 100x ./serve/
func BenchmarkKVReadAfterWrite(b *testing.B) {
	servers := startCluster(b, 3)
	ctx := context.Background()
	var kvs []njs.KeyValue
	for i, s := range servers {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		js, _ := njs.New(nc)
		var kv njs.KeyValue
		deadline := time.Now().Add(60 * time.Second)
		for {
			if i == 0 {
				kv, err = js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "B", Replicas: 3})
			} else {
				kv, err = js.KeyValue(ctx, "B")
			}
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			b.Fatal(err)
		}
		kvs = append(kvs, kv)
	}
	stale, gets := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := fmt.Sprint(i)
		if _, err := kvs[0].PutString(ctx, "k", v); err != nil {
			b.Fatal(err)
		}
		for _, kv := range kvs {
			e, err := kv.Get(ctx, "k")
			gets++
			if err != nil || string(e.Value()) != v {
				stale++
			}
		}
	}
	b.ReportMetric(float64(stale)/float64(gets), "stale/op")
}
