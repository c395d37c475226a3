package segment

import (
	"encoding/binary"
	"fmt"
)

// CopyReadMin is the record length from which ReadAtCopy is the cheaper read.
//
// A record read through the mapping costs a page fault for every page the
// process has not touched yet, and a consumer reading a stream touches each
// page once. On the 2-core VM the benchmarks run on, a fresh 256 KiB record
// took about 135 µs to checksum through the mapping (nearly all of it faults
// mapping page-cache pages, 64 per record) against about 30 µs to pread into a
// buffer and checksum there; the same holds from a few pages up. Below a
// page or two the mapping wins: no system call, and small records share pages.
const CopyReadMin = 8 << 10

// RecordLen returns the length word of the record at off, read from the
// mapping, or 0 when off is outside the written data or the segment is
// compressed. It does not validate the record; ReadAt and ReadAtCopy do.
func (s *Segment) RecordLen(off int64) int {
	if s.compressed || off < HeaderSize || off+4 > s.end {
		return 0
	}
	return int(binary.LittleEndian.Uint32(s.data[off:]))
}

// ReadAtCopy decodes the record at off like ReadAt, but reads it with one
// pread into buf (grown when too small) instead of through the mapping. The
// record views alias the returned buffer, not the mapping, so they stay valid
// after the segment is closed. The checksum is verified on the copy, so a
// corrupt record is reported exactly as ReadAt reports it. The caller must
// have flushed the record first (off < Flushed()) and keep the segment open
// for the duration of the call, as for ReadAt.
func (s *Segment) ReadAtCopy(off int64, buf []byte) (Record, []byte, error) {
	if s.compressed {
		// Decoded on the heap already: the mapping cost does not exist.
		r, _, err := s.ReadAt(off)
		if err != nil {
			return Record{}, buf, err
		}
		return r, buf, nil
	}
	l := s.RecordLen(off)
	if l < RecordMinSize || l > MaxRecordSize || off+int64(l) > s.end {
		// Not a readable record: ReadAt names what is wrong with it.
		_, _, err := s.ReadAt(off)
		if err == nil {
			err = &CorruptError{File: s.path, Offset: off, Reason: "record length word changed while read"}
		}
		return Record{}, buf, err
	}
	if cap(buf) < l {
		buf = make([]byte, l)
	}
	buf = buf[:l]
	if n, err := s.f.ReadAt(buf, off); n < l {
		return Record{}, buf, fmt.Errorf("segment: %s: read record at offset %d (%d of %d bytes): %w", s.path, off, n, l, err)
	}
	r, _, st, reason, want, got := decodeRecord(buf)
	if st != decodeOK {
		if st == decodeEnd {
			reason = "zero length where a record was expected"
		}
		return Record{}, buf, &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}
	}
	return r, buf, nil
}
