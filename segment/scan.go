package segment

import (
	"encoding/binary"
	"fmt"
)

// ScanResult is what Scan found.
type ScanResult struct {
	// End is the offset after the last valid record before the first damage
	// (or after the last record when there was none).
	End int64
	// Damage lists the damaged ranges found. When Scan was asked to stop at
	// the first damage it holds at most one entry.
	Damage []Damage
}

// Damage is a range of bytes that holds no valid record.
type Damage struct {
	Err    *CorruptError
	Offset int64 // first damaged byte
	Resync int64 // offset of the next valid record, or -1 if none was found
}

// Scan calls fn for every valid record in order, from the header on.
//
// Damage never stops the scan silently: an invalid record (bad length, bad
// checksum, torn record, or a zero length followed by non-zero bytes) is
// recorded, and Scan searches forward for the next record proven valid by its
// checksum. A damage entry with Resync == -1 is a tail: nothing valid follows
// it. Whether a tail is an expected torn write or corruption is the caller's
// policy (package wal: expected only in the newest segment). A zero length
// followed by zeros only is the end of written data. fn may stop the scan by
// returning an error, which Scan returns. The *Record fn gets is reused for
// the next record: fn must not keep the pointer (the record's byte slices
// alias the segment as ReadAt's do; in an encrypted segment opened with its
// key they alias a buffer the next record reuses, so fn copies what it
// keeps).
func (s *Segment) Scan(fn func(off int64, r *Record) error) (ScanResult, error) {
	return s.ScanFrom(HeaderSize, 0, fn)
}

// ScanFrom is Scan starting at offset from, where the last message sequence
// before from was lastSeq.
func (s *Segment) ScanFrom(from int64, lastSeq uint64, fn func(off int64, r *Record) error) (ScanResult, error) {
	return s.ScanDamage(from, lastSeq, fn, nil)
}

// ScanDamage is ScanFrom that also calls onDamage (if not nil) at each damage
// as it is found, in order with the records around it.
func (s *Segment) ScanDamage(from int64, lastSeq uint64, fn func(off int64, r *Record) error, onDamage func(Damage)) (ScanResult, error) {
	b, err := s.bytes()
	if err != nil {
		return ScanResult{}, err
	}
	return s.scan(b, from, int64(len(b)), lastSeq, fn, onDamage)
}

// ScanWindow is ScanDamage over the records that start in [from, stop) of a
// plain segment, reading no byte at or past limit. It reads neither the
// segment's end nor its buffer, so the owner can verify the written part of
// an active segment piece by piece, under its read lock (which keeps the
// mapping in place), while appends go on between the pieces: limit is what
// Flushed reported under that lock.
func (s *Segment) ScanWindow(from, stop, limit int64, fn func(off int64, r *Record) error, onDamage func(Damage)) (ScanResult, error) {
	if s.compressed || limit > int64(len(s.data)) {
		return ScanResult{}, fmt.Errorf("segment: %s: no window [%d, %d) to scan", s.path, from, limit)
	}
	return s.scan(s.data[:limit], from, min(stop, limit), 0, fn, onDamage)
}

func (s *Segment) scan(b []byte, from, stop int64, lastSeq uint64, fn func(off int64, r *Record) error, onDamage func(Damage)) (ScanResult, error) {
	if from < HeaderSize || from > int64(len(b)) {
		return ScanResult{}, fmt.Errorf("segment: %s: scan from %d outside [%d, %d]", s.path, from, HeaderSize, len(b))
	}
	res := ScanResult{End: from}
	off := from
	// One record for the whole scan: fn takes its address, so a record
	// declared per iteration would be a heap allocation per record (a
	// verification of a large store would allocate gigabytes).
	var r Record
	var plain []byte // a sealed record's plaintext, reused for the next
	for off < stop {
		n, st, reason, want, got := decodeRecord(b[off:], &r, s.ov)
		if st == decodeEnd {
			if s.zeroFrom(b, off, int64(len(b))) {
				break
			}
			st, reason = decodeBad, "zero record length followed by non-zero bytes"
		}
		if st == decodeOK && r.raw != nil && s.key != nil {
			// A tag that fails is damage exactly as a checksum that
			// fails: reported with the offset, resynced past, never
			// handed to fn.
			var err error
			if plain, err = s.unseal(&r, plain[:0], off); err != nil {
				st, reason = decodeBad, reasonAuth
			}
		}
		if st == decodeOK {
			if !r.Tombstone() {
				lastSeq = r.Seq
			}
			if err := fn(off, &r); err != nil {
				return res, err
			}
			off += int64(n)
			res.End = off
			continue
		}
		d := Damage{Err: &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}, Offset: off}
		d.Resync = findNext(b, off+1, lastSeq, s.ov)
		res.Damage = append(res.Damage, d)
		if onDamage != nil {
			onDamage(d)
		}
		if d.Resync < 0 {
			break
		}
		off = d.Resync
	}
	return res, nil
}

// findNext searches b from off for the start of a valid record carrying a
// sequence above after (or a tombstone). Every candidate is proven by its
// checksum, so a false match needs a 64-bit collision.
func findNext(b []byte, off int64, after uint64, ov int) int64 {
	for ; off+RecordMinSize <= int64(len(b)); off++ {
		// Eight zero bytes rule out records starting at off..off+4 (their
		// length field would be zero): skip zero runs quickly.
		for off+RecordMinSize+8 <= int64(len(b)) && binary.LittleEndian.Uint64(b[off:]) == 0 {
			off += 5
		}
		l := binary.LittleEndian.Uint32(b[off:])
		if l < RecordMinSize || l > MaxRecordSize || off+int64(l) > int64(len(b)) {
			continue
		}
		seq := binary.LittleEndian.Uint64(b[off+8:])
		flags := binary.LittleEndian.Uint16(b[off+4:])
		if flags&FlagTombstone == 0 && seq <= after {
			continue
		}
		var r Record
		if _, st, _, _, _ := decodeRecord(b[off:], &r, ov); st == decodeOK {
			return off
		}
	}
	return -1
}
