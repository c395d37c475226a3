package wal

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/store"
)

// encBenchConfigs are the encryption variants the benchmarks below compare
// side by side: the plain store is the baseline.
var encBenchConfigs = []struct {
	name string
	cfg  crypt.Config
}{
	{"none", crypt.Config{}},
	{"chacha", crypt.Config{Key: "bench key", Cipher: crypt.ChaCha}},
	{"aes", crypt.Config{Key: "bench key", Cipher: crypt.AES}},
}

var encBenchSizes = []int{128, 16 << 10, 256 << 10}

// BenchmarkAppendEncrypted is BenchmarkAppend's sync=never case (the
// engine's raw append speed, in rounds of a fixed working set) with and
// without encryption: the cost of sealing every record.
func BenchmarkAppendEncrypted(b *testing.B) {
	for _, e := range encBenchConfigs {
		for _, size := range encBenchSizes {
			b.Run(fmt.Sprintf("enc=%s/size=%d", e.name, size), func(b *testing.B) {
				s := benchOpen(b, b.TempDir(), Options{Sync: SyncNever, Encryption: e.cfg})
				defer s.Close()
				data := make([]byte, size)
				b.SetBytes(int64(size))
				benchRounds(b, s.recordSize(len("bench.subject"), 0, size), func(n int) {
					for range n {
						if err := s.AppendAsync("bench.subject", nil, data, nil); err != nil {
							b.Fatal(err)
						}
					}
				}, func() {
					if _, err := s.Purge("", 0, 0); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// BenchmarkLoadEncrypted is random Loads (BenchmarkLoad's random case) of
// a store of 32 MiB of messages of each size, with and without
// encryption: the cost of opening every record read.
func BenchmarkLoadEncrypted(b *testing.B) {
	for _, e := range encBenchConfigs {
		for _, size := range encBenchSizes {
			b.Run(fmt.Sprintf("enc=%s/size=%d", e.name, size), func(b *testing.B) {
				s := benchOpen(b, b.TempDir(), Options{Sync: SyncNever, Encryption: e.cfg})
				defer s.Close()
				n := uint64(max(64, (32<<20)/size))
				data := make([]byte, size)
				for i := range n {
					data[0] = byte(i)
					if err := s.AppendAsync("load.subject", nil, data, nil); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
				var m store.Msg
				rng := rand.New(rand.NewPCG(1, 2))
				b.SetBytes(int64(size))
				b.ResetTimer()
				for range b.N {
					q := 1 + rng.Uint64N(n)
					if err := s.Load(q, &m); err != nil || len(m.Data) != size || m.Data[0] != byte(q-1) {
						b.Fatalf("load %d: %v", q, err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}
