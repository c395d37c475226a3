package wal

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// BenchmarkAppendCompress compares S2-compressed sealed segments
// (Options.Compress, a stream's compression "s2") with plain ones, for a
// payload S2 shrinks (repeated JSON-like text) and one it cannot (random
// bytes). It reports append throughput and the bytes the segment files
// take on disk per message once the store is closed. Segments are 1 MiB so
// that nearly everything is sealed (and compressed) by then.
func BenchmarkAppendCompress(b *testing.B) {
	const size = 1024
	payloads := map[string]func(i int) []byte{
		"compressible": func(i int) []byte {
			line := fmt.Sprintf(`{"order":%d,"status":"shipped","items":["a","b"]} `, i)
			return []byte(strings.Repeat(line, size/len(line)+1)[:size])
		},
		"random": func(i int) []byte {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			p := make([]byte, size)
			for j := range p {
				p[j] = byte(r.Uint32())
			}
			return p
		},
	}
	for _, kind := range []string{"compressible", "random"} {
		for _, comp := range []bool{false, true} {
			name := fmt.Sprintf("size=%d/payload=%s/compress=%v", size, kind, comp)
			b.Run(name, func(b *testing.B) {
				// Payloads made before timing starts: 4 MiB of them, more
				// than a segment, so S2 finds no repeats across messages.
				pool := make([][]byte, 4096)
				for i := range pool {
					pool[i] = payloads[kind](i)
				}
				dir := b.TempDir()
				s := benchOpen(b, dir, Options{Sync: SyncNever, SegmentSize: 1 << 20, Compress: comp})
				b.SetBytes(size)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := s.AppendAsync("bench.orders", nil, pool[i%len(pool)], nil); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
				b.ReportMetric(float64(segmentFileBytes(b, dir))/float64(b.N), "disk-B/msg")
			})
		}
	}
}

// segmentFileBytes sums the sizes of the segment files in dir.
func segmentFileBytes(b *testing.B, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if !strings.Contains(e.Name(), ".seg") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}
