package segment

import (
	"bytes"
	"testing"
)

// TestReleaseBuffers: a segment that went through a background write keeps
// its write buffer and the settled one for reuse; ReleaseBuffers drops both
// when nothing is buffered, keeps a buffer that holds records, and appends
// after it allocate again and read back.
func TestReleaseBuffers(t *testing.T) {
	s, _ := gatedSegment(t)
	offs := appendN(t, s, 1, 3)
	if err := s.StartFlush(0); err != nil {
		t.Fatal(err)
	}
	offs = append(offs, appendN(t, s, 4, 3)...)
	if err := s.Flush(); err != nil { // settles the first write: its buffer is kept
		t.Fatal(err)
	}
	if cap(s.spare) == 0 || cap(s.wbuf) == 0 {
		t.Fatalf("after a background write and a flush: write buffer %d, kept %d bytes; want both kept", cap(s.wbuf), cap(s.spare))
	}
	offs = append(offs, appendN(t, s, 7, 1)...)
	s.ReleaseBuffers()
	if cap(s.spare) != 0 || s.Buffered() == 0 || s.BufferBytes() != cap(s.wbuf) {
		t.Fatalf("released with a record buffered: kept %d, buffered %d, %d bytes held; want 0 kept and the record still buffered", cap(s.spare), s.Buffered(), s.BufferBytes())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.ReleaseBuffers()
	if n := s.BufferBytes(); n != 0 {
		t.Fatalf("released with nothing buffered: %d bytes held, want 0", n)
	}
	offs = append(offs, appendN(t, s, 8, 2)...)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		checkRecord(t, r, err, i+1)
	}
}

// TestFreezeReleasesBuffers: a frozen segment takes no more appends, so it
// holds no write buffer, even after a background write.
func TestFreezeReleasesBuffers(t *testing.T) {
	s, _ := gatedSegment(t)
	offs := appendN(t, s, 1, 3)
	if err := s.StartFlush(0); err != nil {
		t.Fatal(err)
	}
	offs = append(offs, appendN(t, s, 4, 3)...)
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	if n := s.BufferBytes(); n != 0 {
		t.Fatalf("frozen segment holds %d bytes of write buffers, want 0", n)
	}
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		checkRecord(t, r, err, i+1)
	}
}

// TestReleasedBuffersReused: the buffers a frozen segment lets go serve the
// next segment's appends, so a stream rolling to a new segment does not grow
// fresh ones; what the new segment writes reads back intact. sync.Pool may
// drop what it is given (at random under the race detector, and at a GC), so
// the test rolls many segments and asks that most start with a pooled
// buffer.
func TestReleasedBuffersReused(t *testing.T) {
	fs := memDir(t)
	big := bytes.Repeat([]byte{'x'}, minPooled)
	const rolls = 40
	reused := 0
	for i := 0; i < rolls; i++ {
		s, err := Create(fs, "/d", uint64(1000*i+1), 1, 4<<20)
		if err != nil {
			t.Fatal(err)
		}
		// A small first record: grown from nothing its buffer would be
		// far smaller than a pooled one.
		off, err := s.Append(0, uint64(1000*i+1), 1, "small", nil, []byte("abc"))
		if err != nil {
			t.Fatal(err)
		}
		if cap(s.wbuf) >= minPooled {
			reused++
		}
		if _, err := s.Append(0, uint64(1000*i+2), 1, "big", nil, big); err != nil {
			t.Fatal(err)
		}
		if err := s.StartFlush(0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(0, uint64(1000*i+3), 1, "big", nil, big); err != nil {
			t.Fatal(err)
		}
		if err := s.Freeze(); err != nil {
			t.Fatal(err)
		}
		r, _, err := s.ReadAt(off)
		if err != nil || r.Seq != uint64(1000*i+1) || string(r.Data) != "abc" {
			t.Fatalf("segment %d: first record %+v, %v", i, r, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if reused < rolls/2 {
		t.Fatalf("%d of %d new segments started with a pooled buffer, want most", reused, rolls)
	}
}
