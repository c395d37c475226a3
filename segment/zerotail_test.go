package segment

import (
	"fmt"
	"os"
	"testing"

	"github.com/jetwal/jetwal/internal/resident"
	"github.com/jetwal/jetwal/vfs"
)

// activeWithTail writes n records into a preallocated segment of capacity
// bytes and reopens it writable, as recovery reopens the active segment:
// its records are followed by a long zero-filled tail.
func activeWithTail(t *testing.T, capacity int64, n int, poke int64) *Segment {
	t.Helper()
	s, err := Create(vfs.Default, t.TempDir(), 1, 0, capacity)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := s.Append(0, uint64(i), 0, "a", nil, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	if poke > 0 {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{7}, poke); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	s2, err := Open(vfs.Default, path, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

// TestZeroTail: a zero length followed only by zeros ends the data; one
// non-zero byte anywhere after it, even megabytes on, is damage.
func TestZeroTail(t *testing.T) {
	const capacity = 4 << 20
	end := int64(HeaderSize + 10*EncodedSize(1, 0, 100))
	for _, poke := range []int64{0, end + 1, end + zeroReadChunk, capacity - 1} {
		t.Run(fmt.Sprintf("poke=%d", poke), func(t *testing.T) {
			s := activeWithTail(t, capacity, 10, poke)
			got := 0
			res, err := s.Scan(func(int64, *Record) error { got++; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if got != 10 || res.End != end {
				t.Fatalf("got %d records ending at %d, want 10 ending at %d", got, res.End, end)
			}
			if damaged := len(res.Damage) > 0; damaged != (poke > 0) {
				t.Fatalf("non-zero byte at %d: damage %+v", poke, res.Damage)
			}
			if poke > 0 && (res.Damage[0].Offset != end || res.Damage[0].Resync >= 0) {
				t.Fatalf("damage %+v, want a tail at %d", res.Damage[0], end)
			}
			if err := s.SetEnd(res.End); err != nil {
				t.Fatal(err)
			}
			// SetEnd zeroed the torn tail: a second scan ends cleanly.
			res, err = s.Scan(func(int64, *Record) error { return nil })
			if err != nil || len(res.Damage) != 0 || res.End != end {
				t.Fatalf("after SetEnd: %v %+v", err, res)
			}
		})
	}
}

// TestZeroTailNotResident: scanning a reopened active segment leaves its
// zero-filled tail out of the process's resident set (it is checked with
// pread, not through the mapping).
func TestZeroTailNotResident(t *testing.T) {
	const capacity = 16 << 20
	s := activeWithTail(t, capacity, 10, 0)
	res, err := s.Scan(func(int64, *Record) error { return nil })
	if err != nil || len(res.Damage) != 0 {
		t.Fatalf("scan: %v %+v", err, res)
	}
	if err := s.SetEnd(res.End); err != nil {
		t.Fatal(err)
	}
	rss, err := resident.FileRSS(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if rss > 1<<20 {
		t.Fatalf("%d bytes of %s resident after the scan, want at most 1 MiB of its %d", rss, s.Path(), capacity)
	}
}
