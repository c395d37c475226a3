package segment

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// TestReadAtCopy: ReadAtCopy decodes every record, small or large, exactly
// as ReadAt does; its views live in the buffer it returns (reused when large
// enough), so they outlive the segment; a record damaged on disk is refused
// with a CorruptError naming file and offset, as ReadAt refuses it.
func TestReadAtCopy(t *testing.T) {
	s, err := Create(vfs.Default, t.TempDir(), 1, 0, 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{0, 100, CopyReadMin - 1, CopyReadMin, 256 << 10}
	var offs []int64
	for i, n := range sizes {
		data := bytes.Repeat([]byte{byte(i + 1)}, n)
		data = append(data, byte(i+100)) // a distinct last byte
		off, err := s.Append(0, uint64(i+1), int64(500+i), "sub.x", []byte("NATS/1.0\r\nk: v\r\n\r\n"), data)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 300<<10)
	var kept []Record
	for i, off := range offs {
		want, n, err := s.ReadAt(off)
		if err != nil {
			t.Fatal(err)
		}
		if l := s.RecordLen(off); l != n {
			t.Fatalf("record %d: RecordLen %d, ReadAt consumed %d", i, l, n)
		}
		// The size estimate may be exact, short (a second read), long (a
		// few bytes too many) or past the written data (clamped).
		for _, size := range []int{n, 0, 5, n / 2, n + 40, 1 << 30} {
			got, b, err := s.ReadAtCopy(off, size, buf[:0])
			if err != nil {
				t.Fatalf("record %d, size %d: %v", i, size, err)
			}
			if &b[:1][0] != &buf[:1][0] {
				t.Fatalf("record %d: a buffer of capacity %d was not reused for %d bytes", i, cap(buf), n)
			}
			if got.Flags != want.Flags || got.Seq != want.Seq || got.Time != want.Time ||
				!bytes.Equal(got.Subject, want.Subject) || !bytes.Equal(got.Header, want.Header) || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("record %d, size %d: ReadAtCopy %d/%d/%q, ReadAt %d/%d/%q", i, size, got.Seq, len(got.Data), got.Header, want.Seq, len(want.Data), want.Header)
			}
		}
		own, _, err := s.ReadAtCopy(off, 16, nil) // a buffer of its own, kept past Close
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, own)
	}

	// Damage the last byte of the large payload on disk: the shared
	// mapping and pread both see it, and both refuse the record.
	large := offs[len(offs)-1]
	pos := large + int64(s.RecordLen(large)) - ChecksumSize - 1
	f, err := os.OpenFile(s.Path(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, pos); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, err = s.ReadAtCopy(large, s.RecordLen(large), nil)
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.File != s.Path() || ce.Offset != large || ce.Expected == ce.Actual {
		t.Fatalf("damaged record: %v", err)
	}
	if _, _, err := s.ReadAt(large); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAt of damaged record: %v", err)
	}
	// A short estimate reads the rest and still checks the whole record.
	if _, _, err := s.ReadAtCopy(large, 100, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged record, short estimate: %v", err)
	}
	// An offset inside a record is no record: refused, not read.
	if _, _, err := s.ReadAtCopy(large+8, 1<<20, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset inside a record: %v", err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, r := range kept {
		if r.Seq != uint64(i+1) || len(r.Data) != sizes[i]+1 || r.Data[len(r.Data)-1] != byte(i+100) {
			t.Fatalf("record %d read before Close changed after it: seq %d, %d bytes", i, r.Seq, len(r.Data))
		}
	}
}

// TestReadAtCopyCutLength: a file cut short inside a record's length word
// (1 to 3 bytes of it left) holds no record there. ReadAtCopy refuses it
// as ReadAt does, with a CorruptError, whatever the size estimate; it must
// not take the length word from fewer than 4 bytes.
func TestReadAtCopyCutLength(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(vfs.Default, dir, 1, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := range 2 {
		off, err := s.Append(0, uint64(i+1), 0, "a", nil, make([]byte, 16<<10))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	for cut := int64(1); cut <= 3; cut++ {
		if err := os.Truncate(path, offs[1]+cut); err != nil {
			t.Fatal(err)
		}
		r, err := Open(vfs.Default, path, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.ReadAt(offs[1]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut %d bytes into the length word: ReadAt %v", cut, err)
		}
		for _, size := range []int{0, 16 << 10, 1 << 20} {
			_, _, err := r.ReadAtCopy(offs[1], size, nil)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Offset != offs[1] {
				t.Fatalf("cut %d bytes into the length word, estimate %d: ReadAtCopy %v", cut, size, err)
			}
		}
		if _, _, err := r.ReadAtCopy(offs[0], 1<<20, nil); err != nil {
			t.Fatalf("the record before the cut: %v", err)
		}
		r.Close()
	}
}
