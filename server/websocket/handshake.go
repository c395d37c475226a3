package websocket

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// Options shape the handshake and the connection that follows it.
type Options struct {
	// Compression accepts permessage-deflate when the client offers it
	// (websocket { compression: true }).
	Compression bool
	// Origins is the origin policy (NewOrigins); nil accepts any origin.
	Origins *Origins
	// Secure says the connection is TLS: same_origin compares the origin
	// with https://Host instead of http://Host.
	Secure bool
	// Headers are added to the 101 answer (websocket { headers }); see
	// CheckHeader.
	Headers [][2]string
	// MaxMessage bounds one compressed message, compressed and inflated
	// (a zip bomb is cut off there); 0 = 64 MiB.
	MaxMessage int64
}

// DefaultMaxMessage is the bound on a compressed message when
// Options.MaxMessage is 0: nats-server's largest (8 × max_payload, at most
// 64 MiB).
const DefaultMaxMessage = 64 << 20

// maxRequest bounds the upgrade request (request line and headers).
const maxRequest = 64 << 10

// guid is the key suffix of RFC 6455 §1.3.
const guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// HandshakeError is a refused upgrade. Status is the HTTP status that was
// answered, 0 when nothing was (the connection failed or timed out).
type HandshakeError struct {
	Status int
	Reason string
}

func (e *HandshakeError) Error() string {
	if e.Status == 0 {
		return "websocket handshake: " + e.Reason
	}
	return fmt.Sprintf("websocket handshake: %d %s: %s", e.Status, http.StatusText(e.Status), e.Reason)
}

