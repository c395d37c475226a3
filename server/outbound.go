package server

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// Stall limits for producers feeding a connection that falls behind. Once a
// client's queue (bytes queued and being written) passes the stall mark, 3/4
// of MaxPending as in nats-server but at most stallMarkMax, each producer
// waits up to stallMin (stallMax when the queue is near MaxPending) for the
// writer's next take, at most stallTotal per chunk of input. This slows a
// fast publisher down to a subscriber that is only a little slower, instead
// of cutting the subscriber off or queueing up to MaxPending for it; a
// subscriber that stays behind still hits MaxPending and is disconnected.
// The cap keeps memory down: with the mark at 48 MiB, a publisher of 128 B
// messages ahead of its subscriber took jetwal to a peak RSS of about
// 100 MiB in the comparison benchmark; with 8 MiB, about 35 MiB, at the same
// throughput.
const (
	stallMin   = 2 * time.Millisecond
	stallMax   = 5 * time.Millisecond
	stallTotal = 10 * time.Millisecond
	// stallMarkMax caps the stall mark.
	stallMarkMax = 8 << 20
	// writeMax bounds one vectored write of the writer (takeFront).
	writeMax = 1 << 20
)

// outbound is a connection's queue of bytes to send: a list of chunks.
// Producers (any goroutine delivering to this client) append to the last
// chunk or add whole chunks under mu; the writer goroutine takes chunks from
// the front, up to writeMax bytes, and writes them with one writev without
// holding the lock, so a slow socket never blocks a producer and queued
// bytes are never copied again, however far the writer falls behind.
type outbound struct {
	// kick wakes the writer; capacity 1, sends never block.
	kick chan struct{}

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		chunks   []*chunk      // queued in order, not yet taken by the writer
		size     int           // bytes in chunks
		inflight int           // bytes the writer is writing now
		closing  bool          // no more producers; writer flushes and closes
		stall    chan struct{} // closed by the writer when the queue drains below the stall mark
		// wsStatus and wsReason are the close frame a WebSocket client
		// gets after the last queued bytes (set with closing).
		wsStatus int
		wsReason string
	}
}

// appendable returns a chunk at the end of the queue with room for need
// more bytes, adding one if the last is full. out.mu held.
func (o *outbound) appendable(need int) *chunk {
	if n := len(o.mu.chunks); n > 0 {
		if last := o.mu.chunks[n-1]; cap(last.b)-len(last.b) >= need {
			return last
		}
	}
	ch := getChunk(need)
	o.mu.chunks = append(o.mu.chunks, ch)
	return ch
}

// appendQueued appends p to the queue. out.mu held.
func (o *outbound) appendQueued(p string) {
	ch := o.appendable(len(p))
	ch.b = append(ch.b, p...)
	o.mu.size += len(p)
}

// dropQueued empties the queue. out.mu held.
func (o *outbound) dropQueued() {
	for i, ch := range o.mu.chunks {
		putChunk(ch)
		o.mu.chunks[i] = nil
	}
	o.mu.chunks = o.mu.chunks[:0]
	o.mu.size = 0
}

// takeFront moves chunks from the front of the queue onto taken, up to
// writeMax bytes (at least one chunk), and counts them as in flight. A
// bounded write keeps the queue's length current for the stall and
// slow-consumer checks, and a stalled producer waits for one such write
// rather than for the whole backlog. The last chunk, which producers
// append to, is taken only with all the others. out.mu held.
func (o *outbound) takeFront(taken []*chunk) []*chunk {
	n, size := 0, 0
	for n < len(o.mu.chunks) && (n == 0 || size+len(o.mu.chunks[n].b) <= writeMax) {
		size += len(o.mu.chunks[n].b)
		n++
	}
	taken = append(taken, o.mu.chunks[:n]...)
	rest := copy(o.mu.chunks, o.mu.chunks[n:])
	clear(o.mu.chunks[rest:])
	o.mu.chunks = o.mu.chunks[:rest]
	o.mu.size -= size
	o.mu.inflight = size
	return taken
}

// queued returns the bytes queued or being written. out.mu held.
func (o *outbound) queued() int64 { return int64(o.mu.size + o.mu.inflight) }

// kickWriter wakes the writer goroutine.
func (c *client) kickWriter() {
	select {
	case c.out.kick <- struct{}{}:
	default:
	}
}

// queueProto appends a protocol line for this client (PONG, +OK, INFO, ...)
// and marks it for flushing at the end of the current input chunk.
func (c *client) queueProto(p string) {
	c.out.mu.Lock()
	if !c.out.mu.closing {
		c.out.appendQueued(p)
	}
	c.out.mu.Unlock()
	if c.trace {
		c.traceOut(p)
	}
}

// sendProto queues a protocol line and wakes the writer at once (for use
// outside the read loop: timers, shutdown).
func (c *client) sendProto(p string) {
	c.queueProto(p)
	c.kickWriter()
}

// msgSize bounds the framed size of a MSG/HMSG (see appendMsg): the
// fields, the op name, four blanks, two sizes of at most 19 digits and two
// CRLFs.
func msgSize(sid, subj, reply, hdr, data []byte) int {
	return len(sid) + len(subj) + len(reply) + len(hdr) + len(data) + 5 + 4 + 2*19 + 4
}

