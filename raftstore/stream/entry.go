package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Op is what a log entry does to the stream.
type Op byte

// The operations. Only appends take a new sequence; the others never do,
// and applying one of them twice in a row changes nothing the second time
// (fsm.go relies on that when it replays after a crash).
const (
	OpAppend  Op = 1 // subject, header, data, time
	OpDelete  Op = 2 // a sequence, and whether to erase its bytes
	OpPurge   Op = 3 // filter, up-to sequence, keep
	OpCompact Op = 4 // remove everything below a sequence
)

// Entry is one decoded log entry.
type Entry struct {
	Op      Op
	Time    int64 // OpAppend: the leader's clock, unix ns
	Subject string
	Header  []byte
	Data    []byte
	Seq     uint64 // OpDelete: the sequence; OpPurge: up to; OpCompact: below
	Erase   bool   // OpDelete
	Filter  string // OpPurge
	Keep    uint64 // OpPurge
}

// ErrEntry is wrapped by every decoding error.
var ErrEntry = errors.New("stream: malformed log entry")

// Encoding (little endian):
//
//	OpAppend   1 | time i64 | uvarint len | subject | uvarint len | header | data
//	OpDelete   2 | seq u64 | erase u8
//	OpPurge    3 | up-to u64 | keep u64 | filter
//	OpCompact  4 | seq u64

// EncodeAppend encodes the append of one message stamped ts.
func EncodeAppend(subject string, hdr, data []byte, ts int64) []byte {
	b := make([]byte, 0, 1+8+2*binary.MaxVarintLen32+len(subject)+len(hdr)+len(data))
	b = append(b, byte(OpAppend))
	b = binary.LittleEndian.AppendUint64(b, uint64(ts))
	b = binary.AppendUvarint(b, uint64(len(subject)))
	b = append(b, subject...)
	b = binary.AppendUvarint(b, uint64(len(hdr)))
	b = append(b, hdr...)
	return append(b, data...)
}

// EncodeDelete encodes the removal of seq.
func EncodeDelete(seq uint64, erase bool) []byte {
	b := binary.LittleEndian.AppendUint64([]byte{byte(OpDelete)}, seq)
	if erase {
		return append(b, 1)
	}
	return append(b, 0)
}

// EncodePurge encodes a purge (wal.Store.Purge's arguments).
func EncodePurge(filter string, upTo, keep uint64) []byte {
	b := binary.LittleEndian.AppendUint64([]byte{byte(OpPurge)}, upTo)
	b = binary.LittleEndian.AppendUint64(b, keep)
	return append(b, filter...)
}

// EncodeCompact encodes the removal of every message below seq.
func EncodeCompact(seq uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{byte(OpCompact)}, seq)
}

// Decode parses an entry. The slices in it alias b.
func Decode(b []byte) (Entry, error) {
	if len(b) == 0 {
		return Entry{}, fmt.Errorf("%w: empty", ErrEntry)
	}
	e := Entry{Op: Op(b[0])}
	p := b[1:]
	need := func(n int) error {
		if len(p) < n {
			return fmt.Errorf("%w: op %d: %d bytes, need %d more", ErrEntry, e.Op, len(b), n-len(p))
		}
		return nil
	}
	u64 := func() uint64 {
		v := binary.LittleEndian.Uint64(p)
		p = p[8:]
		return v
	}
	field := func(what string) ([]byte, error) {
		n, k := binary.Uvarint(p)
		// Only the shortest encoding is valid: one entry, one byte form.
		if k <= 0 || k != uvarintLen(n) || n > uint64(len(p)-k) {
			return nil, fmt.Errorf("%w: op %d: bad %s length", ErrEntry, e.Op, what)
		}
		f := p[k : k+int(n)]
		p = p[k+int(n):]
		return f, nil
	}
	switch e.Op {
	case OpAppend:
		if err := need(8); err != nil {
			return Entry{}, err
		}
		e.Time = int64(u64())
		subj, err := field("subject")
		if err != nil {
			return Entry{}, err
		}
		hdr, err := field("header")
		if err != nil {
			return Entry{}, err
		}
		e.Subject = string(subj)
		if len(hdr) > 0 {
			e.Header = hdr
		}
		e.Data = p
	case OpDelete:
		if err := need(9); err != nil {
			return Entry{}, err
		}
		e.Seq = u64()
		e.Erase = p[0] == 1
	case OpPurge:
		if err := need(16); err != nil {
			return Entry{}, err
		}
		e.Seq = u64()
		e.Keep = u64()
		e.Filter = string(p)
	case OpCompact:
		if err := need(8); err != nil {
			return Entry{}, err
		}
		e.Seq = u64()
	default:
		return Entry{}, fmt.Errorf("%w: unknown op %d", ErrEntry, e.Op)
	}
	return e, nil
}

// uvarintLen is the length of n's shortest uvarint encoding.
func uvarintLen(n uint64) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
}
