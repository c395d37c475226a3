package enginepeer

import (
	"fmt"
	"github.com/jetwal/jetwal/internal/proccpu"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// engine is what the benchmarks ask of either store.
type engine interface {
	name() string
	append(subj string, data []byte) error
	load(seq uint64) ([]byte, error)   // the payload of seq
	next(start uint64) (uint64, error) // the first sequence at or after start
	settle() error                     // appends so far readable
	purge() error
	close() error
}

// opener makes a store in a fresh directory; one per store compared.
type opener func(dir string) (engine, error)

var stores = []struct {
	name string
	open opener
}{
	{"jetwal", func(dir string) (engine, error) { return openJetwal(dir) }},
	{"nats-server", func(dir string) (engine, error) { return openNats(dir) }},
}

// eachStore runs f as a sub-benchmark per store, its store open on a
// temporary directory and closed after.
func eachStore(b *testing.B, f func(b *testing.B, e engine)) {
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			e, err := st.open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer e.close()
			f(b, e)
		})
	}
}

// roundMsgs is how many messages the append benchmarks write between
// purges: like wal's benchRounds, a fixed amount of dirty page cache per
// round, so that the kernel's writeback throttling does not start at a point
// that depends on b.N.
const roundBytes = 32 << 20

// BenchmarkPeerAppend: appends without fsync, one message per call, as a
// stream's publishes arrive. Both stores are purged between rounds of
// roundBytes with the timer stopped.
func BenchmarkPeerAppend(b *testing.B) {
	for _, size := range []int{128, 16384} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			eachStore(b, func(b *testing.B, e engine) {
				data := make([]byte, size)
				per := max(1, roundBytes/size)
				b.SetBytes(int64(size))
				var cpu time.Duration
				b.ResetTimer()
				for done := 0; done < b.N; {
					n := min(per, b.N-done)
					c0 := cpuTime()
					for i := 0; i < n; i++ {
						if err := e.append("bench.subject", data); err != nil {
							b.Fatal(err)
						}
					}
					cpu += cpuTime() - c0
					done += n
					b.StopTimer()
					if err := e.purge(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.StopTimer()
				report(b, cpu)
			})
		})
	}
}

// loadMsgs is the size of the store the load benchmarks read: a million
// 128-byte messages, about 180 MB in either store, larger than the CPU
// caches, so a random load misses them as it would in a real stream.
const loadMsgs = 1 << 20

func fill(b *testing.B, e engine) {
	b.Helper()
	data := make([]byte, 128)
	for i := 0; i < loadMsgs; i++ {
		if err := e.append("load.subject", data); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.settle(); err != nil {
		b.Fatal(err)
	}
	// Read everything once, so that neither store's first pass pays for
	// faulting in what the other's did not.
	for seq := uint64(1); seq <= loadMsgs; seq++ {
		if _, err := e.load(seq); err != nil {
			b.Fatal(err)
		}
	}
}

// filled holds a filled store per store name for the load benchmarks: the
// testing package calls a benchmark's function again for each b.N it tries,
// and filling a million messages each time would dominate the run. Closed
// by TestMain.
var filled = map[string]engine{}

// loadedStores runs f per store on a store filled with loadMsgs messages.
func loadedStores(b *testing.B, f func(b *testing.B, e engine)) {
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			e := filled[st.name]
			if e == nil {
				dir, err := os.MkdirTemp("", "enginepeer-")
				if err != nil {
					b.Fatal(err)
				}
				if e, err = st.open(dir); err != nil {
					b.Fatal(err)
				}
				filled[st.name] = e
				dirs = append(dirs, dir)
				fill(b, e)
			}
			f(b, e)
		})
	}
}

var dirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, e := range filled {
		e.close()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// BenchmarkPeerLoad: random loads by sequence (a direct get, a redelivery)
// and an ordered scan by next-message (a consumer catching up).
func BenchmarkPeerLoad(b *testing.B) {
	b.Run("random", func(b *testing.B) {
		loadedStores(b, func(b *testing.B, e engine) {
			rng := rand.New(rand.NewPCG(1, 2))
			b.SetBytes(128)
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := e.load(1 + rng.Uint64N(loadMsgs)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			report(b, cpuTime()-c0)
		})
	})
	b.Run("scan", func(b *testing.B) {
		loadedStores(b, func(b *testing.B, e engine) {
			b.SetBytes(128)
			b.ResetTimer()
			c0 := cpuTime()
			seq := uint64(1)
			for i := 0; i < b.N; i++ {
				got, err := e.next(seq)
				if err != nil {
					b.Fatal(err)
				}
				if seq = got + 1; seq > loadMsgs {
					seq = 1
				}
			}
			b.StopTimer()
			report(b, cpuTime()-c0)
		})
	})
}

func report(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	d, _ := proccpu.Used()
	return d
}
