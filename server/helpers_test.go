package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// startServer runs a server on a random port of 127.0.0.1 and shuts it
// down when the test ends.
func startServer(t testing.TB, opts Options) *Server {
	t.Helper()
	opts.Host = "127.0.0.1"
	opts.Port = 0
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// connect opens a nats.go connection that is closed when the test ends.
func connect(t testing.TB, s *Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.NoReconnect(), nats.Timeout(5 * time.Second)}, opts...)
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// rawClient is a plain TCP connection for byte-exact protocol checks.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t testing.TB, s *Server) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawClient{t: t, conn: conn, r: bufio.NewReader(conn)}
}

func (c *rawClient) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write %q: %v", s, err)
	}
}

// line reads one CRLF-terminated line, CRLF included.
func (c *rawClient) line() string {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read line: %v (got %q)", err, l)
	}
	return l
}

// expect reads exactly len(want) bytes and compares them.
func (c *rawClient) expect(want string) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c.r, got); err != nil {
		c.t.Fatalf("reading %q: %v (got %q)", want, err, got)
	}
	if string(got) != want {
		c.t.Fatalf("got  %q\nwant %q", got, want)
	}
}

// expectClosed checks that the server closed the connection with nothing
// more to read.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := c.r.ReadByte()
	if err == nil {
		rest, _ := c.r.Peek(c.r.Buffered())
		c.t.Fatalf("expected close, got %q", string(b)+string(rest))
	}
	if err != io.EOF && !strings.Contains(err.Error(), "reset") {
		c.t.Fatalf("expected EOF, got %v", err)
	}
}

// handshake reads INFO, sends CONNECT (with the given JSON) and PING, and
// consumes PONG and the second INFO.
func (c *rawClient) handshake(connectJSON string) {
	c.t.Helper()
	if l := c.line(); !strings.HasPrefix(l, "INFO {") {
		c.t.Fatalf("first line %q is not INFO", l)
	}
	c.send("CONNECT " + connectJSON + "\r\nPING\r\n")
	if strings.Contains(connectJSON, `"verbose":true`) {
		c.expect("+OK\r\n")
	}
	c.expect("PONG\r\n")
	if l := c.line(); !strings.HasPrefix(l, "INFO {") || !strings.Contains(l, `"connect_info":true`) {
		c.t.Fatalf("second INFO missing: %q", l)
	}
}

// resetQueue drops everything queued for c (without allocating).
func resetQueue(c *client) {
	c.out.mu.Lock()
	c.out.dropQueued()
	c.out.mu.Unlock()
}

// queuedString returns everything queued for c, in order.
func queuedString(c *client) string {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	var b strings.Builder
	for _, ch := range c.out.mu.chunks {
		b.Write(ch.b)
	}
	if b.Len() != c.out.mu.size {
		panic("outbound size out of step with its chunks")
	}
	return b.String()
}
