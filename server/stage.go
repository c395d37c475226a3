package server

// Outbound staging. A read goroutine does not lock a receiver's queue for
// every message: it frames messages into a private per-receiver stage (a
// chunk, chunk.go) and hands it over once per input chunk, or when the next
// message would not fit. A full stage joins the receiver's queue as it is,
// without a copy; only a small stage is copied into the queue's last chunk,
// so that trickles of small messages do not leave a long list of mostly
// empty chunks.
//
// Order: everything one read goroutine sends to one receiver during a chunk
// goes through that receiver's stage, its own protocol replies (PONG, +OK,
// -ERR) included, so a PONG never overtakes the messages before it. A
// receiver that finds no free stage slot is served directly under its lock
// for the rest of the chunk.

const (
	maxStages = 8       // receivers staged per chunk; more are served directly
	copyBelow = 4 << 10 // stages smaller than this are copied into the queue's last chunk
)

// stage is one receiver's pending bytes from this read goroutine.
type stage struct {
	dst *client
	ch  *chunk // nil until something is staged
}

// stageFor returns the stage for dst, opening one if a slot is free, or nil.
func (c *client) stageFor(dst *client) *stage {
	if i := c.lastStage; i < len(c.stages) && c.stages[i].dst == dst {
		return &c.stages[i]
	}
	for i := range c.stages {
		if c.stages[i].dst == dst {
			c.lastStage = i
			return &c.stages[i]
		}
	}
	n := len(c.stages)
	if n == maxStages {
		return nil
	}
	if n < cap(c.stages) {
		c.stages = c.stages[:n+1] // reuse the old slot
	} else {
		c.stages = append(c.stages, stage{})
	}
	st := &c.stages[n]
	st.dst = dst
	c.lastStage = n
	return st
}

// room makes sure st has a chunk with space for need more bytes, handing
// the current one over first if it is too full.
func (c *client) room(st *stage, need int) {
	if st.ch != nil && cap(st.ch.b)-len(st.ch.b) < need {
		if len(st.ch.b) > 0 {
			c.checkQueued(st.dst, c.handOver(st))
		} else {
			putChunk(st.ch) // empty but too small for this message
			st.ch = nil
		}
	}
	if st.ch == nil {
		st.ch = getChunk(need)
	}
}

// handOver moves a stage's bytes into its receiver's queue and wakes the
// receiver's writer. It returns the receiver's queue length afterwards (0
// when the receiver is closing).
func (c *client) handOver(st *stage) int64 {
	if st.ch == nil || len(st.ch.b) == 0 {
		return 0
	}
	dst := st.dst
	o := &dst.out
	n := len(st.ch.b)
	o.mu.Lock()
	if o.mu.closing {
		o.mu.Unlock()
		st.ch.b = st.ch.b[:0]
		return 0
	}
	copied := false
	if n < copyBelow {
		if k := len(o.mu.chunks); k > 0 {
			if last := o.mu.chunks[k-1]; cap(last.b)-len(last.b) >= n {
				last.b = append(last.b, st.ch.b...)
				copied = true
			}
		}
	}
	if !copied {
		o.mu.chunks = append(o.mu.chunks, st.ch)
	}
	o.mu.size += n
	queued := o.queued()
	o.mu.Unlock()
	if copied {
		st.ch.b = st.ch.b[:0]
	} else {
		st.ch = nil
	}
	dst.kickWriter()
	return queued
}

// checkQueued applies the slow-consumer cut-off and the producer stall to
// a receiver whose queue is now queued bytes long.
func (c *client) checkQueued(dst *client, queued int64) {
	maxPending := c.srv.opts.MaxPending
	switch {
	case queued > maxPending:
		c.srv.slowConsumer(dst)
	case queued > c.srv.stallMark:
		c.stallFor(dst, queued)
	}
}

// handOverAll hands every stage over without the stall checks (used just
// before a stall, so the receivers have everything to drain).
func (c *client) handOverAll() {
	for i := range c.stages {
		c.handOver(&c.stages[i])
	}
}

// stageMsg frames a message for dst into this reader's stage for it. It
// reports false when dst has no stage slot (the caller then queues it
// directly).
func (c *client) stageMsg(dst *client, sid, subj, reply, hdr, data []byte) bool {
	st := c.stageFor(dst)
	if st == nil {
		return false
	}
	c.room(st, msgSize(sid, subj, reply, hdr, data))
	st.ch.b = appendMsg(st.ch.b, dst.headers.Load(), sid, subj, reply, hdr, data)
	if dst.trace {
		dst.traceMsgOut(sid, subj, reply, hdr, data)
	}
	return true
}

// flushPending hands over every stage and wakes every writer this read
// goroutine fed directly. Called at the end of each input chunk.
func (c *client) flushPending() {
	c.runDeferred()
	// checkQueued may stall, and a stall hands over all stages; iterate by
	// index and reset only at the end.
	for i := 0; i < len(c.stages); i++ {
		st := &c.stages[i]
		if q := c.handOver(st); q > 0 {
			c.checkQueued(st.dst, q)
		}
	}
	for i := range c.stages {
		st := &c.stages[i]
		st.dst = nil
		if st.ch != nil { // emptied by handOver; idle connections keep no chunk
			putChunk(st.ch)
			st.ch = nil
		}
	}
	c.stages = c.stages[:0]
	c.lastStage = 0
	for i, dst := range c.pending {
		dst.kickWriter()
		c.pending[i] = nil
	}
	c.pending = c.pending[:0]
}

// addPending marks dst's writer, fed directly, to be woken at the end of
// this chunk. Duplicates only cost an extra wake-up, so only the last entry
// is checked.
func (c *client) addPending(dst *client) {
	if n := len(c.pending); n > 0 && c.pending[n-1] == dst {
		return
	}
	if len(c.pending) == 256 {
		for i, p := range c.pending {
			p.kickWriter()
			c.pending[i] = nil
		}
		c.pending = c.pending[:0]
	}
	c.pending = append(c.pending, dst)
}

// queueOwn queues a protocol line to this client from its read goroutine,
// in order with the messages staged for it.
func (c *client) queueOwn(p string) {
	if st := c.stageFor(c); st != nil {
		c.room(st, len(p))
		st.ch.b = append(st.ch.b, p...)
		if c.trace {
			c.traceOut(p)
		}
		return
	}
	c.queueProto(p)
	c.addPending(c)
}

// closeFromReader closes the connection from its own read goroutine after
// handing over what is staged, so replies queued before the error are sent
// before the -ERR.
func (c *client) closeFromReader(reason closeReason, text string) {
	c.flushPending()
	c.close(reason, text)
}
