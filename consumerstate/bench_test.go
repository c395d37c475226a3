package consumerstate

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// window keeps a fixed number of pending messages: each step acks one of
// them (the oldest, or a pseudo-random one) and delivers a new one.
type window struct {
	seqs   []StreamSeq
	next   StreamSeq
	x      uint64 // xorshift state
	random bool
	oldest int
}

func newWindow(s *State, n int, random bool) *window {
	w := &window{seqs: make([]StreamSeq, n), next: 1, x: 88172645463325252, random: random}
	for i := range w.seqs {
		s.Deliver(w.next, 1, int64(w.next))
		w.seqs[i] = w.next
		w.next++
	}
	return w
}

func (w *window) step(s *State) {
	i := w.oldest
	if w.random {
		w.x ^= w.x << 13
		w.x ^= w.x >> 7
		w.x ^= w.x << 17
		i = int(w.x % uint64(len(w.seqs)))
	} else {
		w.oldest = (w.oldest + 1) % len(w.seqs)
	}
	s.Ack(w.seqs[i])
	s.Deliver(w.next, 1, int64(w.next))
	w.seqs[i] = w.next
	w.next++
}

func reportRate(b *testing.B, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, unit)
	}
}

// BenchmarkAck measures acks on a state with 10,000 pending messages; each
// op is one ack plus the delivery that keeps the window full.
func BenchmarkAck(b *testing.B) {
	for _, order := range []string{"inorder", "random"} {
		b.Run("pending=10000/order="+order+"/path=state", func(b *testing.B) {
			var s State
			w := newWindow(&s, 10000, order == "random")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w.step(&s)
			}
			b.StopTimer()
			reportRate(b, "acks/s")
			if s.NumPending() != 10000 {
				b.Fatalf("pending %d", s.NumPending())
			}
		})
	}
	b.Run("pending=10000/order=random/path=consumer", func(b *testing.B) {
		st, err := Open("/obs", Options{FS: vfs.NewMemFS(), Sync: SyncInterval(time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		c, err := st.Create("c", []byte(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		var w *window
		c.Update(func(s *State) { w = newWindow(s, 10000, true) })
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.Update(w.step)
		}
		b.StopTimer()
		reportRate(b, "acks/s")
	})
}

func benchFS(b *testing.B, kind string) (vfs.FS, string) {
	if kind == "os" {
		return vfs.Default, filepath.Join(b.TempDir(), "obs")
	}
	return vfs.NewMemFS(), "/obs"
}

// BenchmarkCheckpoint measures compacted snapshots of a consumer with
// 10,000 pending messages (encode, write temp, fsync, new log, rename,
// directory fsync), and batch flushes of the dirty tenth of 1,000 consumers.
func BenchmarkCheckpoint(b *testing.B) {
	b.Run("pending=10000/encode", func(b *testing.B) {
		var s State
		w := newWindow(&s, 10000, true)
		for range 5000 {
			w.step(&s)
		}
		var buf []byte
		var e encoder
		b.ResetTimer()
		for range b.N {
			w.step(&s)
			buf = e.appendEncoded(buf[:0], &s, 1)
		}
		b.SetBytes(int64(len(buf)))
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/checkpoint")
	})
	for _, fsKind := range []string{"mem", "os"} {
		b.Run("pending=10000/fs="+fsKind, func(b *testing.B) {
			fsys, dir := benchFS(b, fsKind)
			st, err := Open(dir, Options{FS: fsys, Sync: SyncInterval(time.Hour)})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			c, err := st.Create("c", []byte(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			var w *window
			c.Update(func(s *State) { w = newWindow(s, 10000, true) })
			b.ResetTimer()
			for range b.N {
				c.Update(w.step)
				if err := c.Checkpoint(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			c.fmu.Lock()
			b.SetBytes(c.fmu.snapSize)
			c.fmu.Unlock()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/checkpoint")
		})
	}
	for _, fsKind := range []string{"mem", "os"} {
		for _, mode := range []string{"log", "snapshot"} {
			name := fmt.Sprintf("consumers=1000/dirty=10pct/pending=100/mode=%s/fs=%s", mode, fsKind)
			b.Run(name, func(b *testing.B) {
				fsys, dir := benchFS(b, fsKind)
				opts := Options{FS: fsys, Sync: SyncInterval(time.Hour)}
				if mode == "snapshot" {
					opts.CompactBytes = -1
				}
				st, err := Open(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				cs := make([]*Consumer, 1000)
				ws := make([]*window, len(cs))
				for i := range cs {
					if cs[i], err = st.Create(fmt.Sprintf("c%d", i), []byte(`{}`)); err != nil {
						b.Fatal(err)
					}
					cs[i].Update(func(s *State) { ws[i] = newWindow(s, 100, true) })
				}
				if err := st.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for n := range b.N {
					for i := n % 10; i < len(cs); i += 10 {
						cs[i].Update(ws[i].step)
					}
					if err := st.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				ms := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N)
				b.ReportMetric(ms, "ms/batch")
				b.ReportMetric(100/ms*1000, "consumers/s")
			})
		}
	}
}

// BenchmarkConfirmedAck measures what a confirmed ack costs under sync
// "always": one ack (plus a delivery) and a durable Flush, with the log
// (mode=log) or with a full snapshot per flush (mode=snapshot, the
// write-temp-rename design).
func BenchmarkConfirmedAck(b *testing.B) {
	for _, fsKind := range []string{"mem", "os"} {
		for _, pending := range []int{100, 10000} {
			for _, mode := range []string{"log", "snapshot"} {
				b.Run(fmt.Sprintf("pending=%d/mode=%s/fs=%s", pending, mode, fsKind), func(b *testing.B) {
					fsys, dir := benchFS(b, fsKind)
					opts := Options{FS: fsys, Sync: SyncAlways()}
					if mode == "snapshot" {
						opts.CompactBytes = -1
					}
					st, err := Open(dir, opts)
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
					c, err := st.Create("c", []byte(`{}`))
					if err != nil {
						b.Fatal(err)
					}
					var w *window
					c.Update(func(s *State) { w = newWindow(s, pending, true) })
					if err := c.Checkpoint(); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for range b.N {
						c.Update(w.step)
						if err := c.Flush(); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					reportRate(b, "acks/s")
				})
			}
		}
	}
}

// BenchmarkCreate measures creating a durable consumer's state on the real
// filesystem with every write synced (sync always): the cost of a
// durable consumer create, which is mostly fsync latency.
func BenchmarkCreate(b *testing.B) {
	fsys, dir := benchFS(b, "os")
	st, err := Open(dir, Options{FS: fsys, Sync: SyncAlways()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := []byte(`{"durable_name":"d","ack_policy":"explicit"}`)
	i := 0
	for b.Loop() {
		if _, err := st.Create(fmt.Sprintf("C%07d", i), cfg); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(i), "ms/create")
}

// BenchmarkCreateMaterialized is BenchmarkCreate plus the work Create
// leaves for later: each consumer's state changes once (one delivery), and
// every 100 creates Store.Flush writes the changed consumers' directories
// (8 at a time), so ms/create is the whole cost of a consumer reaching its
// own directory.
func BenchmarkCreateMaterialized(b *testing.B) {
	fsys, dir := benchFS(b, "os")
	st, err := Open(dir, Options{FS: fsys, Sync: SyncAlways()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := []byte(`{"durable_name":"d","ack_policy":"explicit"}`)
	i := 0
	for b.Loop() {
		c, err := st.Create(fmt.Sprintf("C%07d", i), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Update(func(s *State) { s.Deliver(1, 1, 1) }); err != nil {
			b.Fatal(err)
		}
		i++
		if i%100 == 0 {
			if err := st.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(i), "ms/create")
}