// limitReader reads the upgrade request from the socket at most maxRequest
// bytes at a time; lift removes the bound once the handshake is over.
type limitReader struct {
	r io.Reader
	n int64 // < 0 = no bound
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

var errTooLarge = errors.New("upgrade request larger than 64 KiB")

// Accept reads the HTTP/1.1 upgrade request from nc (a TCP connection, or
// a TLS one whose handshake is done) and answers it: 101 Switching
// Protocols and a Conn that speaks frames, or an HTTP error (405, 400,
// 403, 404) and a *HandshakeError, after which the caller closes nc. The
// caller bounds the whole exchange with a deadline on nc.
func Accept(nc net.Conn, o Options) (*Conn, error) {
	lr := &limitReader{r: nc, n: maxRequest}
	br := bufio.NewReaderSize(lr, 4096)
	req, err := http.ReadRequest(br)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
			return nil, &HandshakeError{Reason: err.Error()}
		}
		return nil, refuse(nc, http.StatusBadRequest, "malformed request: "+err.Error())
	}
	lr.n = -1
	path := ""
	if req.URL != nil {
		path = req.URL.EscapedPath()
	}
	// RFC 6455 §4.2.1, in its order, then the origin.
	switch {
	case strings.HasSuffix(path, "/mqtt"):
		return nil, refuse(nc, http.StatusNotFound, "mqtt websocket endpoint not enabled")
	case strings.HasSuffix(path, "/leafnode"):
		return nil, refuse(nc, http.StatusNotFound, "leafnode websocket endpoint not enabled")
	case req.Method != http.MethodGet:
		return nil, refuse(nc, http.StatusMethodNotAllowed, "request method must be GET")
	case req.Host == "":
		return nil, refuse(nc, http.StatusBadRequest, "'Host' missing in request")
	case !headerHas(req.Header, "Upgrade", "websocket"):
		return nil, refuse(nc, http.StatusBadRequest, "invalid value for header 'Upgrade'")
	case !headerHas(req.Header, "Connection", "Upgrade"):
		return nil, refuse(nc, http.StatusBadRequest, "invalid value for header 'Connection'")
	}
	key := req.Header.Get("Sec-Websocket-Key")
	if key == "" {
		return nil, refuse(nc, http.StatusBadRequest, "key missing")
	}
	if raw, err := base64.StdEncoding.DecodeString(key); err != nil || len(raw) != 16 {
		return nil, refuse(nc, http.StatusBadRequest, "invalid websocket key")
	}
	if !headerHas(req.Header, "Sec-Websocket-Version", "13") {
		return nil, refuse(nc, http.StatusBadRequest, "invalid version")
	}
	if err := o.Origins.check(req, o.Secure); err != nil {
		return nil, refuse(nc, http.StatusForbidden, "origin not allowed: "+err.Error())
	}
	if br.Buffered() > 0 {
		return nil, refuse(nc, http.StatusBadRequest, "client sent data before handshake is complete")
	}
	compress := o.Compression && offersDeflate(req.Header)
	noMasking := req.Header.Get("Nats-No-Masking") == "true"

	b := make([]byte, 0, 256)
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	b = append(b, AcceptKey(key)...)
	b = append(b, "\r\n"...)
	if compress {
		b = append(b, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"...)
	}
	if noMasking {
		b = append(b, "Nats-No-Masking: true\r\n"...)
	}
	for _, h := range o.Headers {
		b = append(b, h[0]...)
		b = append(b, ": "...)
		b = append(b, h[1]...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	if _, err := nc.Write(b); err != nil {
		return nil, &HandshakeError{Reason: err.Error()}
	}
	c := newConn(nc, br, o)
	c.masked = !noMasking
	c.compress = compress
	if ua := req.Header.Get("User-Agent"); strings.HasPrefix(ua, "Mozilla/") {
		c.frameLimit = browserFrameSize
		// Safari takes no fragmented compressed messages (nats-server's
		// test: "Version/" and "Safari/", which Chrome lacks).
		c.noCompFrag = compress && strings.Contains(ua, "Version/") && strings.Contains(ua, "Safari/")
	}
	return c, nil
}

// AcceptKey is Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455
// §4.2.2): base64(SHA-1(key + GUID)).
func AcceptKey(key string) string {
	h := sha1.Sum([]byte(key + guid))
	return base64.StdEncoding.EncodeToString(h[:])
}

// refuse answers an HTTP error and returns it as a HandshakeError.
func refuse(nc net.Conn, status int, reason string) error {
	text := http.StatusText(status) + "\n"
	resp := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Sec-Websocket-Version: 13\r\n" +
		"X-Content-Type-Options: nosniff\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(text)) + "\r\n\r\n" + text
	_, _ = nc.Write([]byte(resp)) // the connection is closed next either way
	return &HandshakeError{Status: status, Reason: reason}
}

// headerHas reports whether a comma-separated header has token value.
func headerHas(h http.Header, name, value string) bool {
	for _, v := range h[http.CanonicalHeaderKey(name)] {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), value) {
				return true
			}
		}
	}
	return false
}

// offersDeflate reports a permessage-deflate offer. Its parameters are
// not needed: the answer always asks for no context takeover both ways,
// so every message is deflated on its own (nats-server's answer).
func offersDeflate(h http.Header) bool {
	for _, v := range h["Sec-Websocket-Extensions"] {
		for _, ext := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(ext, ";")
			if strings.EqualFold(strings.TrimSpace(name), "permessage-deflate") {
				return true
			}
		}
	}
	return false
}

// CheckHeader refuses a response header the upgrade answer sets itself or
// one that would break the answer (nats-server refuses the same names).
func CheckHeader(name, value string) error {
	k := strings.ToLower(name)
	switch {
	case k == "" || strings.ContainsAny(name, " \t\r\n:"):
		return fmt.Errorf("header name %q is not a token", name)
	case strings.ContainsAny(value, "\r\n"):
		return fmt.Errorf("header %q: the value contains a line break", name)
	case k == "host" || k == "content-length" || k == "connection" || k == "upgrade" || k == "nats-no-masking":
		return fmt.Errorf("header %q is not allowed", name)
	case strings.HasPrefix(k, "sec-websocket-"):
		return fmt.Errorf("header %q: the Sec-WebSocket- prefix is not allowed", name)
	}
	return nil
}