// appendMsg frames a MSG or HMSG for subscription id sid onto b. hdr is
// the header block (nil for none); it is left out when the receiver cannot
// take headers (withHeaders false), as nats-server does.
//
// Line formats:
//
//	MSG <subject> <sid> [reply] <#bytes>\r\n<data>\r\n
//	HMSG <subject> <sid> [reply] <#hdr bytes> <#total bytes>\r\n<hdr><data>\r\n
func appendMsg(b []byte, withHeaders bool, sid, subj, reply, hdr, data []byte) []byte {
	if !withHeaders {
		hdr = nil
	}
	if len(hdr) > 0 {
		b = append(b, "HMSG "...)
	} else {
		b = append(b, "MSG "...)
	}
	b = append(b, subj...)
	b = append(b, ' ')
	b = append(b, sid...)
	b = append(b, ' ')
	if len(reply) > 0 {
		b = append(b, reply...)
		b = append(b, ' ')
	}
	if len(hdr) > 0 {
		b = strconv.AppendInt(b, int64(len(hdr)), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(len(hdr)+len(data)), 10)
	b = append(b, '\r', '\n')
	b = append(b, hdr...)
	b = append(b, data...)
	return append(b, '\r', '\n')
}

// queueMsg appends a message straight to this client's queue (used by
// Server.Publish and when a reader has no stage for the client). It reports
// the queue length after appending, and false if the client is closing.
func (c *client) queueMsg(sid, subj, reply, hdr, data []byte) (queued int64, ok bool) {
	withHeaders := c.headers.Load()
	need := msgSize(sid, subj, reply, hdr, data)
	c.out.mu.Lock()
	if c.out.mu.closing {
		c.out.mu.Unlock()
		return 0, false
	}
	ch := c.out.appendable(need)
	n := len(ch.b)
	ch.b = appendMsg(ch.b, withHeaders, sid, subj, reply, hdr, data)
	c.out.mu.size += len(ch.b) - n
	queued = c.out.queued()
	c.out.mu.Unlock()
	if c.trace {
		c.traceMsgOut(sid, subj, reply, hdr, data)
	}
	return queued, true
}

// stallChan returns a channel closed when the queue drains, creating it.
func (c *client) stallChan() chan struct{} {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	if c.out.mu.closing {
		return nil
	}
	if c.out.mu.stall == nil {
		c.out.mu.stall = make(chan struct{})
	}
	return c.out.mu.stall
}

// writeLoop sends queued bytes until the client closes. Runs in its own
// goroutine. Each round takes every queued chunk, writes them with one
// vectored write, and returns them to the pool.
func (c *client) writeLoop() {
	defer c.srv.wg.Done()
	var taken []*chunk
	var iov, vec net.Buffers
	stallMark := c.srv.stallMark
	for range c.out.kick {
		for {
			c.out.mu.Lock()
			closing := c.out.mu.closing
			if len(c.out.mu.chunks) == 0 {
				c.out.mu.inflight = 0
				c.releaseStall()
				c.out.mu.Unlock()
				if closing {
					c.sendWSClose()
					c.finish()
					return
				}
				break
			}
			taken = c.out.takeFront(taken[:0])
			if c.out.mu.stall != nil && c.out.queued() < stallMark {
				c.releaseStall()
			}
			c.out.mu.Unlock()

			iov = iov[:0]
			for _, ch := range taken {
				iov = append(iov, ch.b)
			}
			if !closing {
				_ = c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteDeadline))
			}
			var err error
			if c.ws != nil {
				_, err = c.ws.WriteBuffers(iov) // one binary message
			} else {
				vec = iov // WriteTo consumes vec; iov keeps the backing array
				_, err = vec.WriteTo(c.conn)
			}
			clear(iov)
			for i, ch := range taken {
				putChunk(ch)
				taken[i] = nil
			}
			taken = taken[:0]
			if err != nil {
				c.writeFailed(err)
				c.finish()
				return
			}
		}
	}
}

// releaseStall wakes producers waiting for this client to drain. out.mu held.
func (c *client) releaseStall() {
	if c.out.mu.stall != nil {
		close(c.out.mu.stall)
		c.out.mu.stall = nil
	}
}

// writeFailed handles a failed socket write: a deadline means the client is
// a slow consumer; anything else means it went away.
func (c *client) writeFailed(err error) {
	c.out.mu.Lock()
	c.out.dropQueued()
	c.out.mu.inflight = 0
	c.releaseStall()
	c.out.mu.Unlock()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if !c.closed.Load() {
			c.srv.slowConsumers.Add(1)
			c.srv.logger.Warn("slow consumer: write deadline exceeded", "cid", c.id, "deadline", c.srv.opts.WriteDeadline)
		}
		c.close(closeSlowConsumerWrite, "")
		return
	}
	c.close(closeWriteError, "")
}

// sendWSClose sends a WebSocket client its close frame, with the status
// of why it was closed, once everything queued before is written; then,
// once the read goroutine is gone, it lets the client close first
// (websocket.Conn.Linger), for at most wsLinger.
func (c *client) sendWSClose() {
	if c.ws == nil {
		return
	}
	c.out.mu.Lock()
	status, reason := c.out.mu.wsStatus, c.out.mu.wsReason
	c.out.mu.Unlock()
	_ = c.ws.CloseWith(status, reason) // fails when the read side already sent one
	t := time.NewTimer(wsLinger)
	defer t.Stop()
	select {
	case <-c.readDone:
		c.ws.Linger(wsLinger)
	case <-t.C:
	}
}

// finish closes the socket once the writer is done. The read goroutine then
// fails its next read and exits.
func (c *client) finish() {
	_ = c.conn.Close()
}
