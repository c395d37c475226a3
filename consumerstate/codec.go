package consumerstate

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
)

// Snapshot encoding constants. Part of the on-disk format (see doc.go).
const (
	snapMagic       = "JWCS" // bytes 0-3 of an encoded state
	snapVersion     = 1      // byte 4
	snapHeaderSize  = 20     // magic, version, 3 reserved, generation, body length
	snapTrailerSize = 8      // xxhash64 of header and body
	snapOverhead    = snapHeaderSize + snapTrailerSize

	// Per-entry flag bits. Part of the on-disk format.
	entryRedelivered = 1 << 0 // a redelivery count follows
	entryNak         = 1 << 1 // a nak time follows
	entryFlagsKnown  = entryRedelivered | entryNak

	// minEntrySize is the smallest encoded pending entry: three one-byte
	// varints and the flags byte.
	minEntrySize = 4
)

// Encode returns the self-checking binary form of s (see doc.go). Decode
// reverses it. s should pass Verify; Decode rejects the encoding of a state
// that does not.
func Encode(s *State) []byte { return appendEncoded(nil, s, 0) }

// Decode parses bytes made by Encode. Any damage (wrong magic or version,
// truncation, checksum mismatch, malformed body, or a body that decodes to
// a state breaking State's invariants) returns an error wrapping ErrCorrupt
// and naming the byte offset. Decode never panics.
func Decode(b []byte) (*State, error) {
	s, _, err := decodeSnapshot(b, opener{}, "")
	return s, err
}

// encodedSizeHint is an upper-bound guess of the encoded size of s.
func encodedSizeHint(s *State) int {
	return snapOverhead + 5*binary.MaxVarintLen64 + len(s.Pending)*12 + len(s.Redelivered)*3
}

// encoder holds scratch space for encoding, reused across snapshots.
type encoder struct {
	buf, tmp []pendingEntry
}

// appendEncoded appends the encoding of s, stamped with generation gen, to
// dst.
func appendEncoded(dst []byte, s *State, gen uint64) []byte {
	var e encoder
	return e.appendEncoded(dst, s, gen)
}

func (e *encoder) appendEncoded(dst []byte, s *State, gen uint64) []byte {
	start := len(dst)
	dst = slices.Grow(dst, encodedSizeHint(s))
	dst = append(dst, snapMagic...)
	dst = append(dst, snapVersion, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, gen)
	dst = append(dst, 0, 0, 0, 0) // body length, filled below
	body := len(dst)

	dst = binary.AppendUvarint(dst, uint64(s.Delivered.Consumer))
	dst = binary.AppendUvarint(dst, uint64(s.Delivered.Stream))
	dst = binary.AppendUvarint(dst, uint64(s.AckFloor.Consumer))
	dst = binary.AppendUvarint(dst, uint64(s.AckFloor.Stream))
	dst = binary.AppendUvarint(dst, uint64(len(s.Pending)))
	var entries []pendingEntry
	entries, e.tmp = sortedPending(s, e.buf, e.tmp)
	e.buf = entries
	prevS, prevC, prevTS := s.AckFloor.Stream, s.AckFloor.Consumer, int64(0)
	haveRC := len(s.Redelivered) > 0
	for _, en := range entries {
		sseq, p := en.sseq, en.p
		dst = binary.AppendUvarint(dst, uint64(sseq-prevS))
		dst = binary.AppendUvarint(dst, uint64(p.Consumer-prevC))
		dst = binary.AppendVarint(dst, p.Timestamp-prevTS)
		var rc uint64
		if haveRC {
			rc = s.Redelivered[sseq]
		}
		var flags byte
		if rc > 0 {
			flags |= entryRedelivered
		}
		if p.NakAt != 0 {
			flags |= entryNak
		}
		dst = append(dst, flags)
		if rc > 0 {
			dst = binary.AppendUvarint(dst, rc)
		}
		if p.NakAt != 0 {
			dst = binary.AppendVarint(dst, p.NakAt-p.Timestamp)
		}
		prevS, prevC, prevTS = sseq, p.Consumer, p.Timestamp
	}
	binary.LittleEndian.PutUint32(dst[start+16:], uint32(len(dst)-body))
	return binary.LittleEndian.AppendUint64(dst, xxhash.Sum64(dst[start:]))
}

