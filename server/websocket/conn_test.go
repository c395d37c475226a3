package websocket

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pipeConn is an in-memory net.Conn: reads come from in (in chunks of at
// most chunk bytes), writes go to out.
type pipeConn struct {
	in    *bytes.Reader
	chunk int
	out   bytes.Buffer
}

func (p *pipeConn) Read(b []byte) (int, error) {
	if p.chunk > 0 && len(b) > p.chunk {
		b = b[:p.chunk]
	}
	return p.in.Read(b)
}
func (p *pipeConn) Write(b []byte) (int, error)        { return p.out.Write(b) }
func (p *pipeConn) Close() error                       { return nil }
func (p *pipeConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (p *pipeConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (p *pipeConn) SetDeadline(t time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(t time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(t time.Time) error { return nil }

// testConn is a Conn past the handshake reading input.
func testConn(input []byte, chunk int, compress bool, maxMessage int64) (*Conn, *pipeConn) {
	pc := &pipeConn{in: bytes.NewReader(input), chunk: chunk}
	c := newConn(pc, bufio.NewReader(pc), Options{MaxMessage: maxMessage})
	c.masked, c.compress = true, compress
	return c, pc
}

func frame(b0 byte, payload []byte) []byte {
	key := [4]byte{0xA, 0xB, 0xC, 0xD}
	var f []byte
	switch n := len(payload); {
	case n <= 125:
		f = []byte{b0, 0x80 | byte(n)}
	case n < 1<<16:
		f = binary.BigEndian.AppendUint16([]byte{b0, 0x80 | 126}, uint16(n))
	default:
		f = binary.BigEndian.AppendUint64([]byte{b0, 0x80 | 127}, uint64(n))
	}
	f = append(f, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i&3])
	}
	return f
}

// stored is n bytes deflated without compression (a little over n).
func stored(n int) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.NoCompression)
	_, _ = w.Write(make([]byte, n))
	_ = w.Flush()
	return buf.Bytes()
}

func deflate(t testing.TB, p []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	_, _ = w.Write(p)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	return b[:len(b)-4]
}

// serverFrames parses what the server wrote: (opcode|fin|rsv1 byte, payload).
func serverFrames(t testing.TB, b []byte) (heads []byte, payloads [][]byte) {
	for len(b) > 0 {
		if b[1]&0x80 != 0 {
			t.Fatal("server frame masked")
		}
		n, h := uint64(b[1]&0x7F), 2
		switch n {
		case 126:
			n, h = uint64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			n, h = binary.BigEndian.Uint64(b[2:]), 10
		}
		heads = append(heads, b[0])
		payloads = append(payloads, b[h:h+int(n)])
		b = b[h+int(n):]
	}
	return heads, payloads
}

func TestReadFragmentsControlAndCompression(t *testing.T) {
	big := bytes.Repeat([]byte("PUB a 5\r\nhello\r\n"), 4096)
	z := deflate(t, big)
	var in []byte
	in = append(in, frame(0x01, []byte("CONN"))...) // text, not final
	in = append(in, frame(0x89, []byte("p1"))...)   // ping inside the message
	in = append(in, frame(0x80, []byte("ECT {}\r\n"))...)
	in = append(in, frame(0x42, z[:len(z)/2])...) // compressed, first half
	in = append(in, frame(0x8A, nil)...)          // pong: ignored
	in = append(in, frame(0x80, z[len(z)/2:])...) // final
	in = append(in, frame(0x82, []byte("PING\r\n"))...)
	in = append(in, frame(0x88, []byte{0x03, 0xE8})...)
	for _, chunk := range []int{0, 1, 7} {
		c, pc := testConn(in, chunk, true, 0)
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		want := append(append([]byte("CONNECT {}\r\n"), big...), "PING\r\n"...)
		if !bytes.Equal(got, want) {
			t.Fatalf("chunk %d: read %d bytes, want %d", chunk, len(got), len(want))
		}
		heads, payloads := serverFrames(t, pc.out.Bytes())
		if len(heads) != 2 || heads[0] != 0x8A || string(payloads[0]) != "p1" || heads[1] != 0x88 ||
			!bytes.Equal(payloads[1], []byte{0x03, 0xE8}) {
			t.Fatalf("chunk %d: server sent %x %q, want a pong and the close echoed", chunk, heads, payloads)
		}
	}
}

func TestReadErrors(t *testing.T) {
	bomb := deflate(t, make([]byte, 1<<20)) // 1 MiB of zeros in ~1 KiB
	var junk []byte
	{
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, flate.BestSpeed)
		_, _ = w.Write([]byte("abc"))
		_ = w.Close()                          // a final block of its own...
		junk = append(buf.Bytes(), 0x55, 0x66) // ...and bytes after it
	}
	for _, tc := range []struct {
		name     string
		in       []byte
		compress bool
		status   int
	}{
		{"unmasked", []byte{0x82, 0x01, 'x'}, false, CloseProtocolError},
		{"opcode 3", frame(0x83, nil), false, CloseProtocolError},
		{"opcode 11", frame(0x8B, nil), false, CloseProtocolError},
		{"rsv3", frame(0x92, nil), false, CloseProtocolError},
		{"rsv1 without deflate", frame(0xC2, []byte("x")), false, CloseProtocolError},
		{"rsv1 on continuation", append(frame(0x42, []byte{0}), frame(0xC0, []byte{0})...), true, CloseProtocolError},
		{"rsv1 on ping", frame(0xC9, nil), true, CloseProtocolError},
		{"long close", frame(0x88, make([]byte, 126)), false, CloseProtocolError},
		{"close status 999", frame(0x88, []byte{0x03, 0xE7}), false, CloseProtocolError},
		{"close reason not utf-8", frame(0x88, []byte{0x03, 0xE8, 0xff}), false, CloseInvalidData},
		{"bad deflate", frame(0xC2, []byte{0xff, 0xff, 0xff}), true, CloseInvalidData},
		{"data after the final block", frame(0xC2, junk), true, CloseInvalidData},
		{"inflated too large", frame(0xC2, bomb), true, CloseMessageTooBig},
		{"compressed too large", frame(0xC2, stored(70<<10)), true, CloseMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, pc := testConn(tc.in, 0, tc.compress, 64<<10)
			_, err := io.ReadAll(c)
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Status != tc.status {
				t.Fatalf("err %v, want close %d", err, tc.status)
			}
			heads, payloads := serverFrames(t, pc.out.Bytes())
			if len(heads) != 1 || heads[0] != 0x88 || int(binary.BigEndian.Uint16(payloads[0])) != tc.status {
				t.Fatalf("server sent %x %q", heads, payloads)
			}
			if _, err := c.Read(make([]byte, 10)); err != pe {
				t.Fatalf("the error is not sticky: %v", err)
			}
			if _, err := c.Write([]byte("x")); !errors.Is(err, ErrClosed) {
				t.Fatalf("write after close: %v", err)
			}
		})
	}
	// A client that goes away mid-frame is an unexpected EOF, with no
	// close frame.
	c, pc := testConn(frame(0x82, []byte("PING\r\n"))[:5], 0, false, 0)
	if _, err := io.ReadAll(c); !errors.Is(err, io.ErrUnexpectedEOF) || pc.out.Len() != 0 {
		t.Fatalf("truncated frame: %v, wrote %q", err, pc.out.Bytes())
	}
}

