package fuzz

import (
	"errors"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

func validSegment(n int) []byte {
	fs := vfs.NewMemFS()
	s, err := segment.Create(fs, "/", 7, 1, 4096)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		s.Append(0, uint64(7+i), int64(i), "a.b", []byte("NATS/1.0\r\n\r\n"), []byte("payload"))
	}
	s.Seal()
	f, _ := fs.Open(s.Path())
	size, _ := f.Size()
	b := make([]byte, size)
	f.ReadAt(b, 0)
	return b
}

// FuzzSegmentDecode: arbitrary bytes as a segment never panic; the decoder
// returns records (each proven by its checksum), end of data, or ErrCorrupt.
func FuzzSegmentDecode(f *testing.F) {
	f.Add(validSegment(3))
	f.Add(validSegment(0))
	b := validSegment(5)
	b[60] ^= 0xff
	f.Add(b)
	f.Add([]byte("JWS1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMemFS()
		w, err := fs.Create("/x.seg")
		if err != nil {
			t.Fatal(err)
		}
		w.WriteAt(data, 0)
		w.Close()
		s, err := segment.Open(fs, "/x.seg", false)
		if err != nil {
			var ce *segment.CorruptError
			if !errors.Is(err, store.ErrCorrupt) && !errors.As(err, &ce) && len(data) >= segment.HeaderSize && data[4] == segment.Version {
				t.Fatalf("open: %v", err)
			}
			return
		}
		defer s.Close()
		var prev int64 = -1
		res, err := s.Scan(func(off int64, r *segment.Record) error {
			if off <= prev {
				t.Fatalf("offsets not increasing: %d after %d", off, prev)
			}
			prev = off
			if _, _, err := s.ReadAt(off); err != nil {
				t.Fatalf("scan returned a record ReadAt rejects at %d: %v", off, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("scan: %v", err)
		}
		for _, d := range res.Damage {
			if !errors.Is(d.Err, store.ErrCorrupt) {
				t.Fatalf("damage not ErrCorrupt: %v", d.Err)
			}
		}
		// Reads at arbitrary offsets fail cleanly.
		for off := int64(0); off < int64(len(data)) && off < 512; off += 7 {
			if _, _, err := s.ReadAt(off); err != nil && !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("ReadAt(%d): %v", off, err)
			}
		}
	})
}
