package websocket

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
	"unicode/utf8"
)

// ErrClosed is returned by writes after a close frame went out.
var ErrClosed = errors.New("websocket: close frame sent")

// ProtocolError is a frame the client should not have sent. The
// connection answered it with a close frame carrying Status and Reason.
type ProtocolError struct {
	Status int
	Reason string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("websocket: %s (close %d)", e.Reason, e.Status)
}

// controlWriteTimeout bounds a pong or close frame the read side sends.
const controlWriteTimeout = 10 * time.Second

// Conn is a server-side WebSocket connection seen as a byte stream: Read
// returns the payload of the client's data messages (text or binary,
// fragmented or not, compressed or not) as one stream, answering pings
// and closes on the way; Write sends bytes as one binary message.
//
// Read and Write may run concurrently (one goroutine each). Frames the
// read side sends (pong, close) go out between the write side's frames,
// never inside one.
type Conn struct {
	nc         net.Conn
	br         *bufio.Reader
	maxMessage int64

	// Fixed by the handshake.
	masked     bool // client frames must be masked (no Nats-No-Masking)
	compress   bool // permessage-deflate was negotiated
	frameLimit int  // cut server messages into frames of this payload size; 0 = none
	noCompFrag bool // never cut a compressed message (Safari)

	// Read side: the read goroutine only.
	rd struct {
		err       error  // sticky: a protocol error or the close
		open      bool   // a message is open (its final frame not yet read)
		rem       uint64 // payload bytes left in the current data frame
		key       [4]byte
		keyPos    int
		masked    bool
		infl      io.ReadCloser // the inflater, kept between messages
		inflating bool          // a compressed message is being inflated
		inflSrc   *msgReader
		inflOut   int64 // bytes inflated from the current message
		hdr       [maxHeader]byte
		ctl       [maxControlPayload]byte
	}

	// Write side, and every frame the read side sends.
	wmu struct {
		sync.Mutex
		// Guarded by the mutex above.
		closeSent bool
		fw        *flate.Writer
		zbuf      sliceWriter
		hdr       []byte
		bufs      net.Buffers
	}
}

func newConn(nc net.Conn, br *bufio.Reader, o Options) *Conn {
	c := &Conn{nc: nc, br: br, maxMessage: o.MaxMessage}
	if c.maxMessage <= 0 {
		c.maxMessage = DefaultMaxMessage
	}
	return c
}

// Compressed reports whether permessage-deflate was negotiated.
func (c *Conn) Compressed() bool { return c.compress }

// NetConn returns the connection under the frames (a *tls.Conn for wss).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Read returns payload bytes of the client's data messages. It returns
// io.EOF after the client's close frame (answered with a close frame) and
// a *ProtocolError after a frame that breaks RFC 6455 (answered with a
// close frame 1002, 1007 or 1009).
func (c *Conn) Read(p []byte) (int, error) {
	if c.rd.err != nil {
		return 0, c.rd.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if c.rd.inflating {
			n, err := c.rd.infl.Read(p)
			if n > 0 {
				c.rd.inflOut += int64(n)
				if c.rd.inflOut > c.maxMessage {
					return 0, c.fail(CloseMessageTooBig, "inflated message larger than the limit")
				}
				if errors.Is(err, io.EOF) {
					if err := c.endInflate(); err != nil {
						return 0, err
					}
				}
				return n, nil
			}
			switch {
			case c.rd.err != nil:
				return 0, c.rd.err
			case errors.Is(err, io.EOF):
				if err := c.endInflate(); err != nil {
					return 0, err
				}
			case err != nil:
				return 0, c.fail(CloseInvalidData, "invalid compressed data")
			}
			continue
		}
		if c.rd.rem > 0 {
			return c.readPayload(p)
		}
		h, err := c.nextData()
		if err != nil {
			return 0, err
		}
		if h.rsv1 { // the first frame of a compressed message
			c.startInflate()
		}
	}
}

// readPayload reads from the current data frame into p.
func (c *Conn) readPayload(p []byte) (int, error) {
	if uint64(len(p)) > c.rd.rem {
		p = p[:c.rd.rem]
	}
	n, err := c.br.Read(p)
	if n > 0 {
		c.rd.rem -= uint64(n)
		if c.rd.masked {
			c.rd.keyPos = unmask(p[:n], c.rd.key, c.rd.keyPos)
		}
		return n, nil
	}
	return 0, c.readErr(err)
}

// readErr makes a socket error sticky.
func (c *Conn) readErr(err error) error {
	if err == nil {
		err = io.ErrNoProgress
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the client went away without a close frame
	}
	c.rd.err = err
	return err
}

