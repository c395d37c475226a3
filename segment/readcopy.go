package segment

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/jetwal/jetwal/crypt"
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

// ReadAtCopy decodes the record at off like ReadAt, but reads it with pread
// into buf (grown when too small) instead of through the mapping. The record
// views alias the returned buffer, not the mapping, so they stay valid after
// the segment is closed. The checksum is verified on the copy, so a corrupt
// record is reported exactly as ReadAt reports it.
//
// size is the caller's estimate of the record's length (the distance to the
// next record, say): that many bytes are read with the first pread, so the
// length word never has to be read through the mapping; a record longer than
// that costs a second pread, a shorter one reads a few bytes too many.
//
// The caller must have flushed the record first (off < Flushed()) and keep
// the segment open for the duration of the call, as for ReadAt.
func (s *Segment) ReadAtCopy(off int64, size int, buf []byte) (Record, []byte, error) {
	if s.compressed {
		// Decoded on the heap already: there is no mapping to fault in.
		r, _, err := s.ReadAt(off)
		return r, buf, err
	}
	if off < HeaderSize || off >= s.end {
		return Record{}, buf, fmt.Errorf("segment: %s: offset %d outside written data [%d, %d): %w",
			s.path, off, HeaderSize, s.end, ErrCorrupt)
	}
	size = int(min(max(int64(size), 4), s.end-off, MaxRecordSize))
	buf, err := s.readInto(buf, 0, off, size)
	if err != nil {
		return Record{}, buf, err
	}
	// Fewer than 4 bytes before the end (a file cut short inside the
	// length word): no length to read; decodeRecord reports the record.
	if l := recordLenOf(buf); l > int64(size) && l <= min(s.end-off, MaxRecordSize) {
		// Longer than estimated: read the rest after what is there.
		if buf, err = s.readInto(buf, size, off+int64(size), int(l)-size); err != nil {
			return Record{}, buf, err
		}
	}
	var r Record
	_, st, reason, want, got := decodeRecord(buf, &r, s.ov)
	if st != decodeOK {
		if st == decodeEnd {
			reason = "zero length where a record was expected"
		}
		return Record{}, buf, &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}
	}
	if r.raw != nil && s.key != nil {
		// buf is the caller's copy: open the record in place.
		if _, err := s.unseal(&r, r.Data[crypt.NonceSize:crypt.NonceSize], off); err != nil {
			return Record{}, buf, err
		}
	}
	return r, buf, nil
}

// recordLenOf is the length word at the start of b, 0 when b is shorter.
func recordLenOf(b []byte) int64 {
	if len(b) < 4 {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(b))
}

// readInto reads n bytes at file offset off into buf[at:at+n], growing buf
// (keeping buf[:at]) when its capacity is short; it returns buf[:at+n].
func (s *Segment) readInto(buf []byte, at int, off int64, n int) ([]byte, error) {
	buf = slices.Grow(buf[:at], n)[:at+n] // one allocation when short, none otherwise
	if got, err := s.f.ReadAt(buf[at:], off); got < n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return buf[:at], fmt.Errorf("segment: %s: read %d bytes at offset %d (got %d): %w", s.path, n, off, got, err)
	}
	return buf, nil
}

// ReadSpan reads up to n bytes of written records from off into buf (grown
// when short) with pread, stopping at the end of the written data: it is how
// a sequential reader fills a read-ahead window (package wal) without
// touching the mapping. Decode records from the result with ReadAtBuf. The
// caller must keep the segment open for the call, as for ReadAt.
func (s *Segment) ReadSpan(buf []byte, off int64, n int) ([]byte, error) {
	if s.compressed {
		return buf[:0], ErrSealed
	}
	if off < HeaderSize || off >= s.end {
		return buf[:0], fmt.Errorf("segment: %s: offset %d outside written data [%d, %d): %w",
			s.path, off, HeaderSize, s.end, ErrCorrupt)
	}
	return s.readInto(buf, 0, off, int(min(int64(n), s.end-off)))
}
