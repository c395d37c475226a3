package index

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// EncodeTo writes the checkpoint of x and trailer to w (the format is in
// doc.go and checkpoint.go) through a small buffer, so that a checkpoint of
// a large index (a byte or more per message) never sits in memory whole. It
// returns the bytes written.
func EncodeTo(w io.Writer, x *Index, trailer []byte) (int64, error) {
	n, _, err := encodeTo(w, x, trailer, false, nil)
	return n, err
}

// EncodeToPlaced is EncodeTo that also returns where each packed block of
// the sequence index went in the output, for Seqs.Repoint.
func EncodeToPlaced(w io.Writer, x *Index, trailer []byte) (int64, *Placement, error) {
	return encodeTo(w, x, trailer, true, nil)
}

// EncodeToPlacedSealed is EncodeToPlaced with the subject section sealed
// by s (sealsubj.go): the checkpoint of an encrypted store.
func EncodeToPlacedSealed(w io.Writer, x *Index, trailer []byte, s Sealer) (int64, *Placement, error) {
	return encodeTo(w, x, trailer, true, s)
}

func encodeTo(w io.Writer, x *Index, trailer []byte, place bool, s Sealer) (int64, *Placement, error) {
	size := encodedSize(x, trailer, s != nil)
	e := &encoder{w: w, h: xxhash.New(), buf: make([]byte, 0, encodeBuf)}
	if place {
		e.place = &Placement{}
	}
	e.bytes([]byte(CheckpointMagic))
	var flags byte
	if s != nil {
		flags = flagSealedSubjects
	}
	e.bytes([]byte{CheckpointVersion, flags, 0, 0})
	e.u64(uint64(size - checkpointHead - 8))
	e.u32(uint32(len(x.Seqs.blocks)))
	for _, bl := range x.Seqs.blocks {
		e.block(bl) // blockcodec.go
	}
	if s != nil {
		encodeSealedSubjects(e, x.Subj, s) // sealsubj.go
	} else {
		x.Subj.encode(e) // subjcodec.go
	}
	e.u32(uint32(len(trailer)))
	e.bytes(trailer)
	e.flush()
	if e.err == nil {
		e.buf = binary.LittleEndian.AppendUint64(e.buf[:0], e.h.Sum64())
		e.write(e.buf)
	}
	if e.err == nil && e.n != int64(size) {
		return e.n, nil, fmt.Errorf("index checkpoint: wrote %d bytes, expected %d", e.n, size)
	}
	if e.err != nil {
		return e.n, nil, e.err
	}
	return e.n, e.place, nil
}

const encodeBuf = 64 << 10

// encoder buffers, hashes and writes the checkpoint's bytes.
type encoder struct {
	w     io.Writer
	h     *xxhash.Digest
	buf   []byte
	n     int64
	err   error
	place *Placement // nil unless EncodeToPlaced
}

// at is the offset in the output of the next byte written.
func (e *encoder) at() int64 { return e.n + int64(len(e.buf)) }

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += int64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	e.err = err
}

func (e *encoder) flush() {
	e.h.Write(e.buf)
	e.write(e.buf)
	e.buf = e.buf[:0]
}

func (e *encoder) room(n int) {
	if len(e.buf)+n > cap(e.buf) {
		e.flush()
	}
}

func (e *encoder) u16(v uint16) { e.room(2); e.buf = binary.LittleEndian.AppendUint16(e.buf, v) }
func (e *encoder) u32(v uint32) { e.room(4); e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }
func (e *encoder) u64(v uint64) { e.room(8); e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

func (e *encoder) bytes(b []byte) {
	for len(b) > 0 {
		e.room(1)
		n := copy(e.buf[len(e.buf):cap(e.buf)], b)
		e.buf = e.buf[:len(e.buf)+n]
		b = b[n:]
	}
}