// nextData reads frame headers until a data frame, answering the control
// frames met on the way, and checks the data frame against the message
// in progress. Its payload is then c.rd.rem bytes on the socket.
func (c *Conn) nextData() (header, error) {
	for {
		h, err := c.readHeader()
		if err != nil {
			return h, err
		}
		if isControl(h.opcode) {
			if err := c.control(h); err != nil {
				return h, err
			}
			continue
		}
		switch h.opcode {
		case opText, opBinary:
			if c.rd.open {
				return h, c.fail(CloseProtocolError, "new message started before final frame for previous message was received")
			}
		case opContinuation:
			if !c.rd.open || h.rsv1 {
				return h, c.fail(CloseProtocolError, "invalid continuation frame")
			}
		}
		c.rd.open = !h.fin
		c.rd.rem, c.rd.masked, c.rd.key, c.rd.keyPos = h.length, h.masked, h.maskKey, 0
		return h, nil
	}
}

// readHeader reads and checks one frame header.
func (c *Conn) readHeader() (header, error) {
	var h header
	b := c.rd.hdr[:]
	if _, err := io.ReadFull(c.br, b[:2]); err != nil {
		return h, c.readErr(err)
	}
	h.fin, h.rsv1, h.opcode = b[0]&bitFin != 0, b[0]&bitRSV1 != 0, b[0]&0x0F
	h.masked = b[1]&bitMask != 0
	h.length = uint64(b[1] & 0x7F)
	switch {
	case b[0]&(bitRSV2|bitRSV3) != 0:
		return h, c.fail(CloseProtocolError, "RSV2 and RSV3 must be clear")
	case h.rsv1 && !c.compress:
		return h, c.fail(CloseProtocolError, "compressed frame received without negotiated permessage-deflate")
	case c.masked && !h.masked:
		return h, c.fail(CloseProtocolError, "mask bit missing")
	case h.opcode > opBinary && !isControl(h.opcode) || h.opcode > opPong:
		return h, c.fail(CloseProtocolError, fmt.Sprintf("unknown opcode %d", h.opcode))
	case isControl(h.opcode) && h.length > maxControlPayload:
		return h, c.fail(CloseProtocolError, "control frame length bigger than maximum allowed of 125 bytes")
	case isControl(h.opcode) && !h.fin:
		return h, c.fail(CloseProtocolError, "control frame does not have final bit set")
	case isControl(h.opcode) && h.rsv1:
		return h, c.fail(CloseProtocolError, "control frame must not be compressed")
	}
	switch h.length {
	case 126:
		if _, err := io.ReadFull(c.br, b[:2]); err != nil {
			return h, c.readErr(err)
		}
		h.length = uint64(binary.BigEndian.Uint16(b[:2]))
	case 127:
		if _, err := io.ReadFull(c.br, b[:8]); err != nil {
			return h, c.readErr(err)
		}
		if h.length = binary.BigEndian.Uint64(b[:8]); h.length>>63 != 0 {
			return h, c.fail(CloseProtocolError, "invalid 64-bit payload length")
		}
	}
	if h.masked {
		if _, err := io.ReadFull(c.br, h.maskKey[:]); err != nil {
			return h, c.readErr(err)
		}
	}
	return h, nil
}

// control handles a ping, pong or close frame.
func (c *Conn) control(h header) error {
	payload := c.rd.ctl[:h.length]
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return c.readErr(err)
	}
	if h.masked {
		unmask(payload, h.maskKey, 0)
	}
	switch h.opcode {
	case opPing:
		if err := c.writeControl(opPong, payload); err != nil && !errors.Is(err, ErrClosed) {
			return c.readErr(err)
		}
	case opClose:
		switch {
		case len(payload) == 1:
			return c.fail(CloseProtocolError, "close frame payload cannot be 1 byte")
		case len(payload) >= 2:
			status := int(binary.BigEndian.Uint16(payload))
			if !validCloseStatus(status) {
				return c.fail(CloseProtocolError, fmt.Sprintf("invalid close status code %d", status))
			}
			if !utf8.Valid(payload[2:]) {
				return c.fail(CloseInvalidData, "invalid utf8 body in close frame")
			}
			_ = c.sendClose(payload) // echo the status, as RFC 6455 §5.5.1 asks
		default:
			_ = c.sendClose(nil)
		}
		c.rd.err = io.EOF
		return io.EOF
	}
	return nil // a pong: nothing to do
}

// fail answers a protocol error with a close frame and makes it sticky.
func (c *Conn) fail(status int, reason string) error {
	_ = c.sendClose(closePayload(status, reason))
	err := &ProtocolError{Status: status, Reason: reason}
	c.rd.err = err
	return err
}