func TestWriteMessages(t *testing.T) {
	payload := bytes.Repeat([]byte("MSG x 1 5\r\nhello\r\n"), 1000)
	for _, tc := range []struct {
		name       string
		compress   bool
		frameLimit int
		noCompFrag bool
	}{
		{"plain", false, 0, false},
		{"deflate", true, 0, false},
		{"browser", false, browserFrameSize, false},
		{"browser deflate", true, browserFrameSize, false},
		{"safari deflate", true, browserFrameSize, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, pc := testConn(nil, 0, tc.compress, 0)
			c.frameLimit, c.noCompFrag = tc.frameLimit, tc.noCompFrag
			n, err := c.WriteBuffers([][]byte{payload[:5000], payload[5000:]})
			if err != nil || n != int64(len(payload)) {
				t.Fatalf("wrote %d, %v", n, err)
			}
			if _, err := c.Write([]byte("+OK\r\n")); err != nil { // small: never compressed
				t.Fatal(err)
			}
			heads, payloads := serverFrames(t, pc.out.Bytes())
			var msg []byte
			for i, h := range heads[:len(heads)-1] {
				first, last := i == 0, i == len(heads)-2
				if (h&0x0F == opBinary) != first || (h&bitFin != 0) != last || (h&bitRSV1 != 0) != (first && tc.compress) {
					t.Fatalf("frame %d header %x", i, h)
				}
				if tc.frameLimit > 0 && !tc.noCompFrag && len(payloads[i]) > tc.frameLimit {
					t.Fatalf("frame %d of %d bytes", i, len(payloads[i]))
				}
				msg = append(msg, payloads[i]...)
			}
			if tc.compress {
				r := flate.NewReader(io.MultiReader(bytes.NewReader(msg), bytes.NewReader(inflateTail)))
				var err error
				if msg, err = io.ReadAll(r); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(msg, payload) {
				t.Fatalf("message of %d bytes, want %d", len(msg), len(payload))
			}
			if h := heads[len(heads)-1]; h != 0x82 || string(payloads[len(payloads)-1]) != "+OK\r\n" {
				t.Fatalf("small message %x %q", h, payloads[len(payloads)-1])
			}
			if err := c.CloseWith(CloseTLSHandshake, strings.Repeat("é", 100)); err != nil {
				t.Fatal(err)
			}
			heads, payloads = serverFrames(t, pc.out.Bytes())
			last := payloads[len(payloads)-1]
			if heads[len(heads)-1] != 0x88 || binary.BigEndian.Uint16(last) != CloseGoingAway || len(last) > maxControlPayload ||
				!strings.HasSuffix(string(last), "...") {
				t.Fatalf("close frame %q", last)
			}
		})
	}
}

