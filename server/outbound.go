package server

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"time"
)

// Stall limits for producers feeding a connection that falls behind, the
// same numbers nats-server uses: once a client's queue passes 3/4 of
// MaxPending, each producer waits up to stallMin (stallMax when the queue is
// full) for it to drain, at most stallTotal per chunk of input. This slows a
// fast publisher down to a subscriber that is only a little slower, instead
// of cutting the subscriber off; a subscriber that stays behind still hits
// MaxPending and is disconnected.
const (
	stallMin   = 2 * time.Millisecond
	stallMax   = 5 * time.Millisecond
	stallTotal = 10 * time.Millisecond

	// spareKeep is the largest write buffer the writer keeps for reuse.
	spareKeep = 4 << 20
)

// outbound is a connection's queue of bytes to send. Producers (any
// goroutine delivering to this client) append under mu; the writer goroutine
// swaps the queue for an empty spare buffer and writes it without holding
// the lock, so a slow socket never blocks a producer.
type outbound struct {
	// kick wakes the writer; capacity 1, sends never block.
	kick chan struct{}

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		buf      []byte        // queued, not yet taken by the writer
		inflight int           // bytes the writer is writing now
		closing  bool          // no more producers; writer flushes and closes
		stall    chan struct{} // closed by the writer when the queue drains below the stall mark
	}
}

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
		c.out.mu.buf = append(c.out.mu.buf, p...)
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
	c.out.mu.Lock()
	if c.out.mu.closing {
		c.out.mu.Unlock()
		return 0, false
	}
	c.out.mu.buf = appendMsg(c.out.mu.buf, withHeaders, sid, subj, reply, hdr, data)
	queued = int64(len(c.out.mu.buf) + c.out.mu.inflight)
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
// goroutine.
func (c *client) writeLoop() {
	defer c.srv.wg.Done()
	var spare []byte
	stallMark := c.srv.opts.MaxPending / 4 * 3
	for range c.out.kick {
		for {
			c.out.mu.Lock()
			b := c.out.mu.buf
			closing := c.out.mu.closing
			if len(b) == 0 {
				c.out.mu.inflight = 0
				c.releaseStall()
				c.out.mu.Unlock()
				if closing {
					c.finish()
					return
				}
				break
			}
			c.out.mu.buf = spare[:0]
			c.out.mu.inflight = len(b)
			if c.out.mu.stall != nil && int64(len(b)) < stallMark {
				c.releaseStall()
			}
			c.out.mu.Unlock()

			if !closing {
				_ = c.conn.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteDeadline))
			}
			_, err := c.conn.Write(b)
			if err != nil {
				c.writeFailed(err)
				c.finish()
				return
			}
			if cap(b) > spareKeep {
				b = nil
			}
			spare = b[:0]
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
	c.out.mu.buf = nil
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

// finish closes the socket once the writer is done. The read goroutine then
// fails its next read and exits.
func (c *client) finish() {
	_ = c.conn.Close()
}