// CloseWith sends a close frame with status and reason, unless one was
// sent already. The server calls it when it ends the connection, after
// the last data, and then closes the socket.
func (c *Conn) CloseWith(status int, reason string) error {
	if status == CloseTLSHandshake { // reserved: never on the wire
		status = CloseGoingAway
	}
	return c.sendClose(closePayload(status, reason))
}

func (c *Conn) sendClose(payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wmu.closeSent {
		return ErrClosed
	}
	c.wmu.closeSent = true
	return c.writeFrameLocked(opClose, payload)
}

// writeControl sends a pong.
func (c *Conn) writeControl(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wmu.closeSent {
		return ErrClosed
	}
	return c.writeFrameLocked(op, payload)
}

// writeFrameLocked writes one small frame with its own deadline, for the
// read side (whose frames may come when the write side is idle and its
// deadline long past). wmu held.
func (c *Conn) writeFrameLocked(op byte, payload []byte) error {
	b := appendHeader(c.wmu.hdr[:0], true, false, op, len(payload))
	b = append(b, payload...)
	c.wmu.hdr = b[:0]
	_ = c.nc.SetWriteDeadline(time.Now().Add(controlWriteTimeout))
	_, err := c.nc.Write(b)
	return err
}

// Write sends p as one binary message.
func (c *Conn) Write(p []byte) (int, error) {
	n, err := c.WriteBuffers([][]byte{p})
	return int(n), err
}

// WriteBuffers sends the buffers, in order, as one binary message (cut
// into frames for a browser): deflated when compression was negotiated and
// they hold more than 64 bytes. It returns the bytes of bufs written.
func (c *Conn) WriteBuffers(bufs [][]byte) (int64, error) {
	var total int64
	for _, b := range bufs {
		total += int64(len(b))
	}
	if total == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wmu.closeSent {
		return 0, ErrClosed
	}
	if c.compress && total > compressThreshold {
		z, err := c.deflateLocked(bufs)
		if err != nil {
			return 0, err
		}
		limit := c.frameLimit
		if c.noCompFrag {
			limit = 0
		}
		if err := c.sendMessageLocked([][]byte{z}, int64(len(z)), true, limit); err != nil {
			return 0, err
		}
		return total, nil
	}
	if err := c.sendMessageLocked(bufs, total, false, c.frameLimit); err != nil {
		return 0, err
	}
	return total, nil
}

// sendMessageLocked writes bufs (size bytes) as one message, in frames of
// at most limit payload bytes (0 = one frame), with one vectored write.
// wmu held.
func (c *Conn) sendMessageLocked(bufs [][]byte, size int64, compressed bool, limit int) error {
	out := c.wmu.bufs[:0]
	hdrs := c.wmu.hdr[:0]
	if limit <= 0 || size <= int64(limit) {
		hdrs = appendHeader(hdrs, true, compressed, opBinary, int(size))
		out = append(out, hdrs)
		out = append(out, bufs...)
	} else {
		// Cut into frames: headers go in one backing array sized up front
		// so appending never moves the slices already in out.
		frames := int((size + int64(limit) - 1) / int64(limit))
		if cap(hdrs) < frames*maxHeader {
			hdrs = make([]byte, 0, frames*maxHeader)
		}
		first, left := true, size
		for _, b := range bufs {
			for len(b) > 0 {
				n := min(len(b), limit)
				op := byte(opContinuation)
				if first {
					op = opBinary
				}
				left -= int64(n)
				start := len(hdrs)
				hdrs = appendHeader(hdrs, left == 0, first && compressed, op, n)
				out = append(out, hdrs[start:len(hdrs):len(hdrs)], b[:n])
				first, b = false, b[n:]
			}
		}
	}
	c.wmu.hdr = hdrs[:0]
	bufsCopy := out
	_, err := bufsCopy.WriteTo(c.nc)
	clear(out)
	c.wmu.bufs = out[:0]
	return err
}

// Linger follows the server's close frame: it half-closes the socket and
// reads, discarding, until the client closes its side or d passes. The
// client closes after it has read the close frame (RFC 6455 §7.1.1), and
// closing a socket with unread input would reset the connection and could
// destroy the last -ERR before the client reads it. Call it only once
// nothing else reads the Conn.
func (c *Conn) Linger(d time.Duration) {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	_, _ = io.Copy(io.Discard, io.LimitReader(c.nc, 1<<20))
}

// Close closes the socket (without a close frame: CloseWith sends one).
func (c *Conn) Close() error { return c.nc.Close() }

// LocalAddr, RemoteAddr and the deadlines are the socket's.
func (c *Conn) LocalAddr() net.Addr                { return c.nc.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr               { return c.nc.RemoteAddr() }
func (c *Conn) SetDeadline(t time.Time) error      { return c.nc.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.nc.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }
