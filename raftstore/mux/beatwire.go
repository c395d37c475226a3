package mux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// The shared heartbeat connection's frames (beats.go). A frame is a
// 4-byte big-endian body length and the body; the body is a uvarint count
// and that many items of uvarints and length-prefixed byte strings:
//
//	round:  count { group, version, id, addr, term, leader }
//	answer: count { err, version, id, addr, term, lastLog, flags }
//
// flags bit 0 is Success, bit 1 NoRetryBackoff. An answer with a non-empty
// err carries nothing else. These are all the fields raft's heartbeat
// sends and reads; msgpack's reflection cost more CPU than the rest of an
// idle round.

// maxBeatFrame bounds a frame's body.
const maxBeatFrame = 16 << 20

// errBeatFrame: a frame that does not parse.
var errBeatFrame = errors.New("mux: malformed heartbeat frame")

func appendBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendRound encodes reqs as a round frame.
func appendRound(b []byte, reqs []beatReq) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, uint64(len(reqs)))
	for i := range reqs {
		r := &reqs[i].Req
		b = appendBytes(b, []byte(reqs[i].Group))
		b = binary.AppendUvarint(b, uint64(r.RPCHeader.ProtocolVersion))
		b = appendBytes(b, r.RPCHeader.ID)
		b = appendBytes(b, r.RPCHeader.Addr)
		b = binary.AppendUvarint(b, r.Term)
		b = appendBytes(b, r.Leader) //nolint:staticcheck // raft still fills it
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// appendAnswers encodes answers as an answer frame.
func appendAnswers(b []byte, answers []beatAnswer) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, uint64(len(answers)))
	for i := range answers {
		a := &answers[i]
		b = appendBytes(b, []byte(a.Err))
		if a.Err != "" {
			continue
		}
		r := &a.Resp
		b = binary.AppendUvarint(b, uint64(r.RPCHeader.ProtocolVersion))
		b = appendBytes(b, r.RPCHeader.ID)
		b = appendBytes(b, r.RPCHeader.Addr)
		b = binary.AppendUvarint(b, r.Term)
		b = binary.AppendUvarint(b, r.LastLog)
		var flags byte
		if r.Success {
			flags |= 1
		}
		if r.NoRetryBackoff {
			flags |= 2
		}
		b = append(b, flags)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// readFrame reads one frame's body into buf (grown as needed).
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return buf, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxBeatFrame {
		return buf, fmt.Errorf("%w: body of %d bytes, at most %d", errBeatFrame, n, maxBeatFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return buf, err
}

// frameReader takes a frame's body apart; the first error sticks.
type frameReader struct {
	b   []byte
	err error
}

func (f *frameReader) uvarint() uint64 {
	if f.err != nil {
		return 0
	}
	v, n := binary.Uvarint(f.b)
	if n <= 0 {
		f.err = errBeatFrame
		return 0
	}
	f.b = f.b[n:]
	return v
}

func (f *frameReader) bytes() []byte {
	n := f.uvarint()
	if f.err != nil {
		return nil
	}
	if n > uint64(len(f.b)) {
		f.err = errBeatFrame
		return nil
	}
	s := f.b[:n:n]
	f.b = f.b[n:]
	return s
}

func (f *frameReader) byte() byte {
	if f.err != nil || len(f.b) == 0 {
		f.err = errBeatFrame
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// count reads an item count, refusing one larger than max or than the
// body could hold (each item takes at least min bytes).
func (f *frameReader) count(max, min int) int {
	n := f.uvarint()
	if f.err == nil && (n > uint64(max) || n*uint64(min) > uint64(len(f.b))) {
		f.err = fmt.Errorf("%w: %d items", errBeatFrame, n)
	}
	if f.err != nil {
		return 0
	}
	return int(n)
}

// clone copies a byte string out of the frame's buffer, which is reused.
func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}

// parseRound decodes a round frame's body.
func parseRound(body []byte) ([]beatReq, error) {
	f := &frameReader{b: body}
	n := f.count(maxBeats, 6)
	reqs := make([]beatReq, n)
	for i := 0; i < n && f.err == nil; i++ {
		r := &reqs[i].Req
		reqs[i].Group = string(f.bytes())
		r.RPCHeader.ProtocolVersion = raft.ProtocolVersion(f.uvarint())
		r.RPCHeader.ID = clone(f.bytes())
		r.RPCHeader.Addr = clone(f.bytes())
		r.Term = f.uvarint()
		r.Leader = clone(f.bytes()) //nolint:staticcheck // raft still reads it
	}
	if f.err == nil && len(f.b) != 0 {
		f.err = fmt.Errorf("%w: %d bytes after the last item", errBeatFrame, len(f.b))
	}
	if f.err != nil {
		return nil, f.err
	}
	return reqs, nil
}

// parseAnswers decodes an answer frame's body, which must hold want
// answers.
func parseAnswers(body []byte, want int) ([]beatAnswer, error) {
	f := &frameReader{b: body}
	n := f.count(maxBeats, 1)
	if f.err == nil && n != want {
		return nil, fmt.Errorf("%w: %d answers to %d requests", errBeatFrame, n, want)
	}
	answers := make([]beatAnswer, n)
	for i := 0; i < n && f.err == nil; i++ {
		a := &answers[i]
		a.Err = string(f.bytes())
		if a.Err != "" {
			continue
		}
		r := &a.Resp
		r.RPCHeader.ProtocolVersion = raft.ProtocolVersion(f.uvarint())
		r.RPCHeader.ID = clone(f.bytes())
		r.RPCHeader.Addr = clone(f.bytes())
		r.Term = f.uvarint()
		r.LastLog = f.uvarint()
		flags := f.byte()
		r.Success, r.NoRetryBackoff = flags&1 != 0, flags&2 != 0
	}
	if f.err == nil && len(f.b) != 0 {
		f.err = fmt.Errorf("%w: %d bytes after the last item", errBeatFrame, len(f.b))
	}
	if f.err != nil {
		return nil, f.err
	}
	return answers, nil
}
