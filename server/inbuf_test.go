package server

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
)

// payloadCheck records each PUB's payload length and first byte.
type payloadCheck struct {
	sizes []int
	first []byte
}

func (h *payloadCheck) handle(c *command) bool {
	h.sizes = append(h.sizes, len(c.payload))
	if len(c.payload) > 0 {
		h.first = append(h.first, c.payload[0])
	}
	return true
}

// check fails t unless h saw msgs payloads of size bytes, message i
// starting with 'a'+i%26.
func (h *payloadCheck) check(t *testing.T, msgs, size int) {
	t.Helper()
	if len(h.sizes) != msgs {
		t.Fatalf("parsed %d messages, want %d", len(h.sizes), msgs)
	}
	for i, n := range h.sizes {
		if n != size || h.first[i] != byte('a'+i%26) {
			t.Fatalf("message %d: %d bytes starting %q", i, n, h.first[i])
		}
	}
}

// feedInbuf reads stream into in as a socket would, at most maxRead bytes
// a read, parsing after each read. It returns the read buffers larger than
// maxReadBuf it saw, and how often a partial operation stood behind parsed
// ones when a read began (so space had to move it to the front).
func feedInbuf(t *testing.T, in *inbuf, cmd *command, h cmdHandler, stream []byte, maxRead int) (big map[uintptr]bool, moves int) {
	t.Helper()
	big = map[uintptr]bool{}
	for rest := stream; len(rest) > 0; {
		if len(in.buf) > in.pos && in.pos > 0 {
			moves++
		}
		space := in.space()
		if cap(in.buf) > maxReadBuf {
			big[uintptr(unsafe.Pointer(unsafe.SliceData(in.buf)))] = true
		}
		n := copy(space[:min(len(space), maxRead)], rest)
		rest = rest[n:]
		in.commit(n, len(space))
		if perr := in.parse(testLimits, cmd, h); perr != errNone {
			t.Fatal(perr.text())
		}
	}
	return big, moves
}

// TestInbufLargeMessages: a stream of 256 KiB messages, read the way a
// socket delivers them (at most 100,000 bytes a read), keeps one grown
// buffer instead of allocating one per message, never moves a partial
// message to the front, parses every message whole, and gives the large
// buffer back once small messages follow.
func TestInbufLargeMessages(t *testing.T) {
	const size, msgs, maxRead = 256 << 10, 40, 100_000
	var stream []byte
	for i := range msgs {
		stream = fmt.Appendf(stream, "PUB big %d\r\n", size)
		stream = append(stream, bytes.Repeat([]byte{byte('a' + i%26)}, size)...)
		stream = append(stream, "\r\n"...)
	}
	var in inbuf
	var cmd command
	var h payloadCheck
	arrays, moves := feedInbuf(t, &in, &cmd, &h, stream, maxRead)
	h.check(t, msgs, size)
	if len(arrays) > 2 {
		t.Fatalf("%d large read buffers for %d messages, want at most 2", len(arrays), msgs)
	}
	if moves > msgs/4 {
		t.Fatalf("a partial message was moved to the buffer's front %d times for %d messages", moves, msgs)
	}
	// Small messages after: the large buffer goes within shrinkAfter drains.
	small := []byte("PUB s 2\r\nhi\r\n")
	for range shrinkAfter + 1 {
		space := in.space()
		n := copy(space, small)
		in.commit(n, len(space))
		if perr := in.parse(testLimits, &cmd, &h); perr != errNone {
			t.Fatal(perr.text())
		}
	}
	in.space()
	if cap(in.buf) > maxReadBuf {
		t.Fatalf("read buffer still %d bytes after %d small messages", cap(in.buf), shrinkAfter+1)
	}
}

// TestInbufLargeMessagesAnyReadSize: a stream of 256 KiB messages whose
// reply subjects grow by a digit now and then keeps one grown buffer
// whatever the reads deliver, from 1 KiB pieces to many messages at once.
// (Messages read whole in one read used to count as drains, so the buffer
// was dropped and regrown every 16 messages; a buffer that lacked a few
// bytes of a message was doubled; and each longer reply regrew it.)
func TestInbufLargeMessagesAnyReadSize(t *testing.T) {
	const size, msgs = 256 << 10, 200
	var stream []byte
	for i := range msgs {
		stream = fmt.Appendf(stream, "PUB big _INBOX.abcdefgh.%d %d\r\n", i, size)
		stream = append(stream, bytes.Repeat([]byte{byte('a' + i%26)}, size)...)
		stream = append(stream, "\r\n"...)
	}
	for _, maxRead := range []int{1 << 10, 32 << 10, 100_000, 1 << 20} {
		var in inbuf
		var cmd command
		var h payloadCheck
		big, _ := feedInbuf(t, &in, &cmd, &h, stream, maxRead)
		h.check(t, msgs, size)
		if len(big) != 1 {
			t.Fatalf("reads of %d: %d large buffers allocated, want 1", maxRead, len(big))
		}
	}
}