// sealSnapshot appends to dst the stored form of enc, an encoding by
// appendEncoded of consumer name's state: the same header flagged sealed,
// the body sealed (associated data: the header and the name), the
// checksum of both. enc must be whole.
func (s *sealer) sealSnapshot(dst, enc []byte, name string) ([]byte, error) {
	body := enc[snapHeaderSize : len(enc)-snapTrailerSize]
	start := len(dst)
	dst = append(dst, enc[:snapHeaderSize]...)
	hdr := dst[start:]
	hdr[5] = flagSealed
	binary.LittleEndian.PutUint32(hdr[16:], uint32(len(body)+crypt.Overhead))
	dst, err := s.seal(dst, body, headerAD(adState, dst[start:start+snapHeaderSize], name))
	if err != nil {
		return dst[:start], err
	}
	return binary.LittleEndian.AppendUint64(dst, xxhash.Sum64(dst[start:])), nil
}

// decodeSnapshot parses an encoded state and returns it with the
// generation it was stamped with. A sealed one (consumer name's state.dat)
// is opened through o: a body that does not open is ErrCorrupt. Read
// without a key (o.lax) a sealed snapshot is checked by its checksum only,
// and the state returned is nil.
func decodeSnapshot(b []byte, o opener, name string) (*State, uint64, error) {
	if len(b) < snapOverhead {
		return nil, 0, corruptf("consumer state: %d bytes, shorter than the %d-byte minimum", len(b), snapOverhead)
	}
	if string(b[0:4]) != snapMagic {
		return nil, 0, corruptf("consumer state: offset 0: bad magic %q", b[0:4])
	}
	if b[4] != snapVersion {
		return nil, 0, corruptf("consumer state: offset 4: unsupported version %d", b[4])
	}
	if b[5]&^flagSealed|b[6]|b[7] != 0 {
		return nil, 0, corruptf("consumer state: offset 5: reserved bytes not zero")
	}
	sealed := b[5] == flagSealed
	if ok, why := o.sealedOK(sealed); !ok {
		return nil, 0, corruptf("consumer state: offset 5: %s", why)
	}
	gen := binary.LittleEndian.Uint64(b[8:16])
	bodyLen := uint64(binary.LittleEndian.Uint32(b[16:20]))
	if want := uint64(len(b) - snapOverhead); bodyLen != want {
		return nil, 0, corruptf("consumer state: offset 16: body length %d, but %d bytes are present", bodyLen, want)
	}
	end := snapHeaderSize + int(bodyLen)
	if got, want := binary.LittleEndian.Uint64(b[end:]), xxhash.Sum64(b[:end]); got != want {
		return nil, 0, corruptf("consumer state: offset %d: checksum %016x, computed %016x", end, got, want)
	}
	body := b[snapHeaderSize:end]
	if sealed {
		if o.key == nil {
			return nil, gen, nil // lax: checked by the checksum only
		}
		plain, err := o.key.Open(nil, body, headerAD(adState, b[:snapHeaderSize], name))
		if err != nil {
			return nil, 0, corruptf("consumer state: offset %d: sealed body does not open (damaged, moved, or another key): %v", snapHeaderSize, err)
		}
		body = plain
	}
	s, err := decodeBody(body, snapHeaderSize)
	if err != nil {
		return nil, 0, err
	}
	return s, gen, nil
}

// reader consumes varints from a body, remembering the first error.
type reader struct {
	b    []byte
	pos  int
	base int    // offset of b[0] in the whole encoding or file, for errors
	ctx  string // what is being read, for errors
	err  error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = corruptf("%s: offset %d: bad %s", r.ctx, r.base+r.pos, what)
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.pos:])
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail(what)
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

