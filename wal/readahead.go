package wal

import (
	"encoding/binary"
	"sync"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
)

// Read-ahead windows for sequential readers.
//
// LoadNext is the sequential reader's call (consumers, mirrors, stream
// scans). A record shorter than segment.CopyReadMin that it reads comes from
// a read-ahead window: a span of the segment read with one pread from the
// record's offset, from which the records after it are decoded too (each
// checksum verified, as from the mapping). A window starts at winMin bytes;
// a reader that runs off its end gets one twice as long in its place, up to
// winSize, so a reader going through a stream reads 128 KiB at a time while
// readers that take one record here and there read little. Reading through the mapping
// instead would fault in every page once per process (on the benchmark VM
// about 1.2 µs per 4 KiB page, against 0.2-0.35 µs per 4 KiB for pread) and
// leave the pages in the process's resident set; windows touch no mapping
// page, so a reader leaves nothing resident behind it.
//
// The store keeps winCount windows (at most 1 MiB), the least recently used
// one refilled on a miss that continues none, so several readers at
// different places of a stream each keep their own window, and readers
// close together share one. Windows unused for a checkpoint interval are
// released (releaseIdleWindows), so a stream nobody reads holds none. A
// window holds flushed bytes only, and flushed records are never rewritten
// except by an in-place erase, which drops the segment's windows (under the
// exclusive lock, so no fill is in flight). Windows are keyed by segment ID,
// never reused by the store; a removed segment's windows age out.
//
// Load (by sequence, in any order) reads through the mapping: a random
// reader's working set is the mapping, and a window would be a wasted pread.
const (
	winMin   = 16 << 10
	winSize  = 128 << 10
	winCount = 8
)

type readWin struct {
	seg     index.SegID
	off     int64  // file offset of buf[0]
	buf     []byte // the window; nil while free or being filled
	used    uint64 // last hit, for LRU
	filling bool   // taken by a reader filling it, not to be chosen again
}

// readWindows is the store's set of windows. Its lock is held while a hit
// is decoded and copied out (so no filler overwrites the buffer meanwhile),
// not during a fill's pread: the filler takes the window out first.
type readWindows struct {
	mu   sync.Mutex
	tick uint64 // reads through windows so far
	seen uint64 // tick at the last releaseIdleWindows
	w    [winCount]readWin
}

// readAheadLocked reads the record at loc (flushed, of a segment that is not
// compressed, at most size bytes long, size below segment.CopyReadMin) into m
// from a window, filling one if none holds it. mu must be held, shared or
// exclusive. It returns the record's sequence and flags for loadLocked's
// checks; ok is false when every window is being filled by other readers,
// and the caller reads some other way.
func (s *Store) readAheadLocked(seg *segment.Segment, loc index.Loc, size int, m *store.Msg) (seq uint64, flags uint16, ok bool, err error) {
	rw := &s.readWindows
	off := int64(loc.Off)
	rw.mu.Lock()
	rw.tick++
	victim, cont := -1, -1
	for i := range rw.w {
		w := &rw.w[i]
		if w.filling {
			continue
		}
		if w.buf != nil && w.seg == loc.Seg && off >= w.off && off <= w.off+int64(len(w.buf)) {
			if seq, flags, hit, err := w.decode(seg, off, m); hit {
				w.used = rw.tick
				rw.mu.Unlock()
				return seq, flags, true, err
			}
			cont = i // the record runs past this window's end: read on
		}
		if victim < 0 || w.buf == nil || (rw.w[victim].buf != nil && w.used < rw.w[victim].used) {
			victim = i
		}
	}
	// A reader that ran off the end of its window replaces it with one
	// twice as long (up to winSize); any other miss starts at winMin, so
	// readers that only ever take one record each (many consumers at
	// different places, more than there are windows) read little.
	n := winMin
	if cont >= 0 {
		victim = cont
		n = max(winMin, min(2*len(rw.w[cont].buf), winSize))
	}
	if victim < 0 {
		rw.mu.Unlock()
		return 0, 0, false, nil
	}
	w := &rw.w[victim]
	buf := w.buf
	*w = readWin{filling: true}
	rw.mu.Unlock()

	buf, err = seg.ReadSpan(buf, off, max(n, size))

	rw.mu.Lock()
	defer rw.mu.Unlock()
	if err != nil {
		*w = readWin{buf: buf[:0]}
		return 0, 0, true, err
	}
	*w = readWin{seg: loc.Seg, off: off, buf: buf, used: rw.tick}
	seq, flags, hit, err := w.decode(seg, off, m)
	if !hit && err == nil {
		// The window starts at the record and holds size bytes or up to
		// the written end: the record is torn or its length is wrong.
		_, _, err = seg.ReadAtBuf(buf, off)
	}
	return seq, flags, true, err
}

// decode copies the record at file offset off into m if the window holds
// all of it (hit). A record whose checksum fails is a hit with an error.
func (w *readWin) decode(seg *segment.Segment, off int64, m *store.Msg) (seq uint64, flags uint16, hit bool, err error) {
	at := off - w.off
	if at+4 > int64(len(w.buf)) {
		return 0, 0, false, nil
	}
	b := w.buf[at:]
	if l := recordLen(b); l < segment.RecordMinSize || int(l) > len(b) {
		return 0, 0, false, nil
	}
	rec, _, err := seg.ReadAtBuf(b, off)
	if err != nil {
		return 0, 0, true, err
	}
	copyMsg(m, &rec)
	return rec.Seq, rec.Flags, true, nil
}

// releaseIdleWindows frees the buffers of the windows no reader has used
// since the last call (the background goroutine calls it every
// CheckpointEvery). It needs only the windows' lock: buffers are touched
// under it, except by a filler, whose window is marked and skipped.
func (s *Store) releaseIdleWindows() {
	rw := &s.readWindows
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for i := range rw.w {
		if w := &rw.w[i]; !w.filling && w.used <= rw.seen {
			*w = readWin{}
		}
	}
	rw.seen = rw.tick
}

// recordLen is the length word at the start of b (at least 4 bytes).
func recordLen(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// dropWindowsLocked forgets the windows of segment id (before its flushed bytes
// are rewritten in place). mu must be held exclusively.
func (s *Store) dropWindowsLocked(id index.SegID) {
	rw := &s.readWindows
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for i := range rw.w {
		if w := &rw.w[i]; w.seg == id && !w.filling {
			clear(w.buf) // the buffer is kept for the next fill
			*w = readWin{buf: w.buf[:0]}
		}
	}
}
