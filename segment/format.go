package segment

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/store"
)

// On-disk format constants. Changing any of them breaks existing stores.
const (
	Magic         = "JWS1"
	Version       = 1
	HeaderSize    = 32
	RecordHeader  = 28 // fixed part before the subject
	ChecksumSize  = 8
	RecordMinSize = RecordHeader + ChecksumSize

	// Segment header flags.
	SegFlagCompressed = 1 << 0
	SegFlagEncrypted  = 1 << 1 // records are sealed (see doc.go)

	// Record flags.
	FlagTombstone = 1 << 0
	FlagErased    = 1 << 1
	FlagBatchOpen = 1 << 2 // more records of the same atomic batch follow

	// MaxSubjectLen is the largest subject a record can hold (uint16 length).
	MaxSubjectLen = 1<<16 - 1
	// MaxRecordSize bounds a record so a damaged length can be rejected
	// before it is trusted.
	MaxRecordSize = 64 << 20

	// File name suffixes.
	SuffixPlain      = ".seg"
	SuffixCompressed = ".seg.s2"
)

// ErrCorrupt is the one corruption sentinel of the engine.
var ErrCorrupt = store.ErrCorrupt

// CorruptError describes damaged bytes. It wraps ErrCorrupt.
type CorruptError struct {
	File     string
	Offset   int64
	Reason   string
	Expected uint64 // checksum expected (stored), when Reason is a checksum mismatch
	Actual   uint64
}

func (e *CorruptError) Error() string {
	if e.Expected != 0 || e.Actual != 0 {
		return fmt.Sprintf("%s: offset %d: %s (stored checksum %016x, computed %016x): %v",
			e.File, e.Offset, e.Reason, e.Expected, e.Actual, ErrCorrupt)
	}
	return fmt.Sprintf("%s: offset %d: %s: %v", e.File, e.Offset, e.Reason, ErrCorrupt)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Record is a decoded record. Subject, Header and Data alias the bytes they
// were decoded from.
type Record struct {
	Flags   uint16
	Seq     uint64
	Time    int64
	Subject []byte
	Header  []byte
	Data    []byte
	// raw is the whole stored record of a sealed record not yet opened
	// (decoded without its key): Data then holds the sealed body, and
	// Subject and Header are nil. nil for plain and opened records.
	raw []byte
}

// Sealed reports whether r is an encrypted record decoded without its key
// (a structure check): its Data is the sealed body (nonce, ciphertext,
// tag), its subject and header unknown.
func (r *Record) Sealed() bool { return r.raw != nil }

// Tombstone reports whether r deletes a range instead of carrying a message.
func (r *Record) Tombstone() bool { return r.Flags&FlagTombstone != 0 }

// TombstoneCount is the number of sequences a tombstone deletes.
// (0 for a sealed record decoded without its key: the count is sealed).
func (r *Record) TombstoneCount() uint64 {
	if len(r.Data) < 8 || r.raw != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(r.Data)
}

// EncodedSize is the size of a record with these parts.
func EncodedSize(subjectLen, hdrLen, dataLen int) int {
	return RecordMinSize + subjectLen + hdrLen + dataLen
}

// AppendRecord appends the encoding of a record to dst.
func AppendRecord(dst []byte, flags uint16, seq uint64, ts int64, subject string, hdr, data []byte) []byte {
	n := EncodedSize(len(subject), len(hdr), len(data))
	start := len(dst)
	dst = grow(dst, n)
	b := dst[start : start+n]
	putRecord(b, flags, seq, ts, subject, hdr, data, RecordHeader)
	binary.LittleEndian.PutUint64(b[n-ChecksumSize:], xxhash.Sum64(b[:n-ChecksumSize]))
	return dst
}

// putRecord writes the fields of a record's header into b, the whole
// record (its length is len(b)), and its subject, header and payload from
// offset body on (RecordHeader, or past the nonce of a sealed record). The
// checksum is the caller's.
func putRecord(b []byte, flags uint16, seq uint64, ts int64, subject string, hdr, data []byte, body int) {
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)))
	binary.LittleEndian.PutUint16(b[4:], flags)
	binary.LittleEndian.PutUint16(b[6:], uint16(len(subject)))
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(ts))
	binary.LittleEndian.PutUint32(b[24:], uint32(len(hdr)))
	body += copy(b[body:], subject)
	body += copy(b[body:], hdr)
	copy(b[body:], data)
}

// AppendTombstone appends a tombstone for [seq, seq+count).
func AppendTombstone(dst []byte, seq, count uint64, ts int64) []byte {
	var c [8]byte
	binary.LittleEndian.PutUint64(c[:], count)
	return AppendRecord(dst, FlagTombstone, seq, ts, "", nil, c[:])
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}

