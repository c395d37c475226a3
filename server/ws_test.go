package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetwal/jetwal/internal/testcert"
	"github.com/jetwal/jetwal/server/auth"
)

// startWSServer runs a server with a plain (no_tls) WebSocket listener.
func startWSServer(t testing.TB, opts Options, ws WebsocketOptions) *Server {
	t.Helper()
	ws.Host, ws.Port, ws.NoTLS = "127.0.0.1", -1, ws.TLSConfig == nil
	opts.Websocket = &ws
	return startServer(t, opts)
}

// connectWS opens a nats.go connection to the WebSocket listener.
func connectWS(t testing.TB, s *Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.NoReconnect(), nats.Timeout(5 * time.Second)}, opts...)
	nc, err := nats.Connect(s.WebsocketURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestWebsocketPubSubRequest(t *testing.T) {
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "compression=off", true: "compression=on"}[compress]
		t.Run(name, func(t *testing.T) {
			s := startWSServer(t, Options{}, WebsocketOptions{Compression: compress})
			ws := connectWS(t, s, nats.Compression(compress))
			tcp := connect(t, s)
			if got := wsCompressed(s); got != compress {
				t.Fatalf("permessage-deflate negotiated: %v, want %v", got, compress)
			}

			// ws subscriber, TCP publisher, and the other way.
			sub, err := ws.SubscribeSync("to.ws")
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Flush(); err != nil {
				t.Fatal(err)
			}
			big := bytes.Repeat([]byte("0123456789abcdef"), 512<<10/16) // 512 KiB: several frames, and compressible
			for _, p := range [][]byte{[]byte("hi"), big} {
				if err := tcp.Publish("to.ws", p); err != nil {
					t.Fatal(err)
				}
				if m := nextMsg(t, sub); !bytes.Equal(m.Data, p) {
					t.Fatalf("ws got %d bytes, want %d", len(m.Data), len(p))
				}
			}
			tsub, err := tcp.SubscribeSync("to.tcp")
			if err != nil {
				t.Fatal(err)
			}
			if err := tcp.Flush(); err != nil {
				t.Fatal(err)
			}
			for _, p := range [][]byte{[]byte("hello"), big} {
				if err := ws.Publish("to.tcp", p); err != nil {
					t.Fatal(err)
				}
				if m := nextMsg(t, tsub); !bytes.Equal(m.Data, p) {
					t.Fatalf("tcp got %d bytes, want %d", len(m.Data), len(p))
				}
			}

			// Request/reply with the responder on ws.
			if _, err := ws.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond(append([]byte("re:"), m.Data...)) }); err != nil {
				t.Fatal(err)
			}
			if err := ws.Flush(); err != nil {
				t.Fatal(err)
			}
			r, err := tcp.Request("svc", []byte("q"), 5*time.Second)
			if err != nil || string(r.Data) != "re:q" {
				t.Fatalf("request = %v, %v", r, err)
			}
			r, err = ws.Request("svc", big, 5*time.Second)
			if err != nil || len(r.Data) != len(big)+3 {
				t.Fatalf("ws request of %d bytes = %v", len(big), err)
			}
		})
	}
}

