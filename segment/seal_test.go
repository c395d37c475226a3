package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

func sealedSegment(t *testing.T, c crypt.Cipher, n int) (*Segment, *crypt.DataKey, []int64) {
	t.Helper()
	key, err := crypt.NewDataKey(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := CreateKey(vfs.Default, t.TempDir(), 1, 42, 1<<20, key)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := 1; i <= n; i++ {
		off, err := s.Append(0, uint64(i), int64(1000+i), fmt.Sprintf("secret.%d", i%3), []byte("NATS/1.0\r\nX-Secret: hidden\r\n\r\n"), bytes.Repeat([]byte{'P'}, 100+i))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return s, key, offs
}

func checkRec(t *testing.T, i int, r Record) {
	t.Helper()
	if r.Sealed() || r.Seq != uint64(i) || r.Time != int64(1000+i) || string(r.Subject) != fmt.Sprintf("secret.%d", i%3) ||
		string(r.Header) != "NATS/1.0\r\nX-Secret: hidden\r\n\r\n" || len(r.Data) != 100+i || r.Data[0] != 'P' {
		t.Fatalf("record %d: %+v", i, r)
	}
}

// TestSealedRoundTrip reads sealed records through every read path, finds
// no plain text in the file, and scans it without the key for structure.
func TestSealedRoundTrip(t *testing.T) {
	for _, c := range []crypt.Cipher{crypt.ChaCha, crypt.AES} {
		t.Run(c.String(), func(t *testing.T) {
			s, key, offs := sealedSegment(t, c, 40)
			for i, off := range offs {
				r, _, err := s.ReadAt(off)
				if err != nil {
					t.Fatal(err)
				}
				checkRec(t, i+1, r)
				r, _, err = s.ReadAtCopy(off, 64, nil)
				if err != nil {
					t.Fatal(err)
				}
				checkRec(t, i+1, r)
				var rr Record
				if _, _, err := s.ReadIntoBuf(off, &rr, nil); err != nil {
					t.Fatal(err)
				}
				checkRec(t, i+1, rr)
			}
			if err := s.Seal(); err != nil {
				t.Fatal(err)
			}
			raw, _ := readAll(s.Path())
			for _, w := range []string{"secret.", "X-Secret", "hidden", strings.Repeat("P", 20)} {
				if bytes.Contains(raw, []byte(w)) {
					t.Fatalf("%q in the file", w)
				}
			}
			s.Close()
			// With the key: every record opens.
			s2, err := OpenKey(vfs.Default, s.Path(), false, key)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			if _, err := s2.Scan(func(_ int64, r *Record) error { n++; checkRec(t, n, *r); return nil }); err != nil || n != 40 {
				t.Fatalf("scan: %d %v", n, err)
			}
			// Compressed: still sealed, still opens.
			cs, err := Compress(s2)
			if err != nil {
				t.Fatal(err)
			}
			if !cs.Encrypted() || !cs.Compressed() {
				t.Fatal("compressed segment lost its flags")
			}
			n = 0
			if _, err := cs.Scan(func(_ int64, r *Record) error { n++; checkRec(t, n, *r); return nil }); err != nil || n != 40 {
				t.Fatalf("compressed scan: %d %v", n, err)
			}
			cs.Close()
			// Without the key: structure only, records sealed.
			s3, err := Open(vfs.Default, cs.Path(), false)
			if err != nil {
				t.Fatal(err)
			}
			defer s3.Close()
			n = 0
			res, err := s3.Scan(func(_ int64, r *Record) error {
				n++
				if !r.Sealed() || r.Seq != uint64(n) {
					t.Fatalf("record %d not sealed: %+v", n, r)
				}
				return nil
			})
			if err != nil || n != 40 || len(res.Damage) != 0 {
				t.Fatalf("keyless scan: %d %v %+v", n, err, res)
			}
		})
	}
}

// TestSealedTamper: a ciphertext byte changed with the checksum recomputed
// fails the tag (reported with file and offset, never returned); a wrong
// key or a record moved to another base fails the same way.
func TestSealedTamper(t *testing.T) {
	s, key, offs := sealedSegment(t, crypt.ChaCha, 5)
	s.Close()
	path := s.Path()
	raw, _ := readAll(path)
	off := offs[2]
	l := int64(binary.LittleEndian.Uint32(raw[off:]))
	raw[off+RecordHeader+crypt.NonceSize+3] ^= 1
	binary.LittleEndian.PutUint64(raw[off+l-ChecksumSize:], xxhash.Sum64(raw[off:off+l-ChecksumSize]))
	if err := writeAll(path, raw); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenKey(vfs.Default, path, false, key)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	_, _, err = s2.ReadAt(off)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != off || ce.File != path || !errors.Is(err, ErrCorrupt) || !strings.Contains(ce.Reason, "authentication") {
		t.Fatalf("tampered read: %v", err)
	}
	if _, _, err := s2.ReadAtCopy(off, 8, nil); !errors.As(err, &ce) || ce.Offset != off {
		t.Fatalf("tampered copy read: %v", err)
	}
	var seqs []uint64
	res, err := s2.Scan(func(_ int64, r *Record) error { seqs = append(seqs, r.Seq); return nil })
	if err != nil || len(res.Damage) != 1 || res.Damage[0].Offset != off || fmt.Sprint(seqs) != "[1 2 4 5]" {
		t.Fatalf("scan: %v %+v %v", err, res, seqs)
	}
	// Structure without the key: the checksum holds, nothing is damaged.
	s3, _ := Open(vfs.Default, path, false)
	defer s3.Close()
	if res, _ := s3.Scan(func(int64, *Record) error { return nil }); len(res.Damage) != 0 {
		t.Fatalf("keyless scan found damage: %+v", res)
	}
	// Another key: every record fails.
	other, _ := crypt.NewDataKey(crypt.ChaCha)
	s4, _ := OpenKey(vfs.Default, path, false, other)
	defer s4.Close()
	if _, _, err := s4.ReadAt(offs[0]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("other key: %v", err)
	}
}

// TestSealedErase: an erased sealed record opens as zeros with the erased
// flag, under a nonce not used before.
func TestSealedErase(t *testing.T) {
	s, _, offs := sealedSegment(t, crypt.AES, 3)
	defer s.Close()
	before, _ := readAll(s.Path())
	if err := s.Erase(offs[1]); err != nil {
		t.Fatal(err)
	}
	r, _, err := s.ReadAt(offs[1])
	if err != nil || r.Flags&FlagErased == 0 || r.Seq != 2 || len(r.Data) != 102 || !bytes.Equal(r.Data, make([]byte, 102)) {
		t.Fatalf("erased: %+v %v", r, err)
	}
	after, _ := readAll(s.Path())
	n0 := before[offs[1]+RecordHeader : offs[1]+RecordHeader+crypt.NonceSize]
	n1 := after[offs[1]+RecordHeader : offs[1]+RecordHeader+crypt.NonceSize]
	if bytes.Equal(n0, n1) {
		t.Fatal("erase reused the record's nonce")
	}
}
