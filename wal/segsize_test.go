package wal

import (
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// TestSegmentsStartSmallAndDouble: the first segment is FirstSegmentSize,
// each roll doubles the next one up to SegmentSize, and a reopen goes on
// from the sizes on disk.
func TestSegmentsStartSmallAndDouble(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := Options{FS: fs, Sync: SyncNever, FirstSegmentSize: 4096, SegmentSize: 64 << 10}
	s, err := Open("/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 200)
	for i := 0; i < 2000; i++ {
		if _, _, err := s.Append("a.b", nil, data); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	var caps []int64
	for _, e := range s.segs {
		caps = append(caps, e.seg.Capacity())
	}
	s.mu.Unlock()
	want := []int64{4096, 8192, 16384, 32768, 65536}
	for i, c := range caps {
		w := want[min(i, len(want)-1)]
		if c != w && !(c > w && i == len(caps)-1) {
			t.Fatalf("segment %d has capacity %d, want %d (all: %v)", i, c, w, caps)
		}
	}
	if len(caps) < 6 {
		t.Fatalf("only %d segments: %v", len(caps), caps)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open("/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.State(); st.Msgs != 2000 {
		t.Fatalf("%d messages after reopen", st.Msgs)
	}
	if got := s.nextSegmentSize(); got != 64<<10 {
		t.Fatalf("next segment after reopen: %d bytes, want the full 64 KiB", got)
	}
}
