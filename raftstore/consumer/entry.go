package consumer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jetwal/jetwal/consumerstate"
)

// Op is a change to the consumer's state.
type Op byte

// The changes, one per consumerstate.State method.
const (
	OpDeliver      Op = 1
	OpDeliverNoAck Op = 2
	OpAck          Op = 3
	OpAckAll       Op = 4
	OpNak          Op = 5
	OpTerm         Op = 6
	OpReset        Op = 7
)

// ErrEntry is wrapped by every decoding error.
var ErrEntry = errors.New("consumer: malformed log entry")

// Entry is one decoded change.
type Entry struct {
	Op     Op
	Seq    consumerstate.StreamSeq
	DCount uint64 // OpDeliver
	Time   int64  // OpDeliver: the delivery time; OpNak: when due again
}

// Encode encodes e.
func Encode(e Entry) []byte {
	le := binary.LittleEndian
	b := le.AppendUint64([]byte{byte(e.Op)}, uint64(e.Seq))
	switch e.Op {
	case OpDeliver:
		b = le.AppendUint64(b, e.DCount)
		b = le.AppendUint64(b, uint64(e.Time))
	case OpNak:
		b = le.AppendUint64(b, uint64(e.Time))
	}
	return b
}

// Decode parses an entry.
func Decode(b []byte) (Entry, error) {
	if len(b) == 0 {
		return Entry{}, fmt.Errorf("%w: empty", ErrEntry)
	}
	e := Entry{Op: Op(b[0])}
	want := 9
	switch e.Op {
	case OpDeliver:
		want = 25
	case OpNak:
		want = 17
	case OpDeliverNoAck, OpAck, OpAckAll, OpTerm, OpReset:
	default:
		return Entry{}, fmt.Errorf("%w: unknown op %d", ErrEntry, e.Op)
	}
	if len(b) != want {
		return Entry{}, fmt.Errorf("%w: op %d of %d bytes, want %d", ErrEntry, e.Op, len(b), want)
	}
	le := binary.LittleEndian
	e.Seq = consumerstate.StreamSeq(le.Uint64(b[1:]))
	switch e.Op {
	case OpDeliver:
		e.DCount = le.Uint64(b[9:])
		e.Time = int64(le.Uint64(b[17:]))
	case OpNak:
		e.Time = int64(le.Uint64(b[9:]))
	}
	return e, nil
}
