package index

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

// Sealed subject sections.
//
// An encrypted store (package wal with a data key, package crypt) must not
// write subject names in the clear, and the checkpoint's subject section
// holds them. With a Sealer, the section is written sealed: its plaintext
// (the version-2 subject section, unchanged) is cut into chunks of
// sealChunk bytes, the last one shorter, each sealed on its own:
//
//	size  field
//	8     plaintext length N of the whole section
//	...   ceil(N / sealChunk) sealed chunks, each nonce || ciphertext ||
//	      tag (SealOverhead more bytes than its plaintext), with associated
//	      data "JWIX subjects" || N (8 bytes) || chunk number (4 bytes)
//	...   zero bytes to a multiple of 4
//
// The associated data binds each chunk to its place and to the section's
// length, so chunks cannot be reordered, dropped or taken from another
// checkpoint of a different length. The header's flags byte (offset 5)
// has bit 0 set. The sequence blocks stay clear: they hold segment offsets
// only, and a wrong offset reads a record whose own tag and sequence are
// checked. Chunks keep the encoder streaming through its small buffer: a
// checkpoint of many subjects is never in memory whole.

// Sealer seals a value with associated data, appending nonce, ciphertext
// and tag to dst (crypt.Session).
type Sealer interface {
	Seal(dst, plain, ad []byte) ([]byte, error)
}

// Opener opens what a Sealer sealed (crypt.DataKey).
type Opener interface {
	Open(dst, sealed, ad []byte) ([]byte, error)
}

const (
	// SealOverhead is what sealing adds to a chunk (crypt.Overhead).
	SealOverhead = 40
	sealChunk    = 64 << 10
	// flagSealedSubjects is bit 0 of the checkpoint header's flags byte.
	flagSealedSubjects = 1
	sealADPrefix       = "JWIX subjects"
)

func sealedSectionSize(n int) int {
	chunks := (n + sealChunk - 1) / sealChunk
	m := 8 + n + chunks*SealOverhead
	return m + pad4(m)
}

func sealAD(ad []byte, n uint64, chunk uint32) []byte {
	ad = append(ad[:0], sealADPrefix...)
	ad = binary.LittleEndian.AppendUint64(ad, n)
	return binary.LittleEndian.AppendUint32(ad, chunk)
}

// sealWriter takes the plaintext of the subject section, seals it chunk
// by chunk and hands the sealed chunks to the checkpoint's encoder.
type sealWriter struct {
	e     *encoder
	s     Sealer
	n     uint64 // the section's plaintext length
	buf   []byte // plaintext of the chunk being filled
	out   []byte // the last sealed chunk
	ad    []byte
	chunk uint32
	err   error
}

func (w *sealWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 && w.err == nil {
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		if len(w.buf) == cap(w.buf) {
			w.seal()
		}
	}
	if w.err != nil {
		return 0, w.err
	}
	return total, nil
}

func (w *sealWriter) seal() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	w.ad = sealAD(w.ad, w.n, w.chunk)
	w.out, w.err = w.s.Seal(w.out[:0], w.buf, w.ad)
	if w.err != nil {
		return
	}
	w.e.bytes(w.out)
	w.chunk++
	w.buf = w.buf[:0]
}

// encodeSealedSubjects writes x's subject section sealed by s (the layout
// above) through e.
func encodeSealedSubjects(e *encoder, x *Subjects, s Sealer) {
	n := x.encodedSize()
	e.u64(uint64(n))
	w := &sealWriter{e: e, s: s, n: uint64(n), buf: make([]byte, 0, min(n, sealChunk))}
	sub := &encoder{w: w, h: xxhash.New(), buf: make([]byte, 0, encodeBuf)}
	x.encode(sub)
	sub.flush()
	w.seal()
	if e.err == nil {
		e.err = sub.err
	}
	if e.err == nil && w.err != nil {
		e.err = w.err
	}
	m := 8 + n + int(w.chunk)*SealOverhead
	e.bytes(zeros[:pad4(m)])
}

// decodeSealedSubjects reads a sealed subject section at r into x, opening
// it with o. Without an opener (a structure check) the chunks are skipped
// and x stays empty.
func (x *Subjects) decodeSealed(r *reader, o Opener) error {
	n := r.u64()
	if r.err != nil {
		return r.err
	}
	if n > uint64(len(r.b)-r.p) {
		return fmt.Errorf("sealed subject section of %d bytes exceeds the %d remaining", n, len(r.b)-r.p)
	}
	size := sealedSectionSize(int(n)) - 8 // chunks and padding
	if size > len(r.b)-r.p {
		return fmt.Errorf("sealed subject section runs past the end")
	}
	start := r.p
	if o == nil {
		r.take(size)
		return r.err
	}
	plain := make([]byte, 0, n)
	var ad []byte
	for chunk := uint32(0); uint64(len(plain)) < n; chunk++ {
		k := min(int(n)-len(plain), sealChunk)
		sealed := r.take(k + SealOverhead)
		if r.err != nil {
			return r.err
		}
		ad = sealAD(ad, n, chunk)
		var err error
		if plain, err = o.Open(plain, sealed, ad); err != nil {
			return fmt.Errorf("sealed subject chunk %d does not open (tampered, or another key): %w", chunk, err)
		}
	}
	r.take(start + size - r.p) // the padding
	sr := &reader{b: plain}
	if err := x.decode(sr, CheckpointVersion); err != nil {
		return err
	}
	if sr.err != nil {
		return sr.err
	}
	if sr.p != len(plain) {
		return fmt.Errorf("sealed subject section: %d trailing bytes", len(plain)-sr.p)
	}
	return nil
}

var _ io.Writer = (*sealWriter)(nil)
