package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestShutdownFlushes: messages queued for a client when Shutdown starts
// all reach it, in order, before the server closes the socket; and the
// listener is gone before the clients are closed.
func TestShutdownFlushes(t *testing.T) {
	s, err := New(Options{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t}
	c.conn, err = net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	c.r = bufio.NewReader(c.conn)
	c.handshake(connectQuiet)
	c.send("SUB feed 1\r\nPING\r\n")
	c.expect("PONG\r\n")

	// Queue far more than one socket write, without reading, then shut down.
	const n = 5000
	payload := strings.Repeat("p", 200)
	for i := 0; i < n; i++ {
		s.Publish("feed", "", nil, []byte(fmt.Sprintf("%05d%s", i, payload)))
	}
	addr := s.Addr().String()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	// Nothing new is accepted once shutdown has begun.
	waitFor(t, "listener to close", func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		conn.Close()
		return false
	})

	_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("MSG feed 1 %d\r\n%05d%s\r\n", 5+len(payload), i, payload)
		if p, _ := c.r.Peek(6); string(p) == "PING\r\n" { // the keepalive may go out meanwhile
			_, _ = c.r.Discard(6)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c.r, got); err != nil {
			t.Fatalf("message %d of %d lost at shutdown: %v", i, n, err)
		}
		if string(got) != want {
			t.Fatalf("message %d: got %q", i, got[:min(len(got), 40)])
		}
	}
	if b, err := c.r.ReadByte(); err == nil {
		t.Fatalf("unexpected byte %q after the queued messages", b)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
