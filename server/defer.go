package server

// Deferring work to the end of a publisher's input. A connection's read
// goroutine handles everything one read returned (an input chunk: from one
// message to some hundreds) before it hands its output over (flushPending).
// An internal subscription's handler that gathers messages into batches (a
// replicated stream proposing its next raft entry) can ask to be told when
// that chunk is done, so that the batch takes the chunk's later messages
// instead of leaving with the first: Msg.Defer.

// Flusher is work a handler defers with Msg.Defer.
type Flusher interface {
	Flush()
}

// Defer asks for f.Flush() once the publishing connection has handled
// the rest of the input it read together with m, or before it waits for a
// slow receiver (stallFor); at once for a message from Server.Publish,
// which has no such input. f is called once per chunk however many of its
// messages deferred it (f is compared by identity: pass a pointer). Call
// it only from the handler, during the call.
func (m *Msg) Defer(f Flusher) {
	c := m.from
	if c == nil {
		f.Flush()
		return
	}
	for _, g := range c.deferred {
		if g == f {
			return
		}
	}
	c.deferred = append(c.deferred, f)
}

// runDeferred calls the flushers deferred during this chunk. Called on the
// read goroutine.
func (c *client) runDeferred() {
	for i, f := range c.deferred {
		f.Flush()
		c.deferred[i] = nil
	}
	c.deferred = c.deferred[:0]
}
