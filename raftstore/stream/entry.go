package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
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
	// OpAppendBatch appends several messages in order, each as OpAppend
	// would: a group commit's worth of publishes in one raft entry.
	OpAppendBatch Op = 5
	// OpSkip makes a sequence the next one an append takes, leaving the
	// ones before it empty (a mirror over a gap in its origin).
	OpSkip Op = 6
)

// Entry is one decoded log entry.
type Entry struct {
	Op      Op
	Time    int64 // OpAppend: the leader's clock, unix ns
	Subject string
	Header  []byte
	Data    []byte
	Seq     uint64 // OpDelete: the sequence; OpPurge: up to; OpCompact: below; OpSkip: the next
	Erase   bool   // OpDelete
	Filter  string // OpPurge
	Keep    uint64 // OpPurge
	Msgs    []Msg  // OpAppendBatch: the messages, in order (at least one)
}

// Msg is one message of an OpAppendBatch entry. Its slices alias the
// decoded bytes.
type Msg struct {
	Time    int64 // the leader's clock, unix ns
	Subject string
	Header  []byte // nil when empty
	Data    []byte
}

// ErrEntry is wrapped by every decoding error.
var ErrEntry = errors.New("stream: malformed log entry")

// Encoding (little endian):
//
//	OpAppend   1 | time i64 | uvarint len | subject | uvarint len | header | data
//	OpDelete   2 | seq u64 | erase u8
//	OpPurge    3 | up-to u64 | keep u64 | filter
//	OpCompact  4 | seq u64
//	OpAppendBatch
//	           5 | count u32 (>= 1) | count × message
//	  message  time i64 | uvarint len | subject | uvarint len | header | uvarint len | data
//	OpSkip     6 | next seq u64
//
// Lengths are uvarints in their shortest form; a batch's bytes end with
// its last message (nothing may follow), and count is the number of
// messages it holds.

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

// EncodeSkip encodes making next the next sequence an append takes.
func EncodeSkip(next uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{byte(OpSkip)}, next)
}

// Batch builds an OpAppendBatch entry message by message. The zero Batch
// is empty and ready.
type Batch struct {
	b []byte
	n uint32
}

// batchHeader is the size of an OpAppendBatch entry's op and count.
const batchHeader = 1 + 4

// BatchMsgSize is the number of bytes a message adds to a batch.
func BatchMsgSize(subject string, hdr, data []byte) int {
	return 8 + uvarintLen(uint64(len(subject))) + len(subject) + uvarintLen(uint64(len(hdr))) + len(hdr) +
		uvarintLen(uint64(len(data))) + len(data)
}

// Add appends one message stamped ts; the batch copies its bytes.
func (b *Batch) Add(subject string, hdr, data []byte, ts int64) {
	if b.b == nil {
		b.b = make([]byte, batchHeader, batchHeader+BatchMsgSize(subject, hdr, data))
	}
	b.b = binary.LittleEndian.AppendUint64(b.b, uint64(ts))
	b.b = binary.AppendUvarint(b.b, uint64(len(subject)))
	b.b = append(b.b, subject...)
	b.b = binary.AppendUvarint(b.b, uint64(len(hdr)))
	b.b = append(b.b, hdr...)
	b.b = binary.AppendUvarint(b.b, uint64(len(data)))
	b.b = append(b.b, data...)
	b.n++
}

// Grow makes room for n more bytes of messages.
func (b *Batch) Grow(n int) {
	if b.b == nil {
		b.b = make([]byte, batchHeader, batchHeader+n)
		return
	}
	b.b = slices.Grow(b.b, n)
}

// Len is the number of messages added.
func (b *Batch) Len() int { return int(b.n) }

// Size is the size of the entry in bytes.
func (b *Batch) Size() int { return max(len(b.b), batchHeader) }

// Take returns the encoded entry and leaves the batch empty; the entry is
// the caller's (raft keeps it). It returns nil for an empty batch, which
// is not an entry.
func (b *Batch) Take() []byte {
	if b.n == 0 {
		return nil
	}
	out := b.b
	out[0] = byte(OpAppendBatch)
	binary.LittleEndian.PutUint32(out[1:], b.n)
	*b = Batch{}
	return out
}

// EncodeAppendBatch encodes msgs as one OpAppendBatch entry (nil when msgs
// is empty).
func EncodeAppendBatch(msgs []Msg) []byte {
	var b Batch
	for _, m := range msgs {
		b.Add(m.Subject, m.Header, m.Data, m.Time)
	}
	return b.Take()
}

// Decode parses an entry. The slices in it alias b.
func Decode(b []byte) (Entry, error) { return DecodeInto(b, nil) }

// DecodeInto is Decode with a batch's messages decoded into msgs' array
// when it is large enough (the caller's, reused from entry to entry).
func DecodeInto(b []byte, msgs []Msg) (Entry, error) {
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
	case OpCompact, OpSkip:
		if err := need(8); err != nil {
			return Entry{}, err
		}
		e.Seq = u64()
	case OpAppendBatch:
		if err := need(4); err != nil {
			return Entry{}, err
		}
		n := binary.LittleEndian.Uint32(p)
		p = p[4:]
		// A message takes at least 11 bytes: a count beyond that is a lie,
		// refused before it sizes an allocation.
		if n == 0 || uint64(n) > uint64(len(p))/11 {
			return Entry{}, fmt.Errorf("%w: op %d: count %d in %d bytes", ErrEntry, e.Op, n, len(b))
		}
		if cap(msgs) >= int(n) {
			e.Msgs = msgs[:n]
			clear(e.Msgs)
		} else {
			e.Msgs = make([]Msg, n)
		}
		for i := range e.Msgs {
			if err := need(8); err != nil {
				return Entry{}, err
			}
			m := &e.Msgs[i]
			m.Time = int64(u64())
			subj, err := field("subject")
			if err != nil {
				return Entry{}, err
			}
			hdr, err := field("header")
			if err != nil {
				return Entry{}, err
			}
			data, err := field("data")
			if err != nil {
				return Entry{}, err
			}
			m.Subject = string(subj)
			if len(hdr) > 0 {
				m.Header = hdr
			}
			m.Data = data
		}
		if len(p) != 0 {
			return Entry{}, fmt.Errorf("%w: op %d: %d bytes after message %d", ErrEntry, e.Op, len(p), n)
		}
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
