package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftwal "github.com/hashicorp/raft-wal"
	raftbench "github.com/hashicorp/raft/bench"

	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/raftstore"
)

// store is a raft log and stable store under test, with its closer.
type store interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// peers lists the stores each benchmark runs against, ours first.
var peers = []struct {
	name string
	open func(tb testing.TB, dir string) store
}{
	{"jetwal", func(tb testing.TB, dir string) store {
		s, err := raftstore.Open(filepath.Join(dir, "jetwal"), raftstore.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}},
	{"raftwal", func(tb testing.TB, dir string) store {
		p := filepath.Join(dir, "raftwal")
		if err := os.MkdirAll(p, 0o755); err != nil {
			tb.Fatal(err)
		}
		w, err := raftwal.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		return w
	}},
	{"boltdb", func(tb testing.TB, dir string) store {
		s, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}},
}

func makeLogs(first uint64, n, size int, term uint64) []*raft.Log {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	logs := make([]*raft.Log, n)
	now := time.Now()
	for i := range logs {
		logs[i] = &raft.Log{Index: first + uint64(i), Term: term, Type: raft.LogCommand, Data: data, AppendedAt: now}
	}
	return logs
}

// BenchmarkStoreLogs is raft's append path: batches of consecutive entries,
// each StoreLogs durable before the next.
func BenchmarkStoreLogs(b *testing.B) {
	for _, size := range []int{128, 4096} {
		for _, batch := range []int{1, 16, 256} {
			for _, p := range peers {
				b.Run(fmt.Sprintf("size=%d/batch=%d/store=%s", size, batch, p.name), func(b *testing.B) {
					// Every store gets the same treatment: a fresh store for
					// each 256 MiB written, so no store is measured on a
					// bigger log (or a busier disk) because it was faster.
					const rotate = 256 << 20
					dir := b.TempDir()
					var s store
					fresh := func() {
						if s != nil {
							s.Close()
							os.RemoveAll(dir)
							os.MkdirAll(dir, 0o755)
						}
						s = p.open(b, dir)
					}
					fresh()
					defer func() { s.Close() }()
					// One batch of Log values reused with new indexes: the
					// store must not keep references.
					logs := makeLogs(1, batch, size, 1)
					b.SetBytes(int64(size * batch))
					b.ResetTimer()
					next, written := uint64(1), 0
					for i := 0; i < b.N; i++ {
						if written >= rotate {
							b.StopTimer()
							fresh()
							next, written = 1, 0
							b.StartTimer()
						}
						for j, l := range logs {
							l.Index = next + uint64(j)
						}
						if err := s.StoreLogs(logs); err != nil {
							b.Fatal(err)
						}
						next += uint64(batch)
						written += size * batch
					}
					b.StopTimer()
					b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "entries/s")
				})
			}
		}
	}
}

// getEntries is how many 128-byte entries the GetLog benchmarks read from.
const getEntries = 100_000

// BenchmarkGetLog reads entries from a store of 100k entries in index order
// and in a random order.
func BenchmarkGetLog(b *testing.B) {
	for _, mode := range []string{"seq", "random"} {
		for _, p := range peers {
			b.Run(fmt.Sprintf("mode=%s/store=%s", mode, p.name), func(b *testing.B) {
				s := p.open(b, b.TempDir())
				defer s.Close()
				for i := 0; i < getEntries; i += 1000 {
					if err := s.StoreLogs(makeLogs(uint64(i+1), 1000, 128, 1)); err != nil {
						b.Fatal(err)
					}
				}
				order := make([]uint64, getEntries)
				for i := range order {
					order[i] = uint64(i + 1)
				}
				if mode == "random" {
					rng := rand.New(rand.NewPCG(1, 2))
					rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				}
				b.SetBytes(128)
				b.ResetTimer()
				var l raft.Log
				for i := 0; i < b.N; i++ {
					if err := s.GetLog(order[i%getEntries], &l); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDeleteRangePrefix measures the compaction raft does after a
// snapshot: deleting the oldest 1000 entries (128 B) of the log.
func BenchmarkDeleteRangePrefix(b *testing.B) {
	for _, p := range peers {
		b.Run("store="+p.name, func(b *testing.B) {
			s := p.open(b, b.TempDir())
			defer s.Close()
			if err := s.StoreLogs(makeLogs(1, 1000, 128, 1)); err != nil {
				b.Fatal(err)
			}
			next := uint64(1001)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := s.StoreLogs(makeLogs(next, 1000, 128, 1)); err != nil {
					b.Fatal(err)
				}
				next += 1000
				first, err := s.FirstIndex()
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.DeleteRange(first, first+999); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRaftHelpers runs hashicorp/raft's own bench helpers
// (github.com/hashicorp/raft/bench). StoreLog and DeleteRange are left out:
// StoreLog starts at index 0 and DeleteRange's data has gaps, which no
// monotonic store (ours or raft-wal) accepts.
func BenchmarkRaftHelpers(b *testing.B) {
	helpers := []struct {
		name string
		fn   func(*testing.B, store)
	}{
		{"FirstIndex", func(b *testing.B, s store) { raftbench.FirstIndex(b, s) }},
		{"LastIndex", func(b *testing.B, s store) { raftbench.LastIndex(b, s) }},
		{"GetLog", func(b *testing.B, s store) { raftbench.GetLog(b, s) }},
		{"StoreLogs", func(b *testing.B, s store) { raftbench.StoreLogs(b, s) }},
		{"Set", func(b *testing.B, s store) { raftbench.Set(b, s) }},
		{"Get", func(b *testing.B, s store) { raftbench.Get(b, s) }},
		{"SetUint64", func(b *testing.B, s store) { raftbench.SetUint64(b, s) }},
		{"GetUint64", func(b *testing.B, s store) { raftbench.GetUint64(b, s) }},
	}
	for _, h := range helpers {
		for _, p := range peers {
			b.Run(fmt.Sprintf("op=%s/store=%s", h.name, p.name), func(b *testing.B) {
				s := p.open(b, b.TempDir())
				defer s.Close()
				h.fn(b, s)
			})
		}
	}
}

var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
)

// openEntries is the size of the store BenchmarkOpen reopens.
const openEntries = 10_000_000

// BenchmarkOpen reopens a jetwal store of 10M entries (built once, 16-byte
// entries, about 0.6 GB). The target is at most 200 ms.
func BenchmarkOpen(b *testing.B) {
	bigOnce.Do(func() { bigDir, bigErr = buildBig() })
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	b.Run("entries=10M/store=jetwal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := raftlog.Open(nil, bigDir, raftlog.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if last, _ := s.LastIndex(); last != openEntries {
				b.Fatalf("last index %d, want %d", last, openEntries)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
	})
}

func buildBig() (string, error) {
	dir, err := os.MkdirTemp("", "jetwal-open-bench")
	if err != nil {
		return "", err
	}
	s, err := raftlog.Open(nil, dir, raftlog.Options{})
	if err != nil {
		return "", err
	}
	const batch = 10_000
	es := make([]raftlog.Entry, batch)
	data := []byte("0123456789abcdef")
	for i := 0; i < openEntries; i += batch {
		for j := range es {
			es[j] = raftlog.Entry{Index: uint64(i + j + 1), Term: 1, Type: 0, Data: data}
		}
		if err := s.StoreEntries(es); err != nil {
			s.Close()
			return "", err
		}
	}
	return dir, s.Close()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}
