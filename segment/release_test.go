package segment

import "testing"

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
