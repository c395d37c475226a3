package server

import (
	"strings"
	"sync"
	"testing"
)

// chunkCounter is a Flusher recording, at each Flush, how many messages
// its handler had seen.
type chunkCounter struct {
	mu      sync.Mutex
	handled int
	flushes []int
}

func (c *chunkCounter) Flush() {
	c.mu.Lock()
	c.flushes = append(c.flushes, c.handled)
	c.mu.Unlock()
}

func (c *chunkCounter) seen() (int, []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handled, append([]int(nil), c.flushes...)
}

// TestMsgDefer: a handler's deferred Flush runs once the publisher's
// whole input chunk is handled, once per chunk however many messages
// deferred it, and never before a message it follows; Server.Publish
// flushes at once.
func TestMsgDefer(t *testing.T) {
	s := startServer(t, Options{})
	cc := &chunkCounter{}
	if _, err := s.Subscribe("defer.>", "", func(m *Msg) {
		cc.mu.Lock()
		cc.handled++
		cc.mu.Unlock()
		m.Defer(cc)
	}); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s)
	c.handshake(connectQuiet)
	// 200 messages and a PING in one write: the server reads them in one
	// or a few chunks, and answers the PING after handling them all.
	const n = 200
	var b strings.Builder
	for range n {
		b.WriteString("PUB defer.x 5\r\nhello\r\n")
	}
	b.WriteString("PING\r\n")
	c.send(b.String())
	c.expect("PONG\r\n")
	handled, flushes := cc.seen()
	if handled != n {
		t.Fatalf("handler saw %d messages, want %d", handled, n)
	}
	if len(flushes) == 0 || len(flushes) > n/10 || flushes[len(flushes)-1] != n {
		t.Fatalf("flushes after %v messages: want a few, the last after all %d", flushes, n)
	}
	for i := 1; i < len(flushes); i++ {
		if flushes[i] <= flushes[i-1] {
			t.Fatalf("flushes after %v messages: one per chunk, each after new messages", flushes)
		}
	}

	// One message alone: flushed right after it.
	c.send("PUB defer.y 2\r\nhi\r\nPING\r\n")
	c.expect("PONG\r\n")
	if handled, flushes = cc.seen(); handled != n+1 || flushes[len(flushes)-1] != n+1 {
		t.Fatalf("after a lone message: handled %d, flushes %v", handled, flushes)
	}

	// Server.Publish has no input chunk: Flush at once, inside the call.
	before := len(flushes)
	s.Publish("defer.z", "", nil, []byte("x"))
	if _, flushes = cc.seen(); len(flushes) != before+1 || flushes[before] != n+2 {
		t.Fatalf("Server.Publish: flushes %v, want one more after %d messages", flushes, n+2)
	}
}
