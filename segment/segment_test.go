package segment

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

func writeSegment(t *testing.T, dir string, n int) (*Segment, []int64) {
	t.Helper()
	s, err := Create(vfs.Default, dir, 1, 42, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := 1; i <= n; i++ {
		off, err := s.Append(0, uint64(i), int64(1000+i), fmt.Sprintf("sub.%d", i%3), []byte("NATS/1.0\r\n\r\n"), bytes.Repeat([]byte{byte(i)}, 100))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return s, offs
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, offs := writeSegment(t, dir, 50)
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		if err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(i+1) || r.Time != int64(1001+i) || string(r.Subject) != fmt.Sprintf("sub.%d", (i+1)%3) || len(r.Data) != 100 || r.Data[0] != byte(i+1) {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	s.Close()
	s2, err := Open(vfs.Default, s.Path(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Base() != 1 || s2.Created() != 42 {
		t.Fatalf("header: base %d created %d", s2.Base(), s2.Created())
	}
	var seqs []uint64
	res, err := s2.Scan(func(off int64, r *Record) error { seqs = append(seqs, r.Seq); return nil })
	if err != nil || len(res.Damage) != 0 || len(seqs) != 50 {
		t.Fatalf("scan: %v %+v %d", err, res, len(seqs))
	}
	if res.End != offs[49]+int64(EncodedSize(5, 12, 100)) {
		t.Fatalf("end %d", res.End)
	}
}

func TestFullAndSeal(t *testing.T) {
	s, err := Create(vfs.Default, t.TempDir(), 1, 0, int64(HeaderSize+2*EncodedSize(1, 0, 10)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 2; i++ {
		if _, err := s.Append(0, uint64(i), 0, "a", nil, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(0, 3, 0, "a", nil, make([]byte, 10)); !errors.Is(err, ErrFull) {
		t.Fatalf("want ErrFull, got %v", err)
	}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(0, 3, 0, "a", nil, nil); !errors.Is(err, ErrSealed) {
		t.Fatalf("want ErrSealed, got %v", err)
	}
}

// TestDamage is the table of corruption cases: each damages a segment of 20
// records and states which sequences a scan must still return and whether
// the damage is a tail.
func TestDamage(t *testing.T) {
	recSize := int64(EncodedSize(5, 12, 100))
	cases := []struct {
		name    string
		corrupt func(b []byte, offs []int64) []byte
		want    int  // records returned
		tail    bool // damage is a tail (nothing valid after)
	}{
		{"bitflip-middle", func(b []byte, o []int64) []byte { b[o[5]+40] ^= 1; return b }, 19, false},
		{"bitflip-length", func(b []byte, o []int64) []byte { b[o[5]] ^= 0x40; return b }, 19, false},
		{"zero-sector-middle", func(b []byte, o []int64) []byte {
			for i := o[3]; i < o[3]+512; i++ {
				b[i] = 0
			}
			return b
		}, 16, false},
		{"torn-last", func(b []byte, o []int64) []byte {
			for i := o[19] + 50; i < int64(len(b)); i++ {
				b[i] = 0
			}
			return b
		}, 19, true},
		{"truncated-mid-record", func(b []byte, o []int64) []byte { return b[:o[19]+30] }, 19, true},
		{"checksum-last", func(b []byte, o []int64) []byte { b[o[19]+recSize-1] ^= 0xff; return b }, 19, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, offs := writeSegment(t, dir, 20)
			s.Seal()
			s.Close()
			b, err := readAll(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			b = tc.corrupt(b, offs)
			if err := writeAll(s.Path(), b); err != nil {
				t.Fatal(err)
			}
			s2, err := Open(vfs.Default, s.Path(), false)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			got := 0
			res, err := s2.Scan(func(off int64, r *Record) error { got++; return nil })
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %d records, want %d", got, tc.want)
			}
			if len(res.Damage) != 1 {
				t.Fatalf("damage %+v", res.Damage)
			}
			d := res.Damage[0]
			if (d.Resync < 0) != tc.tail {
				t.Fatalf("tail=%v, damage %+v", tc.tail, d)
			}
			if !errors.Is(d.Err, ErrCorrupt) || d.Err.File != s.Path() {
				t.Fatalf("error %v", d.Err)
			}
		})
	}
}

func TestCompressed(t *testing.T) {
	dir := t.TempDir()
	s, offs := writeSegment(t, dir, 30)
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	c, err := Compress(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Compressed() {
		t.Fatal("not compressed")
	}
	for i, off := range offs {
		r, _, err := c.ReadAt(off)
		if err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(i+1) {
			t.Fatalf("seq %d", r.Seq)
		}
	}
	c.Close()
	c2, err := Open(vfs.Default, c.Path(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	n := 0
	if _, err := c2.Scan(func(int64, *Record) error { n++; return nil }); err != nil || n != 30 {
		t.Fatalf("scan %d %v", n, err)
	}
}

func TestErase(t *testing.T) {
	s, offs := writeSegment(t, t.TempDir(), 3)
	defer s.Close()
	if err := s.Erase(offs[1]); err != nil {
		t.Fatal(err)
	}
	r, _, err := s.ReadAt(offs[1])
	if err != nil {
		t.Fatal(err)
	}
	if r.Flags&FlagErased == 0 || r.Seq != 2 || !allZero(r.Data) || !allZero(r.Subject) {
		t.Fatalf("not erased: %+v", r)
	}
}

func TestHeaderCorrupt(t *testing.T) {
	s, _ := writeSegment(t, t.TempDir(), 1)
	s.Close()
	b, _ := readAll(s.Path())
	b[9] ^= 1
	writeAll(s.Path(), b)
	if _, err := Open(vfs.Default, s.Path(), false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
}
