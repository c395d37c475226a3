package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/segment"
)

// On-disk format constants. Changing any of them breaks existing stores.
const (
	// MetaFile marks a directory as a raft log store and holds the first
	// index (see doc.go). Its presence is how `jetwal verify` recognises one.
	MetaFile = "raftlog.meta"
	// StableFile holds the StableStore keys and values.
	StableFile = "raftlog.stable"
	// LockFile is flocked while a Store is open.
	LockFile = "raftlog.lock"
	// IndexSuffix names the offset index written beside a sealed segment.
	IndexSuffix = ".idx"

	stableMagic = "JWRK"
	indexMagic  = "JWRI"
	fileVersion = 1

	stableHeader    = 12
	indexHeaderSize = 40

	// entryHeader is the fixed part of the record header block: term (8),
	// type (1), time kind (1).
	entryHeader = 10

	timeZero    = 0 // AppendedAt is the zero time; the record timestamp is 0
	timeNanos   = 1 // the record timestamp is AppendedAt in unix nanoseconds
	timeSeconds = 2 // the timestamp is unix seconds; 4 bytes of nanoseconds follow
)

// ErrCorrupt is the engine's corruption sentinel (segment.ErrCorrupt).
var ErrCorrupt = segment.ErrCorrupt

// ErrNotFound is returned by Get for an index outside [FirstIndex, LastIndex].
var ErrNotFound = errors.New("raftlog: entry not found")

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("raftlog: store closed")

// Entry is one raft log entry. Index 0 is not a valid index.
type Entry struct {
	Index      uint64
	Term       uint64
	Type       uint8
	Data       []byte
	Extensions []byte
	// AppendedAt round-trips exactly (instant, not location or monotonic
	// clock reading); the zero time stays the zero time.
	AppendedAt time.Time
}

