package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/wal"
)

// A version 2 snapshot is the stream's state, not its messages (little
// endian):
//
//	header   "JWRS" | version u32 (2) | index u64 | first u64 | last u64 | last time i64
//	deleted  count u32 | count × (first seq u64 | length u64)
//	end      xxhash64 of everything before it
//
// The deleted ranges are the interior deletes between first and last, in
// ascending order, apart and not touching; a snapshot lists at most
// maxSnapRanges of them (1 MiB), and a stream with more is snapshotted in
// version 1, with its messages.
const (
	snapVersion2  = 2
	maxSnapRanges = 1 << 16
)

// seqRange is count sequences from first.
type seqRange struct{ first, count uint64 }

func (r seqRange) last() uint64 { return r.first + r.count - 1 }

// snapState is what a version 2 snapshot records.
type snapState struct {
	index, first, last uint64
	lastTS             int64
	deleted            []seqRange
}

// deleted reports whether the state lists seq as deleted.
func (s *snapState) isDeleted(seq uint64) bool {
	i := sort.Search(len(s.deleted), func(i int) bool { return s.deleted[i].last() >= seq })
	return i < len(s.deleted) && s.deleted[i].first <= seq
}

// stateOf reads the deleted sequences of st between first and last; ok is
// false when they are too many for a version 2 snapshot.
func stateOf(st *wal.Store, index, last uint64, lastTS int64) (s snapState, ok bool) {
	ws := st.StateWithDeleted()
	s = snapState{index: index, first: ws.FirstSeq, last: last, lastTS: lastTS}
	if len(ws.Deleted) < ws.NumDeleted || s.first > last+1 {
		return s, false // the list was cut short, or the store is past the log
	}
	for _, q := range ws.Deleted {
		if q < s.first || q > last {
			continue
		}
		if n := len(s.deleted); n > 0 && s.deleted[n-1].last()+1 == q {
			s.deleted[n-1].count++
			continue
		}
		if len(s.deleted) == maxSnapRanges {
			return s, false
		}
		s.deleted = append(s.deleted, seqRange{first: q, count: 1})
	}
	return s, true
}

// encode returns the state as a version 2 snapshot.
func (s *snapState) encode() []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, snapHeader+4+16*len(s.deleted)+8)
	b = append(b, snapMagic...)
	b = le.AppendUint32(b, snapVersion2)
	b = le.AppendUint64(b, s.index)
	b = le.AppendUint64(b, s.first)
	b = le.AppendUint64(b, s.last)
	b = le.AppendUint64(b, uint64(s.lastTS))
	b = le.AppendUint32(b, uint32(len(s.deleted)))
	for _, r := range s.deleted {
		b = le.AppendUint64(b, r.first)
		b = le.AppendUint64(b, r.count)
	}
	return le.AppendUint64(b, xxhash.Sum64(b))
}

// decodeState reads the rest of a version 2 snapshot whose header is hb
// from r, and checks it whole.
func decodeState(hb []byte, r io.Reader) (snapState, error) {
	le := binary.LittleEndian
	s := snapState{index: le.Uint64(hb[8:]), first: le.Uint64(hb[16:]), last: le.Uint64(hb[24:]), lastTS: int64(le.Uint64(hb[32:]))}
	var cb [4]byte
	if _, err := io.ReadFull(r, cb[:]); err != nil {
		return s, fmt.Errorf("deleted count: %w", err)
	}
	n := le.Uint32(cb[:])
	if n > maxSnapRanges {
		return s, fmt.Errorf("%d deleted ranges, at most %d", n, maxSnapRanges)
	}
	body := make([]byte, 16*int(n)+8)
	if _, err := io.ReadFull(r, body); err != nil {
		return s, fmt.Errorf("deleted ranges: %w", err)
	}
	h := xxhash.New()
	h.Write(hb)
	h.Write(cb[:])
	h.Write(body[:16*n])
	if le.Uint64(body[16*n:]) != h.Sum64() {
		return s, fmt.Errorf("checksum mismatch: snapshot damaged")
	}
	if extra, _ := io.Copy(io.Discard, io.LimitReader(r, 1)); extra != 0 {
		return s, fmt.Errorf("bytes after the checksum")
	}
	if s.last+1 < s.first {
		return s, fmt.Errorf("first %d after last %d", s.first, s.last)
	}
	prev := s.first
	for i := range int(n) {
		rg := seqRange{first: le.Uint64(body[16*i:]), count: le.Uint64(body[16*i+8:])}
		if rg.count == 0 || rg.first < prev || rg.last() < rg.first || rg.last() > s.last {
			return s, fmt.Errorf("deleted range %d (%d+%d) out of order or outside [%d, %d]", i, rg.first, rg.count, s.first, s.last)
		}
		s.deleted = append(s.deleted, rg)
		prev = rg.last() + 2 // apart, not touching
	}
	return s, nil
}

// readState parses a whole version 2 snapshot from b.
func readState(b []byte) (snapState, error) {
	if len(b) < snapHeader || string(b[:4]) != snapMagic || binary.LittleEndian.Uint32(b[4:]) != snapVersion2 {
		return snapState{}, fmt.Errorf("not a version 2 stream snapshot")
	}
	return decodeState(b[:snapHeader], bytes.NewReader(b[snapHeader:]))
}
