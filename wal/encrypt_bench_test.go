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

// Measured on the 2-core shared VM (AMD EPYC), -benchtime 500ms -count 5,
// after the per-session subkeys (crypt 64ae290); the machine was busy, so
// the fastest of the 5 runs is given (medians in the commit message),
// ns/op, ratio to enc=none:
//
//	              size     none     chacha          aes
//	append        128       230       585 (2.5x)     470 (2.0x)
//	append      16384      7203     16996 (2.4x)   11046 (1.5x)
//	append     262144    103583    206655 (2.0x)  250980 (2.4x)
//	load          128       243       596 (2.5x)     472 (1.9x)
//	load        16384      2537     10391 (4.1x)    7210 (2.8x)
//	load       262144     30297    129997 (4.3x)   70080 (2.3x)
//
// At 16 KiB and up the cost is the cipher's throughput (ChaCha20-Poly1305
// about 2 GB/s here, AES-GCM 3-4 GB/s) against a plain read that is a
// memory copy: issue 48's 25 % target at 256 KiB is out of reach of any
// per-record AEAD on this machine; at 128 B it is the fixed cost of one
// seal or open (a few hundred ns) against a 230 ns append.

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