func TestAccept(t *testing.T) {
	req := "GET /any/path HTTP/1.1\r\nHost: h\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\nNats-No-Masking: true\r\n" +
		"User-Agent: Mozilla/5.0 Version/17 Safari/605\r\n\r\n"
	pc := &pipeConn{in: bytes.NewReader([]byte(req))}
	c, err := Accept(pc, Options{Compression: true, Headers: [][2]string{{"X-A", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(&pc.out), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" ||
		!strings.HasPrefix(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") ||
		resp.Header.Get("Nats-No-Masking") != "true" || resp.Header.Get("X-A") != "b" {
		t.Fatalf("answer %d %v", resp.StatusCode, resp.Header)
	}
	if !c.compress || c.masked || c.frameLimit != browserFrameSize || !c.noCompFrag {
		t.Fatalf("conn %+v", c)
	}
	// Data sent before the answer is refused; a request over 64 KiB too.
	pc = &pipeConn{in: bytes.NewReader([]byte(strings.Replace(req, "\r\n\r\n", "\r\n\r\nPING\r\n", 1)))}
	var he *HandshakeError
	if _, err := Accept(pc, Options{}); !errors.As(err, &he) || he.Status != 400 {
		t.Fatalf("early data: %v", err)
	}
	huge := strings.Replace(req, "Host: h\r\n", "Host: h\r\nX-Big: "+strings.Repeat("a", 70<<10)+"\r\n", 1)
	pc = &pipeConn{in: bytes.NewReader([]byte(huge))}
	if _, err := Accept(pc, Options{}); !errors.As(err, &he) || he.Status != 400 {
		t.Fatalf("huge request: %v", err)
	}
}

func TestOrigins(t *testing.T) {
	o, err := NewOrigins(true, []string{"https://app.example", "http://app.example:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host, origin string
		secure, ok   bool
	}{
		{"app.example", "", false, true}, // no Origin: not a browser
		{"app.example", "https://app.example", true, true},
		{"app.example:443", "https://APP.example:443", true, true},
		{"app.example:8080", "http://app.example:8080", false, true},
		{"app.example", "http://app.example", false, false},  // same origin, not in the list
		{"app.example", "https://app.example", false, false}, // scheme differs from the request's
		{"other.example", "https://app.example", true, false},
		{"app.example", "::bad", true, false},
	} {
		r := &http.Request{Host: tc.host, Header: http.Header{}}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if err := o.check(r, tc.secure); (err == nil) != tc.ok {
			t.Errorf("host %s origin %q secure %v: %v", tc.host, tc.origin, tc.secure, err)
		}
	}
	for _, bad := range []string{"app.example", "ftp://x", "https://", "http://[::1"} {
		if _, err := NewOrigins(false, []string{bad}); err == nil {
			t.Errorf("allowed origin %q accepted", bad)
		}
	}
	if o, err := NewOrigins(false, nil); o != nil || err != nil {
		t.Fatal("an empty policy is not nil")
	}
}

// FuzzFrames feeds arbitrary client bytes, in two chunks of the reads,
// to a Conn with compression on: Read must end with a stream, an error
// or EOF, never panic or spin.
func FuzzFrames(f *testing.F) {
	f.Add(frame(0x82, []byte("PING\r\n")), uint8(3), true)
	f.Add(append(frame(0x01, []byte("PI")), frame(0x80, []byte("NG\r\n"))...), uint8(1), false)
	f.Add(frame(0xC2, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}), uint8(2), true)
	f.Add(frame(0x88, []byte{0x03, 0xE8, 'o', 'k'}), uint8(0), false)
	f.Add([]byte{0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4}, uint8(5), false)
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8, masked bool) {
		c, _ := testConn(in, int(chunk), true, 1<<20)
		c.masked = masked
		buf := make([]byte, 512)
		total := 0
		for i := 0; ; i++ {
			n, err := c.Read(buf)
			total += n
			if err != nil {
				break
			}
			if n == 0 || i > len(in)+1<<20 {
				t.Fatalf("Read made no progress (%d bytes read so far)", total)
			}
		}
		if total > 1<<20+len(in) {
			t.Fatalf("read %d bytes from %d of input", total, len(in))
		}
	})
}
