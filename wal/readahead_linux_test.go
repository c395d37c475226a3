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

// TestSequentialReaderLeavesNothingResident: a reader going through 80 MiB
// of small records with LoadNext (as a consumer does) reads them from
// read-ahead windows and leaves none of the store's file pages resident,
// before and after a compaction removed segments; random reads by Load go
// through the mapping and keep what they touched.
func TestSequentialReaderLeavesNothingResident(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20}
	const n, size = 80 << 10, 1000 // about 80 MiB of records
	s := writeAndReopen(t, dir, o, n, zeros(size))
	defer s.Close()
	coolAll(s)
	const most = 2 << 20 // segment headers and a stray length word
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
	if rss := storeFileRSS(t, dir); rss > most {
		t.Fatalf("after reading %d MiB in order: %d KiB resident, want at most %d KiB", n*size>>20, rss>>10, most>>10)
	}
	// Load reads through the mapping: every message by sequence stays.
	for q := uint64(1); q <= n; q++ {
		if err := s.Load(q, &m); err != nil {
			t.Fatal(err)
		}
	}
	if rss := storeFileRSS(t, dir); rss < 48<<20 {
		t.Fatalf("after loading every message by sequence: %d MiB resident, want more than 48 MiB", rss>>20)
	}
	// Remove the first half (whole segments go), append more and read on
	// from cold: windows of removed segments are never consulted again.
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
	if rss := storeFileRSS(t, dir); rss > most {
		t.Fatalf("after a compaction and reading on: %d KiB resident, want at most %d KiB", rss>>10, most>>10)
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