// decodeBody parses the body of an encoded state and checks State's
// invariants as it goes. base is the body's offset in the encoding.
func decodeBody(b []byte, base int) (*State, error) {
	r := &reader{b: b, base: base, ctx: "consumer state"}
	s := &State{indexed: true}
	s.Delivered.Consumer = ConsumerSeq(r.uvarint("delivered consumer seq"))
	s.Delivered.Stream = StreamSeq(r.uvarint("delivered stream seq"))
	s.AckFloor.Consumer = ConsumerSeq(r.uvarint("ack floor consumer seq"))
	s.AckFloor.Stream = StreamSeq(r.uvarint("ack floor stream seq"))
	at := r.base + r.pos
	n := r.uvarint("pending count")
	if r.err != nil {
		return nil, r.err
	}
	if s.AckFloor.Consumer > s.Delivered.Consumer || s.AckFloor.Stream > s.Delivered.Stream {
		return nil, corruptf("consumer state: offset %d: ack floor %+v beyond delivered %+v", base, s.AckFloor, s.Delivered)
	}
	if n > uint64(len(b)-r.pos)/minEntrySize {
		return nil, corruptf("consumer state: offset %d: pending count %d does not fit in %d bytes", at, n, len(b)-r.pos)
	}
	if n == 0 && s.AckFloor != s.Delivered {
		return nil, corruptf("consumer state: offset %d: nothing pending but ack floor %+v differs from delivered %+v",
			at, s.AckFloor, s.Delivered)
	}
	s.Pending = make(map[StreamSeq]Pending, n)
	s.order = make([]StreamSeq, 0, n)
	prevS, prevC, prevTS := s.AckFloor.Stream, s.AckFloor.Consumer, int64(0)
	for i := uint64(0); i < n; i++ {
		at := r.base + r.pos
		ds := r.uvarint("pending stream seq delta")
		dc := r.uvarint("pending consumer seq delta")
		dt := r.varint("pending timestamp delta")
		flags := r.byte("pending flags")
		if r.err != nil {
			return nil, r.err
		}
		if ds == 0 || ds > uint64(s.Delivered.Stream-prevS) {
			return nil, corruptf("consumer state: offset %d: pending entry %d: stream seq delta %d leaves (%d, %d]",
				at, i, ds, prevS, s.Delivered.Stream)
		}
		if dc == 0 || dc > uint64(s.Delivered.Consumer-prevC) {
			return nil, corruptf("consumer state: offset %d: pending entry %d: consumer seq delta %d leaves (%d, %d]",
				at, i, dc, prevC, s.Delivered.Consumer)
		}
		if flags&^entryFlagsKnown != 0 {
			return nil, corruptf("consumer state: offset %d: pending entry %d: unknown flags %#x", at, i, flags)
		}
		sseq := prevS + StreamSeq(ds)
		p := Pending{Consumer: prevC + ConsumerSeq(dc), Timestamp: prevTS + dt}
		if flags&entryRedelivered != 0 {
			rc := r.uvarint("redelivery count")
			if r.err == nil && rc == 0 {
				return nil, corruptf("consumer state: offset %d: pending entry %d: zero redelivery count", at, i)
			}
			if s.Redelivered == nil {
				s.Redelivered = make(map[StreamSeq]uint64)
			}
			s.Redelivered[sseq] = rc
		}
		if flags&entryNak != 0 {
			p.NakAt = p.Timestamp + r.varint("nak time delta")
			if r.err == nil && p.NakAt == 0 {
				return nil, corruptf("consumer state: offset %d: pending entry %d: nak time 0", at, i)
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		s.Pending[sseq] = p
		s.order = append(s.order, sseq)
		prevS, prevC, prevTS = sseq, p.Consumer, p.Timestamp
	}
	if r.pos != len(b) {
		return nil, corruptf("consumer state: offset %d: %d trailing bytes", r.base+r.pos, len(b)-r.pos)
	}
	s.live = len(s.Pending)
	s.orderBuf = s.order[:0]
	return s, nil
}
