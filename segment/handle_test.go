package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// openFDs counts this process's descriptors open on path.
func openFDs(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("no /proc/self/fd (jetwal runs on Linux): %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == path {
			n++
		}
	}
	return n
}

// idleTwice runs the idle timer's check twice, as two idle periods in a
// row would: the first sees the uses since the handle was armed, the second
// none.
func idleTwice(s *Segment) {
	s.f.idle()
	s.f.idle()
}

// TestIdleReleasesDescriptor: a segment's descriptor is closed after two
// idle checks with nothing unsynced, never with a write unsynced; the
// records stay readable through the mapping, and the next write and sync
// open the file again.
func TestIdleReleasesDescriptor(t *testing.T) {
	dir := t.TempDir()
	s, offs := writeSegment(t, dir, 10)
	defer s.Close()
	path := s.Path()
	if n := openFDs(t, path); n != 1 {
		t.Fatalf("new segment: %d descriptors on it, want 1", n)
	}
	idleTwice(s)
	if n := openFDs(t, path); n != 0 {
		t.Fatalf("idle and synced: %d descriptors, want 0", n)
	}
	for i, off := range offs {
		if r, _, err := s.ReadAt(off); err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("record %d after release: seq %d, %v", i+1, r.Seq, err)
		}
	}
	off, err := s.Append(0, 11, 1011, "sub.x", nil, []byte("after"))
	if err == nil {
		err = s.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	idleTwice(s)
	if n := openFDs(t, path); n != 1 {
		t.Fatalf("written, not synced: %d descriptors after idling, want 1 (kept open)", n)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	idleTwice(s)
	if n := openFDs(t, path); n != 0 {
		t.Fatalf("synced and idle: %d descriptors, want 0", n)
	}
	if r, _, err := s.ReadAt(off); err != nil || string(r.Data) != "after" {
		t.Fatalf("record written on the reopened file: %q, %v", r.Data, err)
	}
	if err := s.Sync(); err != nil { // reopens, syncs
		t.Fatal(err)
	}
	s2, err := Open(vfs.Default, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var n int
	if _, err := s2.Scan(func(int64, *Record) error { n++; return nil }); err != nil || n != 11 {
		t.Fatalf("reopened segment scans %d records (%v), want 11", n, err)
	}
}

// TestIdleKeepsDescriptorInUse: a descriptor a call holds is not closed,
// and a segment in use keeps its descriptor across idle checks.
func TestIdleKeepsDescriptorInUse(t *testing.T) {
	dir := t.TempDir()
	s, _ := writeSegment(t, dir, 1)
	defer s.Close()
	f, err := s.f.acquire()
	if err != nil {
		t.Fatal(err)
	}
	idleTwice(s)
	if _, err := f.ReadAt(make([]byte, HeaderSize), 0); err != nil {
		t.Fatalf("descriptor held by a call was closed under it: %v", err)
	}
	s.f.release(false)
	for i := 0; i < 3; i++ {
		if _, err := s.Append(0, uint64(i+2), 1, fmt.Sprintf("s.%d", i), nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		s.f.idle()
		if n := openFDs(t, s.Path()); n != 1 {
			t.Fatalf("segment written between idle checks: %d descriptors, want 1", n)
		}
	}
}