// decodeStatus tells why DecodeRecord stopped.
type decodeStatus int

const (
	decodeOK    decodeStatus = iota
	decodeEnd                // zero length: end of written data
	decodeShort              // record runs past the end of b
	decodeBad                // bad length, bad layout or checksum mismatch
)

// DecodeRecord decodes the record at the start of b into r. It returns the
// record's encoded length and a status; on decodeBad, reason and the
// checksums say what was wrong. (r is filled through a pointer rather than
// returned: a Record is 96 bytes, and reads pass it down several calls.)
//
// ov is the sealing overhead of the segment's records (0 for a plain
// segment, crypt.Overhead for an encrypted one): a sealed record's body
// is its sealed subject, header and payload, and r gets the body in Data
// and the record in raw, for Segment.unseal.
func decodeRecord(b []byte, r *Record, ov int) (n int, st decodeStatus, reason string, want, got uint64) {
	if len(b) < 4 {
		if allZero(b) {
			return 0, decodeEnd, "", 0, 0
		}
		return 0, decodeShort, "truncated record length", 0, 0
	}
	l := binary.LittleEndian.Uint32(b)
	if l == 0 {
		return 0, decodeEnd, "", 0, 0
	}
	if l < RecordMinSize || l > MaxRecordSize {
		return 0, decodeBad, fmt.Sprintf("invalid record length %d", l), 0, 0
	}
	if int(l) > len(b) {
		return 0, decodeShort, fmt.Sprintf("record length %d runs past end of data (%d bytes left)", l, len(b)), 0, 0
	}
	rec := b[:l]
	want = binary.LittleEndian.Uint64(rec[l-ChecksumSize:])
	got = xxhash.Sum64(rec[:l-ChecksumSize])
	if want != got {
		return 0, decodeBad, "record checksum mismatch", want, got
	}
	sl := int(binary.LittleEndian.Uint16(rec[6:]))
	hl := int(binary.LittleEndian.Uint32(rec[24:]))
	if RecordMinSize+sl+hl+ov > int(l) {
		return 0, decodeBad, "subject and header lengths exceed record length", 0, 0
	}
	r.Flags = binary.LittleEndian.Uint16(rec[4:])
	r.Seq = binary.LittleEndian.Uint64(rec[8:])
	r.Time = int64(binary.LittleEndian.Uint64(rec[16:]))
	if ov > 0 {
		r.Subject, r.Header = nil, nil
		r.Data = rec[RecordHeader : int(l)-ChecksumSize : int(l)-ChecksumSize]
		r.raw = rec
		return int(l), decodeOK, "", 0, 0
	}
	r.raw = nil
	p := RecordHeader
	r.Subject = rec[p : p+sl : p+sl]
	p += sl
	r.Header = rec[p : p+hl : p+hl]
	p += hl
	r.Data = rec[p : int(l)-ChecksumSize : int(l)-ChecksumSize]
	return int(l), decodeOK, "", 0, 0
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// encodeHeader returns a segment header.
func encodeHeader(base uint64, created int64, flags byte) []byte {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	h[4] = Version
	h[5] = flags
	binary.LittleEndian.PutUint64(h[8:], base)
	binary.LittleEndian.PutUint64(h[16:], uint64(created))
	binary.LittleEndian.PutUint64(h[24:], xxhash.Sum64(h[:24]))
	return h
}

// segHeader is a decoded segment header.
type segHeader struct {
	base    uint64
	created int64
	flags   byte
}

func decodeHeader(file string, h []byte) (segHeader, error) {
	if len(h) < HeaderSize {
		return segHeader{}, &CorruptError{File: file, Offset: 0, Reason: fmt.Sprintf("segment header truncated (%d bytes)", len(h))}
	}
	if string(h[:4]) != Magic {
		return segHeader{}, &CorruptError{File: file, Offset: 0, Reason: fmt.Sprintf("bad magic %q", h[:4])}
	}
	want := binary.LittleEndian.Uint64(h[24:])
	got := xxhash.Sum64(h[:24])
	if want != got {
		return segHeader{}, &CorruptError{File: file, Offset: 24, Reason: "segment header checksum mismatch", Expected: want, Actual: got}
	}
	if h[4] != Version {
		return segHeader{}, fmt.Errorf("%s: unsupported segment format version %d", file, h[4])
	}
	return segHeader{
		base:    binary.LittleEndian.Uint64(h[8:]),
		created: int64(binary.LittleEndian.Uint64(h[16:])),
		flags:   h[5],
	}, nil
}

// FileName is the name of the segment starting at base.
func FileName(base uint64, compressed bool) string {
	if compressed {
		return fmt.Sprintf("%020d%s", base, SuffixCompressed)
	}
	return fmt.Sprintf("%020d%s", base, SuffixPlain)
}
