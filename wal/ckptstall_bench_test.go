package wal

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

// BenchmarkCheckpointStall writes a periodic checkpoint of a stream of 4M
// messages (128 bytes, 1,000 subjects; a checkpoint of about 16 MB) while
// a reader loads random messages, and reports how long the checkpoint took
// (ckpt-ms) and the longest single Load during it (stall-ms): the time the
// checkpoint kept the store's readers, and its appenders, waiting. Only
// encoding and writing the index to the page cache may hold the store lock;
// the fsync of the checkpoint, its rename and the directory fsync must not.
func BenchmarkCheckpointStall(b *testing.B) {
	const n = 4 << 20
	s := benchOpen(b, b.TempDir(), Options{Sync: SyncNever, CheckpointEvery: -1})
	defer s.Close()
	fill(b, s, n, func(i int) string { return fmt.Sprintf("ckpt.%d", i%1000) }, 128)
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	var ckpt, stall time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		var (
			stop    atomic.Bool
			longest time.Duration
			reads   int
			wg      sync.WaitGroup
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m store.Msg
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			for !stop.Load() {
				t0 := time.Now()
				if err := s.Load(1+rng.Uint64N(n), &m); err != nil {
					b.Error(err)
					return
				}
				longest = max(longest, time.Since(t0))
				reads++
			}
		}()
		time.Sleep(5 * time.Millisecond) // the reader is running
		b.StartTimer()
		t0 := time.Now()
		if err := s.periodicCheckpoint(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		b.StopTimer()
		stop.Store(true)
		wg.Wait()
		if reads == 0 {
			b.Fatal("the reader never loaded a message")
		}
		ckpt += d
		stall = max(stall, longest)
		b.StartTimer()
	}
	b.ReportMetric(float64(ckpt.Microseconds())/1000/float64(b.N), "ckpt-ms")
	b.ReportMetric(float64(stall.Microseconds())/1000, "stall-ms")
}
