package segment

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
)

// Encrypted segments (doc.go, "Encrypted segments"): a segment whose header
// has SegFlagEncrypted holds sealed records, each body sealed by the
// stream's data key with the record's clear fields and the segment's base
// as associated data.

// reasonAuth is the CorruptError reason of a record whose tag fails.
const reasonAuth = "record authentication failed (tag mismatch: tampered bytes or another key)"

// adSize is the associated data of a sealed record: the clear fields
// (bytes [0, RecordHeader) of the record) and the segment's base.
const adSize = RecordHeader + 8

func recordAD(ad *[adSize]byte, rec []byte, base uint64) []byte {
	copy(ad[:RecordHeader], rec[:RecordHeader])
	binary.LittleEndian.PutUint64(ad[RecordHeader:], base)
	return ad[:]
}

// Encrypted reports whether the segment's records are sealed.
func (s *Segment) Encrypted() bool { return s.hdr.flags&SegFlagEncrypted != 0 }

// HasKey reports whether the segment was opened with a data key: records
// read from it are opened (decrypted and authenticated).
func (s *Segment) HasKey() bool { return s.key != nil }

// RecordSize is the encoded size of a record with these parts in this
// segment: EncodedSize, plus the sealing overhead when it is encrypted.
func (s *Segment) RecordSize(subjectLen, hdrLen, dataLen int) int {
	return EncodedSize(subjectLen, hdrLen, dataLen) + s.ov
}

// SealedSize is the encoded size of a sealed record with these parts.
func SealedSize(subjectLen, hdrLen, dataLen int) int {
	return EncodedSize(subjectLen, hdrLen, dataLen) + crypt.Overhead
}

// session returns the segment's sealing session, started on first use
// (crypt.Session: a fresh random salt, so nothing sealed after a crash
// and a reopen can repeat a nonce sealed before).
func (s *Segment) session() (*crypt.Session, error) {
	if s.sess == nil {
		sess, err := s.key.NewSession()
		if err != nil {
			return nil, fmt.Errorf("segment: %s: %w", s.path, err)
		}
		s.sess = sess
	}
	return s.sess, nil
}

// appendSealed appends a sealed record to dst (AppendRecord's layout with
// the body sealed in place).
func (s *Segment) appendSealed(dst []byte, flags uint16, seq uint64, ts int64, subject string, hdr, data []byte) ([]byte, error) {
	sess, err := s.session()
	if err != nil {
		return dst, err
	}
	pl := len(subject) + len(hdr) + len(data)
	n := RecordMinSize + pl + crypt.Overhead
	start := len(dst)
	dst = grow(dst, n)
	b := dst[start : start+n]
	putRecord(b, flags, seq, ts, subject, hdr, data, RecordHeader+crypt.NonceSize)
	var ad [adSize]byte
	if _, err := sess.SealInPlace(b[RecordHeader:n-ChecksumSize], pl, recordAD(&ad, b, s.hdr.base)); err != nil {
		return dst[:start], fmt.Errorf("segment: %s: seal record %d: %w", s.path, seq, err)
	}
	binary.LittleEndian.PutUint64(b[n-ChecksumSize:], xxhash.Sum64(b[:n-ChecksumSize]))
	return dst, nil
}

// unseal opens r, a sealed record decoded at offset off, appending its
// plaintext to dst, and points r's subject, header and payload into it.
// Without a key it leaves r sealed. A tag that fails is a CorruptError
// naming the file and offset, like a checksum mismatch. To open in place
// (the record is the caller's copy), pass r.Data[crypt.NonceSize:
// crypt.NonceSize] as dst.
func (s *Segment) unseal(r *Record, dst []byte, off int64) ([]byte, error) {
	if r.raw == nil || s.key == nil {
		return dst, nil
	}
	rec := r.raw
	sl := int(binary.LittleEndian.Uint16(rec[6:]))
	hl := int(binary.LittleEndian.Uint32(rec[24:]))
	var ad [adSize]byte
	start := len(dst)
	out, err := s.key.Open(dst, r.Data, recordAD(&ad, rec, s.hdr.base))
	if err != nil || len(out)-start < sl+hl {
		return dst, &CorruptError{File: s.path, Offset: off, Reason: reasonAuth}
	}
	pt := out[start:]
	r.Subject = pt[:sl:sl]
	r.Header = pt[sl : sl+hl : sl+hl]
	r.Data = pt[sl+hl : len(pt) : len(pt)]
	r.raw = nil
	return out, nil
}

// ReadIntoBuf is ReadInto that opens a sealed record into buf's array
// (grown when short; the result is returned), so the caller can reuse a
// buffer instead of a new one per read. For a plain segment buf is
// returned unchanged and r aliases the segment as ReadInto's does.
func (s *Segment) ReadIntoBuf(off int64, r *Record, buf []byte) (int, []byte, error) {
	n, err := s.readStructure(off, r)
	if err != nil || r.raw == nil || s.key == nil {
		return n, buf, err
	}
	buf, err = s.unseal(r, buf[:0], off)
	return n, buf, err
}

// ReadAtBufInto is ReadAtBuf that opens a sealed record into buf's array
// (as ReadIntoBuf): b (a read-ahead window, the write buffer) is left
// unchanged.
func (s *Segment) ReadAtBufInto(b []byte, off int64, r *Record, buf []byte) (int, []byte, error) {
	n, st, reason, want, got := decodeRecord(b, r, s.ov)
	if st != decodeOK {
		return 0, buf, &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}
	}
	if r.raw == nil || s.key == nil {
		return n, buf, nil
	}
	buf, err := s.unseal(r, buf[:0], off)
	return n, buf, err
}
