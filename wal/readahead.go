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
// scans). A record shorter than segment.CopyReadMin that it reads in order
// comes from a read-ahead window: a span of the segment read with one pread
// from the record's offset, from which the records after it are decoded too
// (each checksum verified, as from the mapping). Reading a stream through
// the mapping instead faults in every page once per process (on the
// benchmark VM about 1.2 µs per 4 KiB page, against 0.2-0.35 µs per 4 KiB
// for pread) and leaves the pages in the process's resident set; windows
// touch no mapping page, so a reader going through a stream leaves nothing
// resident behind it.
//
// A read is in order when it starts at most winGap bytes after the end of
// a window or of a recent read (the store remembers the last winCount reads
// that missed every window, its trail): the next record, or one a few
// records on, as a filtered consumer of a dense subject reads. The first
// such read fills a window of winMin bytes; a reader that runs off its
// window's end replaces it with one twice as long, up to winSize, so a
// reader going through a stream reads 128 KiB at a time and keeps one
// window. Any other read (a sparse filter, a reader's first record) goes
// through the mapping, as Load does: a pread per scattered record would
// cost more than a page already resident.
//
// The store keeps winCount windows (at most 1 MiB), the least recently used
// one refilled when a reader comes off its trail, so several readers at
// different places of a stream each keep their own window, and readers
// close together share one. Windows unused for a checkpoint interval are
// released (releaseIdleWindows), so a stream nobody reads holds none. A
// window holds flushed bytes only, and flushed records are never rewritten
// except by an in-place erase, which drops the segment's windows (under the
// exclusive lock, so no fill is in flight). Windows are keyed by segment ID,
// never reused by the store; a removed segment's windows age out.
const (
	winMin   = 16 << 10
	winSize  = 128 << 10
	winGap   = 4 << 10
	winCount = 8
)

type readWin struct {
	seg     index.SegID
	off     int64  // file offset of buf[0]
	buf     []byte // the window; nil while free or being filled
	used    uint64 // last hit, for LRU
	filling bool   // taken by a reader filling it, not to be chosen again
}

// end is the file offset just past the window.
func (w *readWin) end() int64 { return w.off + int64(len(w.buf)) }

// trailRead is a read that missed every window: where the next record of
// the same reader would start, at most.
type trailRead struct {
	seg index.SegID
	off int64 // the record read
	end int64 // off plus the caller's size estimate
}

// readWindows is the store's set of windows and its trail. Its lock is
// held while a hit is decoded and copied out (so no filler overwrites the
// buffer meanwhile), not during a fill's pread: the filler takes the
// window out first.
type readWindows struct {
	mu    sync.Mutex
	tick  uint64 // reads through windows so far
	seen  uint64 // tick at the last releaseIdleWindows
	w     [winCount]readWin
	trail [winCount]trailRead
	next  int // the trail entry to replace next
}

// The outcomes of readAheadLocked besides a read through a window.
type aheadMiss int

const (
	aheadRead    aheadMiss = iota // read from a window: m holds the record
	aheadMapping                  // not in order: read it through the mapping
	aheadBusy                     // every window is being filled: read it alone
)

// readAheadLocked reads the record at loc (flushed, of a segment that is not
// compressed, at most size bytes long, size below segment.CopyReadMin) into m
// from a window if the read is in order, filling one if none holds it. mu
// must be held, shared or exclusive. It returns the record's sequence and
// flags for loadLocked's checks, or how the caller should read the record
// (miss) when no window was used.
func (s *Store) readAheadLocked(seg *segment.Segment, loc index.Loc, size int, m *store.Msg) (seq uint64, flags uint16, miss aheadMiss, err error) {
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
		if w.buf != nil && w.seg == loc.Seg && off >= w.off && off <= w.end()+winGap {
			if seq, flags, hit, err := w.decode(seg, off, m); hit {
				w.used = rw.tick
				rw.mu.Unlock()
				return seq, flags, aheadRead, err
			}
			cont = i // past this window's end, or the record runs past it: read on
		}
		if victim < 0 || w.buf == nil || (rw.w[victim].buf != nil && w.used < rw.w[victim].used) {
			victim = i
		}
	}
	n := winMin
	switch {
	case cont >= 0:
		// A reader that ran off the end of its window replaces it with
		// one twice as long.
		victim = cont
		n = max(winMin, min(2*len(rw.w[cont].buf), winSize))
	case !rw.onTrail(loc.Seg, off):
		rw.trail[rw.next] = trailRead{seg: loc.Seg, off: off, end: off + int64(size)}
		rw.next = (rw.next + 1) % winCount
		rw.mu.Unlock()
		return 0, 0, aheadMapping, nil
	}
	if victim < 0 {
		rw.mu.Unlock()
		return 0, 0, aheadBusy, nil
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
		return 0, 0, aheadRead, err
	}
	*w = readWin{seg: loc.Seg, off: off, buf: buf, used: rw.tick}
	seq, flags, hit, err := w.decode(seg, off, m)
	if !hit && err == nil {
		// The window starts at the record and holds size bytes or up to
		// the written end: the record is torn or its length is wrong.
		var rec segment.Record
		_, err = seg.ReadAtBuf(buf, off, &rec)
	}
	return seq, flags, aheadRead, err
}

// onTrail reports whether a read at off of segment id follows a recent read
// that missed the windows, and forgets that read (a window takes over).
func (rw *readWindows) onTrail(id index.SegID, off int64) bool {
	for i := range rw.trail {
		if t := &rw.trail[i]; t.seg == id && off > t.off && off <= t.end+winGap {
			*t = trailRead{}
			return true
		}
	}
	return false
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
	var rec segment.Record
	if seg.HasKey() {
		// Opened into m.Data's array (the window stays as read).
		_, buf, err := seg.ReadAtBufInto(b, off, &rec, m.Data[:0])
		if err != nil {
			return 0, 0, true, err
		}
		m.Data = buf[:0]
		takeCopied(m, &rec)
		return rec.Seq, rec.Flags, true, nil
	}
	if _, err := seg.ReadAtBuf(b, off, &rec); err != nil {
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
	rw.trail = [winCount]trailRead{}
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
