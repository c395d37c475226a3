package websocket

import (
	"compress/flate"
	"io"
)

// permessage-deflate (RFC 7692) without context takeover either way: each
// message is deflated on its own, and its final 00 00 ff ff (the empty
// stored block of a sync flush) is left off on the wire. To inflate, the
// reader puts it back and adds an empty final stored block, so the
// inflater ends at the message's end (the same tail nats-server adds).
var inflateTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// sliceWriter is a bytes.Buffer without the read side.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// deflateLocked compresses bufs into one message payload. wmu held; the
// result is valid until the next call.
func (c *Conn) deflateLocked(bufs [][]byte) ([]byte, error) {
	w := &c.wmu.zbuf
	w.b = w.b[:0]
	if c.wmu.fw == nil {
		fw, err := flate.NewWriter(w, flate.BestSpeed)
		if err != nil {
			return nil, err
		}
		c.wmu.fw = fw
	} else {
		c.wmu.fw.Reset(w)
	}
	for _, b := range bufs {
		if _, err := c.wmu.fw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := c.wmu.fw.Flush(); err != nil {
		return nil, err
	}
	z := w.b
	if len(z) >= 4 {
		z = z[:len(z)-4] // the 00 00 ff ff the other side adds back
	}
	if cap(w.b) > 1<<20 {
		w.b = nil // do not keep a large buffer for an idle connection
	}
	return z, nil
}

// msgReader is what the inflater reads: the payload of the current
// compressed message, frame after frame (answering control frames in
// between), then inflateTail. Errors are sticky in c.rd.err.
type msgReader struct {
	c    *Conn
	in   int64 // compressed bytes read of this message
	tail int   // bytes of inflateTail given; -1 = not in the tail
}

func (m *msgReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := m.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = b
		n++
		if m.tail < 0 && m.c.rd.rem == 0 {
			break // do not block for the next frame with bytes in hand
		}
	}
	return n, nil
}

// ReadByte makes msgReader an io.ByteReader, so flate reads no further
// than it needs (it would otherwise wrap it in a bufio.Reader).
func (m *msgReader) ReadByte() (byte, error) {
	c := m.c
	if c.rd.err != nil {
		return 0, c.rd.err
	}
	for m.tail < 0 {
		if c.rd.rem > 0 {
			b, err := c.br.ReadByte()
			if err != nil {
				return 0, c.readErr(err)
			}
			if c.rd.masked {
				b ^= c.rd.key[c.rd.keyPos]
				c.rd.keyPos = (c.rd.keyPos + 1) & 3
			}
			c.rd.rem--
			if m.in++; m.in > c.maxMessage {
				return 0, c.fail(CloseMessageTooBig, "compressed message larger than the limit")
			}
			return b, nil
		}
		if !c.rd.open { // the final frame is read: on to the tail
			m.tail = 0
			break
		}
		if _, err := c.nextData(); err != nil {
			return 0, err
		}
	}
	if m.tail >= len(inflateTail) {
		return 0, io.EOF
	}
	b := inflateTail[m.tail]
	m.tail++
	return b, nil
}

// startInflate begins a compressed message whose first frame header was
// just read.
func (c *Conn) startInflate() {
	if c.rd.inflSrc == nil {
		c.rd.inflSrc = &msgReader{c: c}
	}
	src := c.rd.inflSrc
	src.in, src.tail = 0, -1
	if c.rd.infl == nil {
		c.rd.infl = flate.NewReader(src)
	} else if err := c.rd.infl.(flate.Resetter).Reset(src, nil); err != nil {
		c.rd.infl = flate.NewReader(src)
	}
	c.rd.inflOut = 0
	c.rd.inflating = true
}

// endInflate ends the compressed message when the inflater reports its
// end. Deflate data that ends before the whole message was read (a final
// block of the client's own) is invalid.
func (c *Conn) endInflate() error {
	c.rd.inflating = false
	if c.rd.inflSrc.tail != len(inflateTail) {
		return c.fail(CloseInvalidData, "invalid compressed data")
	}
	return nil
}
