package wal

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/internal/resident"
	"github.com/jetwal/jetwal/store"
)

// TestRestartLeavesSegmentsCold: after a clean close and a reopen, the
// store's segment files are not resident in the process: the checkpoint
// spares the scan of what it covers, and the zero-filled tail of the
// active segment is checked without touching its mapping. After a Verify
// (which reads every record) they are cold again.
func TestRestartLeavesSegmentsCold(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20, FirstSegmentSize: 16 << 20}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, _, err := s.Append("a.b", nil, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(names) != 1 {
		t.Fatalf("segments %v, want one", names)
	}
	cold := func(when string) {
		t.Helper()
		rss, err := resident.FileRSS(names[0])
		if err != nil {
			t.Fatal(err)
		}
		if rss > 1<<20 {
			t.Fatalf("%s: %d bytes of the 16 MiB segment resident, want at most 1 MiB", when, rss)
		}
	}
	cold("after reopening")
	if d := s.Verify(); len(d) != 0 {
		t.Fatalf("verify: %v", d)
	}
	cold("after Verify")
	var m store.Msg
	if err := s.Load(1000, &m); err != nil || len(m.Data) != 100 {
		t.Fatalf("load 1000: %v", err)
	}
}

// TestVerifyChunks: Verify scans plain segments a chunk (verifyChunk) at a
// time; damage deep in a sealed segment, past the first chunks, is found
// once and only the message it hit is lost.
func TestVerifyChunks(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 4 << 20, FirstSegmentSize: 4 << 20}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000 // about 5.5 MiB: the first segment fills and seals
	for range n {
		if _, _, err := s.Append("a.b", nil, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(names) < 2 {
		t.Fatalf("segments %v, want at least two", names)
	}
	b, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	const at = 3*verifyChunk + 12345
	if len(b) <= at {
		t.Fatalf("first segment %d bytes, want more than %d", len(b), at)
	}
	b[at] ^= 0x10
	if err := os.WriteFile(names[0], b, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.Verify()
	if len(d) != 1 || d[0].File != names[0] || d[0].Offset > at || d[0].Offset < at-200 {
		t.Fatalf("verify: %v, want one damage just before offset %d of %s", d, at, names[0])
	}
	st := s.State()
	if st.Msgs != n-1 || st.Lost == nil || len(st.Lost.Msgs) != 1 {
		t.Fatalf("state %+v, want %d messages and one lost", st, n-1)
	}
	var m store.Msg
	if err := s.Load(st.Lost.Msgs[0], &m); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("load of the lost message: %v", err)
	}
}