func TestWebsocketAuth(t *testing.T) {
	a, err := auth.New(auth.Options{Users: []auth.User{
		{Username: "alice", Password: "pw"},
		{Username: "tcponly", Password: "pw", ConnectionTypes: []string{auth.ConnStandard}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := startWSServer(t, Options{Auth: a}, WebsocketOptions{})
	var info map[string]any
	wsRaw(t, s, "").readInfo(&info)
	if info["auth_required"] != true {
		t.Fatalf("ws INFO without auth_required: %v", info)
	}
	// Without credentials, with bad ones, and with a user limited to TCP.
	for i, opts := range [][]nats.Option{nil, {nats.UserInfo("alice", "bad")}, {nats.UserInfo("tcponly", "pw")}} {
		opts = append(opts, nats.NoReconnect(), nats.Timeout(5*time.Second))
		nc, err := nats.Connect(s.WebsocketURL(), opts...)
		if err == nil {
			nc.Close()
			t.Fatal("ws client logged in without valid credentials")
		}
		if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
			t.Fatalf("refusal %d: %v, want an authorization violation", i, err)
		}
	}
	connectWS(t, s, nats.UserInfo("alice", "pw"))
	connect(t, s, nats.UserInfo("tcponly", "pw"))

	// The websocket block's own user replaces the server's for ws clients.
	wsa, err := auth.New(auth.Options{Username: "web", Password: "wpw"})
	if err != nil {
		t.Fatal(err)
	}
	s2 := startWSServer(t, Options{Auth: a}, WebsocketOptions{Auth: wsa})
	if nc, err := nats.Connect(s2.WebsocketURL(), nats.UserInfo("alice", "pw"), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("a TCP user logged in over ws with a websocket authorization override")
	}
	connectWS(t, s2, nats.UserInfo("web", "wpw"))
}

func TestWebsocketAuthTimeout(t *testing.T) {
	a, err := auth.New(auth.Options{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	s := startWSServer(t, Options{Auth: a}, WebsocketOptions{AuthTimeout: 200 * time.Millisecond})
	c := wsRaw(t, s, "")
	c.readInfo(nil)
	c.readDataUntil("-ERR 'Authentication Timeout'\r\n")
	if st, _ := c.readClose(); st != 1008 {
		t.Fatalf("close status %d, want 1008 (policy violation)", st)
	}
}

func TestWebsocketMaxConnectionsShared(t *testing.T) {
	s := startWSServer(t, Options{MaxConnections: 1}, WebsocketOptions{})
	connect(t, s)
	_, err := nats.Connect(s.WebsocketURL(), nats.NoReconnect(), nats.Timeout(5*time.Second))
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "maximum connections") {
		t.Fatalf("second client over ws: %v, want maximum connections exceeded", err)
	}
}

func TestWebsocketMaxPayload(t *testing.T) {
	s := startWSServer(t, Options{MaxPayload: 1024}, WebsocketOptions{})
	c := wsRaw(t, s, "")
	var info map[string]any
	c.readInfo(&info)
	if info["max_payload"] != float64(1024) {
		t.Fatalf("max_payload %v", info["max_payload"])
	}
	c.sendData(opBinaryTest, "CONNECT {\"verbose\":false}\r\nPUB x 2000\r\n")
	c.readDataUntil("-ERR 'Maximum Payload Violation'\r\n")
	if st, _ := c.readClose(); st != 1009 {
		t.Fatalf("close status %d, want 1009", st)
	}
}

func TestWebsocketTLS(t *testing.T) {
	set := testcert.New(t)
	s := startWSServer(t, Options{}, WebsocketOptions{TLSConfig: set.ServerConfig(false)})
	if u := s.WebsocketURL(); !strings.HasPrefix(u, "wss://") {
		t.Fatalf("url %q", u)
	}
	nc := connectWS(t, s, nats.Secure(set.ClientConfig(false)))
	sub, err := nc.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("x", []byte("over wss")); err != nil {
		t.Fatal(err)
	}
	if m := nextMsg(t, sub); string(m.Data) != "over wss" {
		t.Fatalf("got %q", m.Data)
	}
	if !nc.TLSRequired() {
		t.Fatal("INFO over wss does not say tls_required")
	}
	// A plain request on the wss port gets no upgrade.
	conn, err := net.Dial("tcp", s.WebsocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte(upgradeRequest("")))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, _ := io.ReadAll(conn)
	if bytes.Contains(b, []byte("101 Switching")) {
		t.Fatal("a plain-text upgrade succeeded on the wss listener")
	}
}

func TestWebsocketOptionsValidate(t *testing.T) {
	bad := []WebsocketOptions{
		{},                         // neither TLS nor no_tls
		{NoTLS: true, Port: 70000}, // port
		{NoTLS: true, AllowedOrigins: []string{"ftp://x"}},
		{NoTLS: true, Headers: [][2]string{{"Sec-WebSocket-Accept", "x"}}},
		{NoTLS: true, Headers: [][2]string{{"X-A", "b\r\nSet-Cookie: y"}}},
	}
	for i, w := range bad {
		if _, err := New(Options{Websocket: &w}); err == nil {
			t.Errorf("case %d: %+v accepted", i, w)
		}
	}
}

func TestWebsocketHandshakeRefusals(t *testing.T) {
	s := startWSServer(t, Options{}, WebsocketOptions{SameOrigin: true, AllowedOrigins: []string{"http://127.0.0.1"}})
	cases := []struct {
		name, req string
		status    int
	}{
		{"version", strings.Replace(upgradeRequest(""), "Version: 13", "Version: 8", 1), 400},
		{"key", strings.Replace(upgradeRequest(""), "dGhlIHNhbXBsZSBub25jZQ==", "short", 1), 400},
		{"method", strings.Replace(upgradeRequest(""), "GET", "POST", 1), 405},
		{"upgrade", strings.Replace(upgradeRequest(""), "Upgrade: websocket", "Upgrade: h2c", 1), 400},
		{"origin", upgradeRequest("Origin: http://evil.example\r\n"), 403},
		{"mqtt", strings.Replace(upgradeRequest(""), "GET /", "GET /mqtt", 1), 404},
		{"garbage", "NOT HTTP AT ALL\r\n\r\n", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.WebsocketAddr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, _ = conn.Write([]byte(tc.req))
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	// The allowed origin passes (same origin: Host is 127.0.0.1:80 here,
	// so give the request the listener's own address as Host).
	c := wsRawReq(t, s, strings.Replace(upgradeRequest("Origin: http://127.0.0.1\r\n"), "Host: 127.0.0.1", "Host: 127.0.0.1:80", 1))
	c.readInfo(nil)
	if s.NumClients() != 1 {
		waitFor(t, "the client", func() bool { return s.NumClients() == 1 })
	}
}

func TestWebsocketHandshakeTimeout(t *testing.T) {
	s := startWSServer(t, Options{}, WebsocketOptions{HandshakeTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", s.WebsocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("GET / HTTP/1.1\r\n")) // and nothing more
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(conn); err != nil {
		t.Fatalf("the server did not close a stalled handshake: %v", err)
	}
}

// Bad frames get a close frame with a status, and the connection ends.
func TestWebsocketBadFrames(t *testing.T) {
	s := startWSServer(t, Options{MaxPayload: 1024}, WebsocketOptions{})
	cases := []struct {
		name   string
		frame  []byte
		status int
	}{
		{"unmasked", []byte{0x82, 0x04, 'P', 'I', 'N', 'G'}, 1002},
		{"bad opcode", maskedFrame(0x83, []byte("x")), 1002},
		{"rsv2", maskedFrame(0xA2, []byte("x")), 1002},
		{"compressed without deflate", maskedFrame(0xC2, []byte("x")), 1002},
		{"long ping", maskedFrame(0x89, bytes.Repeat([]byte("p"), 126)), 1002},
		{"fragmented ping", maskedFrame(0x09, []byte("p")), 1002},
		{"continuation first", maskedFrame(0x80, []byte("x")), 1002},
		{"1-byte close", maskedFrame(0x88, []byte{3}), 1002},
		{"bad close status", maskedFrame(0x88, []byte{0x03, 0xED}), 1002}, // 1005
		{"64-bit length with top bit", []byte{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}, 1002},
		{"new message inside a fragmented one", append(maskedFrame(0x02, []byte("PI")), maskedFrame(0x82, []byte("NG\r\n"))...), 1002},
		// An 8 GiB frame header: the payload is streamed to the parser,
		// which refuses the PUB past max_payload (the frame needs no bound
		// of its own), so the close is 1009.
		{"huge frame", append([]byte{0x82, 0xFF, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}, []byte("PUB x 999999999\r\n")...), 1009},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := wsRaw(t, s, "")
			c.readInfo(nil)
			_, _ = c.conn.Write(tc.frame)
			st, ok := c.readCloseSkippingData()
			if !ok {
				t.Fatal("no close frame")
			}
			if st != tc.status {
				t.Fatalf("close status %d, want %d", st, tc.status)
			}
			c.expectEOF()
		})
	}
}

// Control frames inside a fragmented message, a ping answered with its
// payload, and a clean close echoed.
func TestWebsocketFragmentsAndControl(t *testing.T) {
	s := startWSServer(t, Options{}, WebsocketOptions{})
	c := wsRaw(t, s, "")
	c.readInfo(nil)
	var b []byte
	b = append(b, maskedFrame(0x01, []byte("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nPI"))...) // text, not final
	b = append(b, maskedFrame(0x89, []byte("hey"))...)                                          // ping in between
	b = append(b, maskedFrame(0x00, []byte("NG\r\nPUB a 3\r\n"))...)
	b = append(b, maskedFrame(0x80, []byte("abc\r\n"))...) // final continuation
	_, _ = c.conn.Write(b)
	var got strings.Builder
	sawPong := false
	for !strings.Contains(got.String(), "MSG a 1 3\r\nabc\r\n") {
		op, p := c.readFrame()
		switch op {
		case 0xA:
			if string(p) != "hey" {
				t.Fatalf("pong payload %q", p)
			}
			sawPong = true
		case 0x2:
			got.Write(p)
		default:
			t.Fatalf("opcode %x (%q); so far %q", op, p, got.String())
		}
	}
	if !sawPong || !strings.Contains(got.String(), "PONG\r\n") {
		t.Fatalf("pong frame %v, data %q", sawPong, got.String())
	}
	_, _ = c.conn.Write(maskedFrame(0x88, []byte{0x03, 0xE8, 'b', 'y', 'e'}))
	st, ok := c.readCloseSkippingData()
	if !ok || st != 1000 {
		t.Fatalf("close echo %d %v, want 1000", st, ok)
	}
	c.expectEOF()
	waitFor(t, "the client to go", func() bool { return s.NumClients() == 0 })
}

func TestWebsocketINFO(t *testing.T) {
	s := startWSServer(t, Options{}, WebsocketOptions{})
	var info map[string]any
	wsRaw(t, s, "").readInfo(&info)
	port := float64(s.WebsocketAddr().(*net.TCPAddr).Port)
	if info["port"] != port || info["host"] != "127.0.0.1" || info["tls_required"] != nil || info["connect_urls"] != nil {
		t.Fatalf("ws INFO %v: want the websocket port %v, no TLS, no connect_urls", info, port)
	}
}

// wsCompressed reports whether a WebSocket client of s negotiated
// compression.
func wsCompressed(s *Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.mu.clients {
		if c.ws != nil && c.ws.Compressed() {
			return true
		}
	}
	return false
}

// ---- a raw WebSocket client ----

const opBinaryTest = 0x82

type wsRawClient struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func upgradeRequest(extra string) string {
	return "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + extra + "\r\n"
}

func wsRaw(t testing.TB, s *Server, extra string) *wsRawClient {
	return wsRawReq(t, s, upgradeRequest(extra))
}

func wsRawReq(t testing.TB, s *Server, req string) *wsRawClient {
	t.Helper()
	conn, err := net.Dial("tcp", s.WebsocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	c := &wsRawClient{t: t, conn: conn, r: bufio.NewReader(conn)}
	_, _ = conn.Write([]byte(req))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-Websocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("upgrade answer %d %v", resp.StatusCode, resp.Header)
	}
	return c
}

func maskedFrame(b0 byte, payload []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
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

func (c *wsRawClient) sendData(b0 byte, s string) { _, _ = c.conn.Write(maskedFrame(b0, []byte(s))) }

// readFrame reads one unmasked server frame.
func (c *wsRawClient) readFrame() (byte, []byte) {
	c.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		c.t.Fatalf("read frame: %v", err)
	}
	if h[1]&0x80 != 0 {
		c.t.Fatal("server frame is masked")
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		_, _ = io.ReadFull(c.r, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, _ = io.ReadFull(c.r, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.r, p); err != nil {
		c.t.Fatalf("read payload: %v", err)
	}
	return h[0] & 0x0F, p
}

// readData reads the next data frame's payload.
func (c *wsRawClient) readData() string {
	c.t.Helper()
	op, p := c.readFrame()
	if op != 0x2 {
		c.t.Fatalf("opcode %x, want binary (payload %q)", op, p)
	}
	return string(p)
}

// readDataUntil reads data frames until their bytes contain want.
func (c *wsRawClient) readDataUntil(want string) {
	c.t.Helper()
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		got.WriteString(c.readData())
	}
}

func (c *wsRawClient) readInfo(into *map[string]any) {
	c.t.Helper()
	p := c.readData()
	js, ok := strings.CutPrefix(p, "INFO ")
	if !ok || !strings.HasSuffix(js, " \r\n") {
		c.t.Fatalf("not an INFO: %q", p)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(js), into); err != nil {
			c.t.Fatal(err)
		}
	}
}

// readClose reads the next frame, which must be a close.
func (c *wsRawClient) readClose() (int, string) {
	c.t.Helper()
	op, p := c.readFrame()
	if op != 0x8 || len(p) < 2 {
		c.t.Fatalf("opcode %x payload %q, want a close with a status", op, p)
	}
	return int(binary.BigEndian.Uint16(p)), string(p[2:])
}

// readCloseSkippingData skips data frames to the close frame.
func (c *wsRawClient) readCloseSkippingData() (int, bool) {
	c.t.Helper()
	for {
		op, p := c.readFrame()
		switch op {
		case 0x2, 0xA:
			continue
		case 0x8:
			if len(p) < 2 {
				return 0, true
			}
			return int(binary.BigEndian.Uint16(p)), true
		default:
			return 0, false
		}
	}
}

func (c *wsRawClient) expectEOF() {
	c.t.Helper()
	b, err := io.ReadAll(c.r)
	if err != nil || len(b) != 0 {
		c.t.Fatalf("after the close: %q, %v; want EOF", b, err)
	}
}

// A WebSocket client is an ordinary client: its account isolates it and
// its permissions apply.
func TestWebsocketAccountsAndPermissions(t *testing.T) {
	a, err := auth.New(auth.Options{Users: []auth.User{
		{Username: "a", Password: "pw", Account: "A"},
		{Username: "g", Password: "pw", Permissions: &auth.Permissions{Publish: &auth.SubjectPermission{Allow: []string{"ok.>"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := startWSServer(t, Options{Auth: a, Accounts: []string{"A"}}, WebsocketOptions{})
	inA := connectWS(t, s, nats.UserInfo("a", "pw"))
	sub, err := inA.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := inA.Flush(); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	g := connectWS(t, s, nats.UserInfo("g", "pw"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	if err := g.Publish("denied", []byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), `Permissions Violation for Publish to "denied"`) {
			t.Fatalf("error %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no permissions violation over ws")
	}
	if err := g.Publish("ok.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	// The account A client sees nothing of $G; its own publish arrives.
	if err := inA.Publish("mine", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if m := nextMsg(t, sub); m.Subject != "mine" {
		t.Fatalf("account A received %q from another account", m.Subject)
	}
}

// Certificates over wss: verify requires one, and an Authenticator that
// maps certificates logs the client in as the user its certificate names.
func TestWebsocketTLSMapping(t *testing.T) {
	set := testcert.New(t)
	a, err := auth.New(auth.Options{MapCerts: true, Users: []auth.User{{Username: set.ClientEmail}}})
	if err != nil {
		t.Fatal(err)
	}
	s := startWSServer(t, Options{}, WebsocketOptions{TLSConfig: set.ServerConfig(true), Auth: a})
	if _, err := nats.Connect(s.WebsocketURL(), nats.Secure(set.ClientConfig(false)), nats.NoReconnect(), nats.Timeout(5*time.Second)); err == nil {
		t.Fatal("connected over wss without the required client certificate")
	}
	nc := connectWS(t, s, nats.Secure(set.ClientConfig(true)))
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var user string
	for _, ci := range s.Connections() {
		user = ci.AuthorizedUser
	}
	if user != set.ClientEmail {
		t.Fatalf("logged in as %q, want %q", user, set.ClientEmail)
	}
}

// SetAuthenticator reaches WebSocket clients that have no authenticator
// of their own; SetWebsocketAuthenticator gives them one, and nil takes it
// back (a configuration reload).
func TestWebsocketSetAuthenticator(t *testing.T) {
	s := startWSServer(t, Options{}, WebsocketOptions{})
	connectWS(t, s)
	tok, err := auth.New(auth.Options{Token: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetAuthenticator(tok)
	if nc, err := nats.Connect(s.WebsocketURL(), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("ws client without the token after SetAuthenticator")
	}
	connectWS(t, s, nats.Token("t1"))
	wsTok, err := auth.New(auth.Options{Token: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetWebsocketAuthenticator(wsTok)
	if nc, err := nats.Connect(s.WebsocketURL(), nats.Token("t1"), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("ws client with the TCP token after SetWebsocketAuthenticator")
	}
	connectWS(t, s, nats.Token("w1"))
	connect(t, s, nats.Token("t1"))
	s.SetWebsocketAuthenticator(nil)
	connectWS(t, s, nats.Token("t1"))
}

// The websocket ping_interval keeps WebSocket clients alive on its own
// clock: a client that answers no PING is closed as stale, with 1001.
func TestWebsocketPingInterval(t *testing.T) {
	s := startWSServer(t, Options{PingInterval: time.Hour}, WebsocketOptions{PingInterval: 50 * time.Millisecond})
	c := wsRaw(t, s, "")
	c.readInfo(nil)
	c.sendData(opBinaryTest, "CONNECT {\"verbose\":false}\r\n")
	var got strings.Builder
	for !strings.Contains(got.String(), "Stale Connection") {
		op, p := c.readFrame()
		if op != 0x2 {
			t.Fatalf("opcode %x (%q) before the stale error; data so far %q", op, p, got.String())
		}
		got.Write(p)
	}
	if !strings.Contains(got.String(), "PING\r\n") {
		t.Fatalf("no PING before the stale error: %q", got.String())
	}
	if st, ok := c.readCloseSkippingData(); !ok || st != 1001 {
		t.Fatalf("close %d %v, want 1001", st, ok)
	}
}
