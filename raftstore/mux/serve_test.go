package mux

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// The tests stand in for the server's route listener (which checks TLS
// and credentials before it dispatches): a listener whose connections
// start with "RAFT <group>\r\n", and the dialer that writes that line.

// plainDial is a DialFunc for tests: TCP and the group's line.
func plainDial(address, group string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", address, timeout)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte("RAFT " + group + "\r\n")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// serveTest accepts on ln until it is closed and dispatches each
// connection by its first line; connections without one are closed.
func serveTest(m *Mux, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReaderSize(c, 512)
			line, err := br.ReadSlice('\n')
			group, ok := strings.CutPrefix(strings.TrimRight(string(line), "\r\n"), "RAFT ")
			if err != nil || !ok {
				c.Close()
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			m.Dispatch(&readAhead{Conn: c, r: br}, group)
		}()
	}
}

// listenMux starts a Mux on a loopback port with the test listener; both
// close at the test's end.
func listenMux(t *testing.T) (net.Listener, *Mux) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := New(ln.Addr(), plainDial, nil)
	go serveTest(m, ln)
	t.Cleanup(func() { m.Close(); ln.Close() })
	return ln, m
}

type readAhead struct {
	net.Conn
	r *bufio.Reader
}

func (c *readAhead) Read(p []byte) (int, error) { return c.r.Read(p) }
