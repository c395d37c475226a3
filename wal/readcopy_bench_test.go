package wal

import (
	"fmt"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

// BenchmarkLoadLarge reads large messages in order, once each per opening,
// as a consumer reads a stream: 128 MiB of messages in page cache whose
// pages this process has not mapped yet (the store is reopened after each
// pass, outside the timer). Before large records were read with pread, a
// 256 KiB load here was dominated by page faults on the mapping.
func BenchmarkLoadLarge(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			dir := b.TempDir()
			o := Options{Sync: SyncNever}
			s := benchOpen(b, dir, o)
			n := (128 << 20) / size
			fill(b, s, n, func(int) string { return "large.subject" }, size)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			s = benchOpen(b, dir, o)
			var m store.Msg
			b.SetBytes(int64(size))
			b.ResetTimer()
			var cpu time.Duration
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if i > 0 && i%n == 0 {
					cpu += cpuTime() - c0
					b.StopTimer()
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					s = benchOpen(b, dir, o)
					b.StartTimer()
					c0 = cpuTime()
				}
				if err := s.Load(uint64(i%n)+1, &m); err != nil {
					b.Fatal(err)
				}
			}
			cpu += cpuTime() - c0
			b.StopTimer()
			s.Close()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1000, "cpu-us/op")
		})
	}
}
