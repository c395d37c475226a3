package wal

import (
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/internal/resident"
	"github.com/jetwal/jetwal/store"
)

// storeFileRSS sums the resident mapped bytes of dir's segment files.
func storeFileRSS(t *testing.T, dir string) int64 {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range names {
		rss, err := resident.FileRSS(n)
		if err != nil {
			t.Fatal(err)
		}
		total += rss
	}
	return total
}

// TestSequentialReaderCoolsBehind: a reader going through 80 MiB of small
// records with LoadNext (as a consumer does) leaves at most about
// readBudget of the store's files resident, in whichever segments; random
// reads by Load keep what they touched. A purge removes segments the
// budget still names, and reading on past it cools only live ones.
func TestSequentialReaderCoolsBehind(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20}
	const n, size = 80 << 10, 1000 // about 80 MiB of records
	s := writeAndReopen(t, dir, o, n, zeros(size))
	defer s.Close()
	const budget = readBudget * coolChunk
	var m store.Msg
	read := func(from, to uint64) {
		t.Helper()
		for q := from; q <= to; q++ {
			if err := s.LoadNext("", q, &m); err != nil || m.Seq != q || len(m.Data) != size {
				t.Fatalf("load next %d: seq %d, %d bytes, %v", q, m.Seq, len(m.Data), err)
			}
		}
	}
	read(1, n)
	if rss := storeFileRSS(t, dir); rss > budget+2*coolChunk || rss < budget/2 {
		t.Fatalf("after reading %d MiB in order: %d MiB resident, want about %d MiB", n*size>>20, rss>>20, budget>>20)
	}
	// Load does not cool: reading every message by sequence keeps them.
	for q := uint64(1); q <= n; q++ {
		if err := s.Load(q, &m); err != nil {
			t.Fatal(err)
		}
	}
	if rss := storeFileRSS(t, dir); rss < 3*budget/2 {
		t.Fatalf("after loading every message by sequence: %d MiB resident, want more than %d MiB", rss>>20, 3*budget/2>>20)
	}
	// Remove the first half (whole segments go), append more and read on:
	// the budget's chunks of removed segments are skipped, live ones cooled.
	if _, err := s.Compact(n / 2); err != nil {
		t.Fatal(err)
	}
	for q := 0; q < n/2; q++ {
		if err := s.AppendAsync("a.b", nil, make([]byte, size), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	coolAll(s)
	read(n/2, n+n/2)
	if rss := storeFileRSS(t, dir); rss > budget+2*coolChunk {
		t.Fatalf("after a compaction and reading on: %d MiB resident, want at most about %d MiB", rss>>20, budget>>20)
	}
}

// coolAll drops every segment's pages from the resident set.
func coolAll(s *Store) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.segs {
		e.seg.Cool()
	}
}
