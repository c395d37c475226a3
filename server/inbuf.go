package server

// Read buffer sizing. A connection starts small, doubles while reads fill
// the buffer, and shrinks back when it sits idle with short reads. The
// largest, 256 KiB (nats-server stops at 64 KiB), is for a publisher that
// keeps it full: each read's batch of messages costs one system call and
// one hand-over to the store and the receivers, and a message cut by the
// buffer's end is moved to the front once per read. Async publishes of
// 16 KiB took 12-13 server CPU-µs per message against 14-20 with 64 KiB,
// in four alternating comparison runs.
const (
	minReadBuf   = 4 << 10
	maxReadBuf   = 256 << 10
	minReadSpace = 1 << 10
	shrinkAfter  = 16      // consecutive short reads before halving
	growRound    = 4 << 10 // a buffer grown for one operation is rounded up to this
)

// inbuf is a connection's single read buffer. Bytes are read into the free
// tail; complete operations are parsed in place; an incomplete operation at
// the end is moved to the front before the next read. Owned by the
// connection's read goroutine.
type inbuf struct {
	buf   []byte // buf[pos:] is unparsed input
	pos   int
	need  int  // bytes the pending operation occupies, counted from pos; 0 = unknown
	grow  bool // the last read filled the buffer
	short int  // consecutive reads that used under a quarter of the space
	// drained counts the times the buffer emptied since an operation
	// larger than maxReadBuf was last pending: a buffer grown for large
	// messages is kept while they keep coming (a 256 KiB message a time
	// would otherwise allocate and clear a new buffer each), and dropped
	// once shrinkAfter drains pass without one.
	drained int
}

// space returns the free tail to read into, compacting or growing the
// buffer first when needed.
func (r *inbuf) space() []byte {
	if r.buf == nil {
		r.buf = make([]byte, 0, minReadBuf)
	}
	if r.pos == len(r.buf) {
		r.buf, r.pos = r.buf[:0], 0
		switch {
		case cap(r.buf) > maxReadBuf && r.need == 0:
			if r.drained++; r.drained >= shrinkAfter {
				r.buf = make([]byte, 0, maxReadBuf) // drop a buffer grown for big messages
				r.drained = 0
			}
		case r.short >= shrinkAfter && cap(r.buf) > minReadBuf:
			r.buf = make([]byte, 0, cap(r.buf)/2)
			r.short = 0
		}
	}
	unparsed := len(r.buf) - r.pos
	want := cap(r.buf)
	if r.grow && want < maxReadBuf {
		want *= 2
	}
	if r.need > want {
		// Rounded up, so that the next message, a few bytes longer (a
		// reply subject with one more digit), still fits.
		want = (r.need + growRound - 1) &^ (growRound - 1)
	}
	// Room for a useful read: when the pending operation's length is
	// known, up to its end is enough (doubling a buffer that lacks a few
	// bytes of a 256 KiB message would allocate 512 KiB); otherwise at
	// least minReadSpace.
	for r.need == 0 && want-unparsed < minReadSpace {
		want *= 2
	}
	if want != cap(r.buf) {
		nb := make([]byte, unparsed, want)
		copy(nb, r.buf[r.pos:])
		r.buf, r.pos = nb, 0
	} else if cap(r.buf)-len(r.buf) < minReadSpace || r.pos+r.need > cap(r.buf) {
		n := copy(r.buf[:cap(r.buf)], r.buf[r.pos:])
		r.buf, r.pos = r.buf[:n], 0
	}
	r.grow = false
	if r.need > maxReadBuf {
		// A large operation is pending: read no further than its end, so
		// that it never shares the buffer with a part of the next one,
		// which the next space would have to move to the front (up to a
		// message's length copied per message).
		r.drained = 0
		return r.buf[len(r.buf) : r.pos+r.need]
	}
	return r.buf[len(r.buf):cap(r.buf)]
}

// commit records that n bytes were read into the slice space returned.
func (r *inbuf) commit(n, spaceLen int) {
	r.buf = r.buf[:len(r.buf)+n]
	switch {
	case n == spaceLen:
		r.grow = true
		r.short = 0
	case n < spaceLen/4:
		r.short++
	default:
		r.short = 0
	}
}

// unparsed returns the bytes not yet consumed.
func (r *inbuf) unparsed() []byte { return r.buf[r.pos:] }

// consume marks n bytes as parsed.
func (r *inbuf) consume(n int) { r.pos += n }

// cmdHandler runs parsed operations; handle reports whether to continue.
type cmdHandler interface {
	handle(cmd *command) bool
}

// parse runs every complete operation in the buffer through h, in order,
// and records how much the pending partial operation needs. It stops at the
// first protocol error, or when h says stop.
func (r *inbuf) parse(lim limits, cmd *command, h cmdHandler) protoErr {
	for {
		n, need, perr := parseCommand(r.unparsed(), cmd, lim)
		if perr != errNone {
			return perr
		}
		if n == 0 {
			r.need = need
			return errNone
		}
		r.consume(n)
		r.need = 0
		if n > maxReadBuf {
			r.drained = 0 // a large operation came, if whole in one read
		}
		if !h.handle(cmd) {
			return errNone
		}
	}
}
