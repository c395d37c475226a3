package consumerstate

import (
	"encoding/binary"
	"fmt"
)

// Log operation codes: the first byte of each operation in a log record.
// Part of the on-disk format (see doc.go).
const (
	opDeliver      = 1 // uvarint sseq, uvarint dcount, varint ts delta
	opDeliverNoAck = 2 // uvarint sseq
	opAck          = 3 // uvarint sseq
	opAckAll       = 4 // uvarint sseq
	opNak          = 5 // uvarint sseq, varint at delta
	opTerm         = 6 // uvarint sseq
	opReset        = 7 // uvarint start
	opRewind       = 8 // uvarint start
)

// journal collects the operations applied to a State since its consumer's
// last flush, encoded as the payload of the next log record.
//
// Its size is bounded: past limit bytes it gives up (overflow) and the next
// flush writes a full snapshot instead, which costs O(pending) rather than
// O(operations).
type journal struct {
	ops      uint64 // operations recorded, overflowed ones included
	buf      []byte
	prevTS   int64 // timestamps are deltas from the previous one in buf
	limit    int
	overflow bool
}

func (j *journal) full() bool {
	j.ops++
	if len(j.buf) <= j.limit {
		return false
	}
	j.overflow = true
	j.buf = j.buf[:0]
	return true
}

func (j *journal) seqOp(op byte, seq uint64) {
	if j.overflow {
		j.ops++
		return
	}
	j.buf = append(j.buf, op)
	j.buf = binary.AppendUvarint(j.buf, seq)
	j.full()
}

func (j *journal) deliver(sseq StreamSeq, dcount uint64, ts int64) {
	if j.overflow {
		j.ops++
		return
	}
	j.buf = append(j.buf, opDeliver)
	j.buf = binary.AppendUvarint(j.buf, uint64(sseq))
	j.buf = binary.AppendUvarint(j.buf, dcount)
	j.buf = binary.AppendVarint(j.buf, ts-j.prevTS)
	j.prevTS = ts
	j.full()
}

func (j *journal) nak(sseq StreamSeq, at int64) {
	if j.overflow {
		j.ops++
		return
	}
	j.buf = append(j.buf, opNak)
	j.buf = binary.AppendUvarint(j.buf, uint64(sseq))
	j.buf = binary.AppendVarint(j.buf, at-j.prevTS)
	j.prevTS = at
	j.full()
}

// take returns the collected payload and starts a new one in spare's
// storage.
func (j *journal) take(spare []byte) []byte {
	b := j.buf
	j.buf = spare[:0]
	j.prevTS = 0
	j.overflow = false
	return b
}

// replay applies the operations of one log record payload to s. base is the
// payload's file offset, for errors. An operation that the state rejects
// means the log does not belong to this state: ErrCorrupt.
func replay(s *State, payload []byte, base int64) error {
	_, err := replayOps(s, payload, base, false)
	return err
}

// replaySalvage applies what it can of a record that follows damage in the
// log: operations that no longer apply (their prerequisite was in the lost
// stretch) are skipped and counted; a record that does not decode stops
// there.
func replaySalvage(s *State, payload []byte, base int64) (skipped int) {
	skipped, _ = replayOps(s, payload, base, true)
	return skipped
}

// replayOps applies a record's operations. Strictly, an operation that does
// not apply is corruption; in salvage mode it is skipped and counted.
func replayOps(s *State, payload []byte, base int64, salvage bool) (int, error) {
	skipped := 0
	r := &reader{b: payload, base: int(base), ctx: "log record"}
	prevTS := int64(0)
	for r.pos < len(payload) {
		at := base + int64(r.pos)
		op := r.byte("op code")
		seq := StreamSeq(r.uvarint("op sequence"))
		var ok bool
		switch op {
		case opDeliver:
			dcount := r.uvarint("delivery count")
			ts := prevTS + r.varint("delivery time")
			prevTS = ts
			if r.err == nil {
				_, err := s.Deliver(seq, dcount, ts)
				ok = err == nil
			}
		case opDeliverNoAck:
			if r.err == nil {
				_, err := s.DeliverNoAck(seq)
				ok = err == nil
			}
		case opAck:
			ok = r.err == nil && s.Ack(seq)
		case opAckAll:
			ok = r.err == nil && s.AckAll(seq) > 0
		case opNak:
			t := prevTS + r.varint("nak time")
			prevTS = t
			ok = r.err == nil && t > 0 && s.Nak(seq, t)
		case opTerm:
			ok = r.err == nil && s.Term(seq)
		case opReset:
			if r.err == nil {
				s.Reset(seq)
				ok = true
			}
		case opRewind:
			if r.err == nil {
				s.Rewind(seq)
				ok = true
			}
		default:
			return skipped + 1, corruptf("offset %d: unknown op code %d", at, op)
		}
		if r.err != nil {
			return skipped + 1, r.err
		}
		if !ok {
			if salvage {
				skipped++
				continue
			}
			return skipped, corruptf("offset %d: %s of stream seq %d does not apply to the state", at, opName(op), seq)
		}
	}
	return skipped, nil
}

// opName is for debugging output.
func opName(op byte) string {
	switch op {
	case opDeliver:
		return "deliver"
	case opDeliverNoAck:
		return "deliver-noack"
	case opAck:
		return "ack"
	case opAckAll:
		return "ackall"
	case opNak:
		return "nak"
	case opTerm:
		return "term"
	case opReset:
		return "reset"
	case opRewind:
		return "rewind"
	}
	return fmt.Sprintf("op(%d)", op)
}
