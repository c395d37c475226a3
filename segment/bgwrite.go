package segment

import (
	"fmt"
	"sync"
)

// A background write: records handed to a pwrite on a goroutine of its own
// (StartFlush), or run by the owner with its lock released (BeginFlush), so
// the appender (and the owner's lock) need not wait for the kernel's copy
// into the page cache. A segment has at most one in flight; its bytes sit at
// file offset end, before the write buffer's. The goroutine touches nothing
// of the segment but the file and the write itself: the segment's fields
// change only under the owner's lock, when a write is settled.
type bgWrite struct {
	buf  []byte
	off  int64
	file *fileHandle
	path string
	// zeros to write after buf (zeroahead.go), and whether that failed
	zfrom, zto int64
	zerr       error
	err        error         // set before done closes
	done       chan struct{} // closed when the pwrite returned
}

// maxSpare caps the capacity of a write buffer kept for reuse.
const maxSpare = 4 << 20

// ReleaseBuffers lets go of the memory the segment keeps for its next
// appends: the settled write buffer held for the next swap, and the write
// buffer itself when it holds nothing. The owner calls it for a stream gone
// idle: one that once took a burst would otherwise keep two buffers of up
// to maxSpare each for as long as it is open. The next append allocates a
// buffer again. A write in flight keeps its buffer until it is settled.
func (s *Segment) ReleaseBuffers() {
	putBuffer(s.spare)
	s.spare = nil
	if len(s.wbuf) == 0 {
		putBuffer(s.wbuf)
		s.wbuf = nil
	}
}

// Released write buffers wait in bufPool for the next segment that needs
// one: when a stream rolls to a new segment, the new one takes over the old
// one's buffers instead of growing fresh ones from nothing (up to 16 MiB of
// allocation and first-touch page faults per 64 MiB segment at 256 KiB
// records). The pool holds only buffers worth keeping, and the garbage
// collector empties it, so a server gone idle still gives the memory back.
var bufPool sync.Pool // of *[]byte, each with len 0

// minPooled is the smallest buffer worth pooling.
const minPooled = 64 << 10

func putBuffer(b []byte) {
	if cap(b) < minPooled || cap(b) > maxSpare {
		return
	}
	b = b[:0]
	bufPool.Put(&b)
}

// getBuffer returns a pooled empty buffer, or nil when there is none.
func getBuffer() []byte {
	if p, _ := bufPool.Get().(*[]byte); p != nil {
		return *p
	}
	return nil
}

// BufferBytes is the memory the segment's write buffers hold: the write
// buffer, the one kept for the next swap and a write in flight.
func (s *Segment) BufferBytes() int {
	n := cap(s.wbuf) + cap(s.spare)
	if s.inflight != nil {
		n += cap(s.inflight.buf)
	}
	return n
}

// StartFlush hands the buffered records to a background write and returns
// at once. If a write is already in flight it returns without starting one
// while fewer than limit bytes are buffered (so appends keep filling the
// buffer meanwhile), and otherwise waits for that write first. The records
// count as flushed (Flushed) once a later call settles their write: Flush,
// WaitFlush, SettleWrite or another StartFlush. An error is the earlier
// write's.
func (s *Segment) StartFlush(limit int) error {
	w, err := s.detach(limit)
	if w != nil {
		go w.run()
	}
	return err
}

// BeginFlush is StartFlush(0) for an owner that runs the write itself, on
// its own goroutine with its lock released: it returns the write to run,
// nil if nothing is buffered. Until run returns, the write is in flight
// like a background one (InFlight, and whoever waits for it waits for
// run).
func (s *Segment) BeginFlush() (run func(), err error) {
	w, err := s.detach(0)
	if w == nil {
		return nil, err
	}
	return w.run, nil
}

// detach makes the buffer the write in flight, first settling the one in
// flight unless it is still running and fewer than limit bytes are
// buffered (then it returns nil).
func (s *Segment) detach(limit int) (*bgWrite, error) {
	if len(s.wbuf) == 0 || s.sealed {
		return nil, nil
	}
	if w := s.inflight; w != nil {
		if len(s.wbuf) < limit {
			select {
			case <-w.done:
			default:
				return nil, nil
			}
		}
		if err := s.settle(w); err != nil {
			return nil, err
		}
	}
	w := &bgWrite{buf: s.wbuf, off: s.end, done: make(chan struct{}), file: s.f, path: s.path}
	w.zfrom, w.zto = s.planZero(s.end + int64(len(s.wbuf)))
	s.inflight = w
	s.wbuf, s.spare = s.spare[:0], nil
	return w, nil
}

// run writes w's buffer, records the outcome and closes done.
func (w *bgWrite) run() {
	n, err := w.file.WriteAt(w.buf, w.off)
	if err == nil && n != len(w.buf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(w.buf))
	}
	if err != nil {
		w.err = fmt.Errorf("segment: write %s at offset %d: %w", w.path, w.off, err)
	} else if w.zto > w.zfrom {
		w.zerr = writeZeros(w.file, w.path, w.zfrom, w.zto)
	}
	close(w.done)
}

// InFlight returns a channel closed when the write in flight, if any, has
// returned (nil if none): the owner may wait on it with its lock released,
// then settle it under the lock with WaitFlush.
func (s *Segment) InFlight() <-chan struct{} {
	if s.inflight == nil {
		return nil
	}
	return s.inflight.done
}

// WaitFlush waits for the write in flight, if any, and settles it: its
// records count as flushed. It does not write the buffer (Flush does).
func (s *Segment) WaitFlush() error {
	if w := s.inflight; w != nil {
		return s.settle(w)
	}
	return nil
}

// SettleWrite settles the write whose InFlight channel is done, if it is
// still the one in flight; nil if it was settled already (by whoever did,
// who got its error).
func (s *Segment) SettleWrite(done <-chan struct{}) error {
	if w := s.inflight; w != nil && done != nil && (<-chan struct{})(w.done) == done {
		return s.settle(w)
	}
	return nil
}

// settle waits for w, the write in flight, and moves end past it. After an
// error the records are neither flushed nor buffered: the owner must treat
// the segment as failed.
func (s *Segment) settle(w *bgWrite) error {
	<-w.done
	s.inflight = nil
	if w.err != nil {
		return w.err
	}
	if w.zerr != nil {
		s.zeroAhead = false
	}
	s.end += int64(len(w.buf))
	if cap(w.buf) <= maxSpare {
		s.spare = w.buf[:0]
	}
	return nil
}

// inflightRecord returns the bytes from off on if off lies in the write in
// flight (whose buffer nobody changes until it is settled).
func (s *Segment) inflightRecord(off int64) ([]byte, bool) {
	w := s.inflight
	if w == nil || off < w.off || off >= w.off+int64(len(w.buf)) {
		return nil, false
	}
	return w.buf[off-w.off:], true
}