// corrupt builds a *segment.CorruptError, which wraps ErrCorrupt.
func corrupt(file string, off int64, format string, args ...any) error {
	return &segment.CorruptError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// minNanoTime and maxNanoTime bound the instants UnixNano represents.
var (
	minNanoTime = time.Unix(0, math.MinInt64+1)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// appendEntryHeader appends the record header block for e to dst and returns
// it with the record timestamp.
func appendEntryHeader(dst []byte, e *Entry) ([]byte, int64) {
	var h [entryHeader + 4]byte
	binary.LittleEndian.PutUint64(h[0:], e.Term)
	h[8] = e.Type
	n := entryHeader
	var ts int64
	switch t := e.AppendedAt; {
	case t.IsZero():
		h[9] = timeZero
	case t.After(minNanoTime) && t.Before(maxNanoTime):
		h[9] = timeNanos
		ts = t.UnixNano()
	default:
		h[9] = timeSeconds
		ts = t.Unix()
		binary.LittleEndian.PutUint32(h[10:], uint32(t.Nanosecond()))
		n += 4
	}
	dst = append(dst, h[:n]...)
	return append(dst, e.Extensions...), ts
}

// decodeEntry fills e from a decoded record, copying Data and Extensions
// into one new allocation (the record aliases a mapping).
func decodeEntry(file string, off int64, r *segment.Record, e *Entry) error {
	h := r.Header
	if r.Tombstone() || len(h) < entryHeader || len(r.Subject) != 0 {
		return corrupt(file, off, "record for index %d is not a raft entry", r.Seq)
	}
	e.Index = r.Seq
	e.Term = binary.LittleEndian.Uint64(h[0:])
	e.Type = h[8]
	ext := h[entryHeader:]
	switch h[9] {
	case timeZero:
		e.AppendedAt = time.Time{}
	case timeNanos:
		e.AppendedAt = time.Unix(0, r.Time)
	case timeSeconds:
		if len(h) < entryHeader+4 {
			return corrupt(file, off, "record for index %d: short time field", r.Seq)
		}
		e.AppendedAt = time.Unix(r.Time, int64(binary.LittleEndian.Uint32(h[entryHeader:])))
		ext = h[entryHeader+4:]
	default:
		return corrupt(file, off, "record for index %d: unknown time kind %d", r.Seq, h[9])
	}
	e.Data, e.Extensions = nil, nil
	if n := len(r.Data) + len(ext); n > 0 {
		buf := make([]byte, n)
		copy(buf, r.Data)
		copy(buf[len(r.Data):], ext)
		if len(r.Data) > 0 {
			e.Data = buf[:len(r.Data):len(r.Data)]
		}
		if len(ext) > 0 {
			e.Extensions = buf[len(r.Data):]
		}
	}
	return nil
}

// encodeMeta returns the meta file's payload (see slotfile.go for the
// slots around it): the first index, 8 bytes little endian; entries below it
// are deleted (0: none).
func encodeMeta(first uint64) []byte {
	return binary.LittleEndian.AppendUint64(nil, first)
}

func decodeMeta(file string, p []byte) (uint64, error) {
	if len(p) != 8 {
		return 0, corrupt(file, slotHeader, "meta payload is %d bytes, want 8", len(p))
	}
	return binary.LittleEndian.Uint64(p), nil
}

// encodeStable returns the stable file's payload (see slotfile.go for the
// slots around it) for kv, keys in sorted order.
//
//	offset size field
//	0      4    magic "JWRK"
//	4      1    version (1)
//	5      3    reserved, zero
//	8      4    number of pairs N
//	12     ...  N times: key length K (4), value length V (4), key, value
//	end-8  8    xxhash64 of every byte before it
func encodeStable(keys []string, kv map[string][]byte) []byte {
	n := stableHeader + 8
	for _, k := range keys {
		n += 8 + len(k) + len(kv[k])
	}
	b := make([]byte, stableHeader, n)
	copy(b, stableMagic)
	b[4] = fileVersion
	binary.LittleEndian.PutUint32(b[8:], uint32(len(keys)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(kv[k])))
		b = append(b, k...)
		b = append(b, kv[k]...)
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

func decodeStable(file string, b []byte) (map[string][]byte, error) {
	if len(b) < stableHeader+8 {
		return nil, corrupt(file, 0, "stable file is %d bytes, too short", len(b))
	}
	if string(b[:4]) != stableMagic {
		return nil, corrupt(file, 0, "bad magic %q", b[:4])
	}
	end := len(b) - 8
	if want, got := binary.LittleEndian.Uint64(b[end:]), xxhash.Sum64(b[:end]); want != got {
		return nil, &segment.CorruptError{File: file, Offset: int64(end), Reason: "stable file checksum mismatch", Expected: want, Actual: got}
	}
	if b[4] != fileVersion {
		return nil, fmt.Errorf("%s: unsupported raftlog format version %d", file, b[4])
	}
	n := binary.LittleEndian.Uint32(b[8:])
	kv := make(map[string][]byte, min(int(n), 1024))
	p := stableHeader
	for i := uint32(0); i < n; i++ {
		if end-p < 8 {
			return nil, corrupt(file, int64(p), "pair %d header runs past the end", i)
		}
		kl := int(binary.LittleEndian.Uint32(b[p:]))
		vl := int(binary.LittleEndian.Uint32(b[p+4:]))
		p += 8
		if kl > end-p || vl > end-p-kl {
			return nil, corrupt(file, int64(p-8), "pair %d runs past the end", i)
		}
		kv[string(b[p:p+kl])] = append([]byte(nil), b[p+kl:p+kl+vl]...)
		p += kl + vl
	}
	if p != end {
		return nil, corrupt(file, int64(p), "%d trailing bytes after %d pairs", end-p, n)
	}
	return kv, nil
}

// encodeIndex returns the offset index of a sealed segment.
//
//	offset size field
//	0      4    magic "JWRI"
//	4      1    version (1)
//	5      3    reserved, zero
//	8      8    segment base index
//	16     8    segment end: its file size once sealed
//	24     4    number of records N
//	28     4    reserved, zero
//	32     8    segment creation time (its header's), unix nanoseconds
//	40     4N   byte offset of each record, in index order
//	40+4N  8    xxhash64 of every byte before it
//
// Base, end and creation time together tie the index to one incarnation of
// its segment file.
func encodeIndex(base uint64, end, created int64, offs []uint32) []byte {
	b := make([]byte, indexHeaderSize, indexHeaderSize+4*len(offs)+8)
	copy(b, indexMagic)
	b[4] = fileVersion
	binary.LittleEndian.PutUint64(b[8:], base)
	binary.LittleEndian.PutUint64(b[16:], uint64(end))
	binary.LittleEndian.PutUint32(b[24:], uint32(len(offs)))
	binary.LittleEndian.PutUint64(b[32:], uint64(created))
	for _, o := range offs {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// decodeIndex checks an index file against the segment it describes.
func decodeIndex(file string, b []byte, base uint64, end, created int64) ([]uint32, error) {
	if len(b) < indexHeaderSize+8 || string(b[:4]) != indexMagic {
		return nil, corrupt(file, 0, "not an index file (%d bytes)", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[24:]))
	if len(b) != indexHeaderSize+4*n+8 {
		return nil, corrupt(file, 24, "index of %d records is %d bytes", n, len(b))
	}
	sum := len(b) - 8
	if want, got := binary.LittleEndian.Uint64(b[sum:]), xxhash.Sum64(b[:sum]); want != got {
		return nil, &segment.CorruptError{File: file, Offset: int64(sum), Reason: "index checksum mismatch", Expected: want, Actual: got}
	}
	if b[4] != fileVersion {
		return nil, fmt.Errorf("%s: unsupported raftlog format version %d", file, b[4])
	}
	if got := binary.LittleEndian.Uint64(b[8:]); got != base {
		return nil, corrupt(file, 8, "index is for base %d, segment base is %d", got, base)
	}
	if got := int64(binary.LittleEndian.Uint64(b[16:])); got != end {
		return nil, corrupt(file, 16, "index is for a segment of %d bytes, segment is %d", got, end)
	}
	if got := int64(binary.LittleEndian.Uint64(b[32:])); got != created {
		return nil, corrupt(file, 32, "index is for a segment created at %d, segment was created at %d", got, created)
	}
	offs := make([]uint32, n)
	prev := uint32(segment.HeaderSize - 1)
	for i := range offs {
		o := binary.LittleEndian.Uint32(b[indexHeaderSize+4*i:])
		if o <= prev || int64(o) >= end {
			return nil, corrupt(file, int64(indexHeaderSize+4*i), "offset %d of record %d out of order or past the end", o, i)
		}
		offs[i], prev = o, o
	}
	return offs, nil
}
