package wal

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// Append stores a message and returns once it is durable under the sync
// policy.
func (s *Store) Append(subj string, hdr, data []byte) (uint64, int64, error) {
	type result struct {
		seq uint64
		ts  int64
		err error
	}
	ch := make(chan result, 1)
	if err := s.AppendAsync(subj, hdr, data, func(seq uint64, ts int64, err error) { ch <- result{seq, ts, err} }); err != nil {
		return 0, 0, err
	}
	r := <-ch
	return r.seq, r.ts, r.err
}

// AppendAsync stores a message; done fires once it is durable under the
// sync policy: fsynced with SyncAlways, written to the operating system
// (pwrite, no fsync) with SyncInterval and SyncNever. In every mode the
// bytes have left the process before done fires, so a process crash never
// loses an acknowledged message nor hands its sequence out again. done runs
// on the store's commit goroutine, never inside AppendAsync.
func (s *Store) AppendAsync(subj string, hdr, data []byte, done store.AppendDone) error {
	if len(subj) > segment.MaxSubjectLen {
		return fmt.Errorf("%w: %q", store.ErrInvalidSubject, subj)
	}
	size := store.FileRecordSize(subj, hdr, data)
	if n := s.recordSize(len(subj), len(hdr), len(data)); n > segment.MaxRecordSize {
		return fmt.Errorf("%w: record of %d bytes above the %d-byte format limit", store.ErrMaxMsgSize, n, segment.MaxRecordSize)
	}
	s.mu.Lock()
	// The subject of the previous append was checked then: a publisher
	// that keeps to one subject skips the byte-by-byte check.
	if !s.idx.Subj.IsLast(subj) && !subject.ValidPublish(subj) {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", store.ErrInvalidSubject, subj)
	}
	seq, ts, err := s.appendLocked(subj, hdr, data, size)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	first := len(s.waiters) == 0
	s.addWaiterLocked(waiter{seq: seq, ts: ts, size: size, done: done})
	s.pendB += size
	s.mu.Unlock()
	if first {
		s.kickCommit()
	}
	return nil
}

// addWaiterLocked queues w for the next group commit. Without SyncAlways a
// waiter with no callback joins a callback-less one queued just before it:
// the commit releases every queued waiter at once (takeWaitersLocked to
// s.last), and what it needs from them, visibility up to the last sequence
// and its timestamp and the bytes in flight, the merged waiter carries. So
// a stream of AppendAsync(..., nil) costs no queue entry per message.
// (SyncAlways keeps one entry per append: its commit releases up to the
// sequence it fsynced, which a merged entry could straddle.)
func (s *Store) addWaiterLocked(w waiter) {
	if n := len(s.waiters); w.done == nil && n > 0 && s.opts.Sync != SyncAlways {
		if p := &s.waiters[n-1]; p.done == nil {
			p.seq, p.ts = w.seq, w.ts
			p.size += w.size
			return
		}
	}
	s.waiters = append(s.waiters, w)
}

// kickCommit wakes the commit goroutine. Appends kick only when they
// queue the first waiter: a queue that is not empty was kicked by whoever
// made it so, and the commit that takes it takes everything queued up to
// then (under mu), then kicks again if more came during its fsync. One
// wakeup per commit instead of a channel send per append, which under a
// fast appender also handed the processor to the commit goroutine over and
// over.
func (s *Store) kickCommit() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Store) appendLocked(subj string, hdr, data []byte, size uint64) (uint64, int64, error) {
	// First: reserving may wait with mu released (reserve.go).
	if err := s.reserveLocked(1); err != nil {
		return 0, 0, err
	}
	if s.closed {
		return 0, 0, store.ErrClosed
	}
	if s.werr != nil {
		return 0, 0, s.werr
	}
	if err := s.checkDiscardNewLocked(subj, size, len(hdr)+len(data)); err != nil {
		return 0, 0, err
	}
	seq := s.last + 1
	ts := s.nowNano()
	if ts < s.lastTS {
		ts = s.lastTS // timestamps never go backwards, so SeqForTime can bisect
	}
	n := s.recordSize(len(subj), len(hdr), len(data))
	tombReserve := s.tombReserve()
	// A message leaves tombReserve free in its segment, so deletes and
	// purges can always be written there, even when the disk is too full
	// for a new segment: purging is how a full disk gets space back.
	if !s.active.seg.Room(n + tombReserve) {
		var err error
		if s.active.seg.Base() == seq || s.batch.active {
			// The active segment holds no message yet (tombstones at
			// most): a new one would take its name. Grow it instead.
			// So too inside an atomic batch, which stays in one segment.
			err = s.active.seg.Grow(max(s.nextSegmentSize(), int64(segment.HeaderSize+n+tombReserve)) + s.active.seg.End())
		} else {
			err = s.rollLocked(seq, n+tombReserve)
		}
		if err != nil {
			if s.werr == nil && errors.Is(err, syscall.ENOSPC) {
				// Nothing changed: the new segment could not be created
				// (or grown). Refuse this message; a later append tries
				// again, so appends work once space returns.
				return 0, 0, fmt.Errorf("wal: %s: disk full: %w", s.dir, err)
			}
			return 0, 0, s.failLocked(err)
		}
	}
	off, err := s.active.seg.Append(s.batch.flags, seq, ts, subj, hdr, data)
	if err != nil {
		return 0, 0, s.failLocked(err)
	}
	if s.active.seg.Buffered() >= flushThreshold {
		if err := s.active.seg.StartFlush(maxBuffered); err != nil {
			return 0, 0, s.failLocked(err)
		}
	}
	wasEmpty := s.msgs == 0
	s.idx.Add(seq, index.Loc{Seg: s.active.id, Off: uint32(off)}, subj)
	s.last, s.lastTS = seq, ts
	s.msgs++
	s.bytes += size
	s.dirty, s.unsynced = true, true
	s.armSyncLocked()
	s.opts.Metrics.appended(size)
	s.limitAfterAppendLocked(seq, subj)
	if wasEmpty {
		s.scheduleAgeLocked()
	}
	return seq, ts, nil
}

// rollLocked seals the active segment and starts a new one at base, large
// enough for a record of need bytes.
func (s *Store) rollLocked(base uint64, need int) error {
	if err := s.writeTombsLocked(); err != nil {
		return s.failLocked(err)
	}
	if s.active.seg.Base() == base {
		// More tombstones were pending than the old segment had room for,
		// and writing them rolled already, to a segment of this very base
		// that holds them and no message. Take it, grown if need be: a
		// second file of the same name would be created over it, and
		// sealing the first would then trim the shared file to its end,
		// cutting off what was written through the second.
		if s.active.seg.Room(need) {
			return nil
		}
		return s.active.seg.Grow(max(s.nextSegmentSize(), int64(segment.HeaderSize+need)) + s.active.seg.End())
	}
	// Create the new segment before sealing the old one: if the disk is
	// full, the store stays as it was and the old segment keeps its tomb
	// reserve.
	size := max(s.nextSegmentSize(), int64(segment.HeaderSize+need))
	var seg *segment.Segment
	var err error
	if sp := s.takeSpareLocked(size); sp != nil {
		if seg, err = sp.UseKey(base, s.nowNano(), s.key); err == nil {
			s.spare.used++
		}
	}
	if seg == nil {
		// No spare, or it failed (and is gone): create the file here.
		if seg, err = segment.CreateKey(s.fs, s.dir, base, s.nowNano(), size, s.key); err != nil {
			return err
		}
		s.spare.created++
	}
	old := s.active
	// The old segment is frozen here (its buffer written) and trimmed and
	// fsynced outside the lock, by whichever of the background seal and the
	// next group commit comes first: with SyncAlways the commit releases
	// the old segment's waiters only once it is durable (groupCommit), so
	// no append waits under the lock for a seal's fsync.
	if err := old.seg.Freeze(); err != nil {
		seg.Remove()
		return s.failLocked(err)
	}
	s.sealing = append(s.sealing, old)
	s.armSyncLocked()
	select {
	case s.sealKick <- struct{}{}:
	default:
	}
	s.unsynced = false
	s.nextID++
	seg.SetZeroAhead(s.opts.Sync == SyncAlways) // every commit fsyncs (segment/zeroahead.go)
	s.active = &segEntry{id: s.nextID, seg: seg}
	s.segs = append(s.segs, s.active)
	s.wantSpareLocked()
	// Bound how much a crash recovery scans: checkpoint every few rolls.
	// (A checkpoint costs time proportional to the index, so not on every
	// roll; the periodic and closing checkpoints cover the rest.)
	// It runs as the periodic one does, on a goroutine of its own, so that
	// neither this appender nor anyone else waits for the fsyncs of the
	// segment just sealed and of the checkpoint with the lock held. If one
	// is running already, a later roll tries again. (Not during recovery,
	// which runs without the lock: a roll there waits for the next one.)
	s.rolls++
	if s.rolls >= checkpointRolls && s.opened {
		s.spawn(&s.checkpointing, func() { s.periodicCheckpoint() })
	}
	return nil
}

// nextSegmentSize is the size of the segment that follows the active one:
// twice its size, between FirstSegmentSize and SegmentSize. Small streams
// stay small on disk; large ones reach full-size, preallocated segments
// after a few rolls.
func (s *Store) nextSegmentSize() int64 {
	if s.active == nil {
		return s.opts.FirstSegmentSize
	}
	return min(max(2*s.active.seg.Capacity(), s.opts.FirstSegmentSize), s.opts.SegmentSize)
}

// groupCommit makes pending appends durable under the sync policy and
// releases their waiters. With SyncAlways it writes the buffer and fsyncs
// once for all of them, both outside the lock, so appends keep going into a
// second buffer meanwhile. Otherwise one pwrite of the buffer is enough:
// the bytes are the operating system's, and the interval ticker (or the OS)
// fsyncs them later.
func (s *Store) groupCommit() {
	always := s.opts.Sync == SyncAlways
	if always {
		s.gather()
	}
	s.mu.Lock()
	if s.closed || len(s.waiters) == 0 {
		s.mu.Unlock()
		return
	}
	fail := func(err error) {
		ws := s.takeAllWaitersLocked()
		s.unlockNotify(ws, err)
	}
	if s.werr != nil {
		fail(s.werr)
		return
	}
	if err := s.writeTombsLocked(); err != nil {
		fail(s.failLocked(err))
		return
	}
	write, err := s.startFlushUnlocking()
	if err != nil {
		fail(err)
		return
	}
	target := s.last
	if always {
		// Segments sealed since the last commit hold waiters too.
		err = s.fsyncUnlocking(target, write)
	} else {
		err = s.writtenUnlocking(write)
	}
	if err != nil {
		fail(err)
		return
	}
	s.commits++
	taken := s.waiters // the array batch aliases; recycled once notified
	batch := s.takeWaitersLocked(target)
	s.lastBatch = len(batch)
	s.unlockNotify(batch, nil)
	putWaiters(taken)
	// More may have arrived during the fsync.
	s.mu.Lock()
	more := len(s.waiters) > 0
	s.mu.Unlock()
	if more {
		s.kickCommit()
	}
}

// fsyncUnlocking makes everything appended up to sequence target durable:
// the active segment's buffer is written (write, from startFlushUnlocking,
// or the write in flight waited for), the frozen segments are finished and
// the active one fsynced, all with mu released, so that appends and reads
// go on meanwhile. The caller holds mu and has written the pending
// tombstones; mu is held again on return. An error fails the store.
func (s *Store) fsyncUnlocking(target uint64, write func()) error {
	ent := s.active
	s.busy[ent]++
	s.unsynced = false
	seals := s.takeSealingLocked()
	written := ent.seg.InFlight()
	s.mu.Unlock()

	waitWritten(write, written)
	err := s.finishTaken(seals)
	if err == nil {
		err = s.opts.Metrics.timeFsync(ent.seg.SyncFile)
	}

	s.mu.Lock()
	s.unbusyLocked(ent)
	if err == nil {
		err = s.settleLocked(ent, written)
	}
	if err != nil {
		return s.failLocked(err)
	}
	s.syncedTo(target)
	return nil
}

// startFlushUnlocking makes everything the active segment buffers a write
// in flight (segment.BeginFlush) and returns it for the caller to run once
// it has released mu (nil if nothing was buffered): fsyncUnlocking or
// writtenUnlocking, which must follow at once, since whoever needs the
// segment written waits for that write. If an append's background write is
// in flight, it first waits for that with mu released, rather than under
// mu as BeginFlush would. mu is held on return; an error fails the store.
func (s *Store) startFlushUnlocking() (write func(), err error) {
	ent := s.active
	if w := ent.seg.InFlight(); w != nil && ent.seg.Buffered() > 0 {
		if err := s.waitWriteUnlocking(ent, nil, w); err != nil {
			return nil, err
		}
		if s.closed { // Close wrote everything and took the waiters
			return nil, store.ErrClosed
		}
	}
	// (A roll meanwhile flushed ent; the new active segment's buffer is
	// what is left.)
	if write, err = s.active.seg.BeginFlush(); err != nil {
		return nil, s.failLocked(err)
	}
	return write, nil
}

// writtenUnlocking runs write (from startFlushUnlocking), or waits for the
// active segment's write in flight, with mu released, so that everything
// appended before has left the process. mu is held again on return. An
// error fails the store.
func (s *Store) writtenUnlocking(write func()) error {
	ent := s.active
	written := ent.seg.InFlight()
	if written == nil {
		return nil
	}
	return s.waitWriteUnlocking(ent, write, written)
}

// waitWriteUnlocking runs write (if not nil) and waits for ent's write in
// flight, written, with mu released and ent kept busy meanwhile, then
// settles it. mu is held again on return; an error fails the store.
func (s *Store) waitWriteUnlocking(ent *segEntry, write func(), written <-chan struct{}) error {
	s.busy[ent]++
	s.mu.Unlock()
	waitWritten(write, written)
	s.mu.Lock()
	s.unbusyLocked(ent)
	if err := s.settleLocked(ent, written); err != nil {
		return s.failLocked(err)
	}
	return nil
}

// waitWritten runs write, if there is one (the caller's own write of the
// buffer), and waits for the segment's write in flight, written: the same
// write, or an append's started before it.
func waitWritten(write func(), written <-chan struct{}) {
	if write != nil {
		write()
	}
	if written != nil {
		<-written
	}
}

// settleLocked settles the background write written of ent's segment,
// which the caller waited for with mu released. If somebody settled it
// meanwhile (an append starting the next write, a roll, a read) and it
// failed, they failed the store.
func (s *Store) settleLocked(ent *segEntry, written <-chan struct{}) error {
	if err := ent.seg.SettleWrite(written); err != nil {
		return err
	}
	return s.werr
}

// syncOutsideLock is Sync for the interval ticker and for the first pass of
// a periodic checkpoint: the write of the buffer and the tombstones under
// mu, the fsyncs without it (fsyncUnlocking). Under SyncNever or a long
// interval the fsync may have many megabytes to write back; appends and
// reads used to wait for it.
func (s *Store) syncOutsideLock() {
	s.mu.Lock()
	if s.closed || s.werr != nil || !s.syncDueLocked() {
		s.mu.Unlock()
		return
	}
	if err := s.writeTombsLocked(); err != nil {
		s.failLocked(err)
		s.mu.Unlock()
		return
	}
	write, err := s.startFlushUnlocking()
	if err != nil {
		s.mu.Unlock()
		return
	}
	target := s.last
	var ws []waiter
	if s.fsyncUnlocking(target, write) == nil && !s.closed { // Close took every waiter
		ws = s.takeWaitersLocked(target)
	}
	s.unlockNotify(ws, nil)
}

// syncDueLocked: something written or queued waits for an fsync.
func (s *Store) syncDueLocked() bool {
	return s.unsynced || len(s.tombs) != 0 || len(s.sealing) != 0
}

// armSyncLocked sets the SyncInterval timer unless it is set (or the
// policy is another).
func (s *Store) armSyncLocked() {
	if s.syncT != nil && !s.syncArmed {
		s.syncArmed = true
		s.syncT.Reset(s.opts.SyncInterval)
	}
}

// intervalSync is SyncInterval's timed fsync; what is written while it
// runs, or what it could not sync, sets the timer again.
func (s *Store) intervalSync() {
	s.syncOutsideLock()
	s.mu.Lock()
	if !s.closed && s.werr == nil && s.syncDueLocked() {
		s.armSyncLocked()
	}
	s.mu.Unlock()
}

// gather lets the writers released by the previous commit append again
// before the next fsync starts, so that concurrent writers keep sharing one
// fsync instead of splitting into two groups that alternate. It waits only
// while fewer appends are queued than the previous commit released, and at
// most gatherMax: a lone writer never waits.
func (s *Store) gather() {
	deadline := time.Now().Add(gatherMax)
	for {
		s.mu.Lock()
		enough := len(s.waiters) >= s.lastBatch || s.closed
		s.mu.Unlock()
		if enough || time.Now().After(deadline) {
			return
		}
		runtime.Gosched()
	}
}

// unbusyLocked ends I/O outside the lock on e, closing it if it was
// removed meanwhile.
func (s *Store) unbusyLocked(e *segEntry) {
	s.busy[e]--
	if s.busy[e] > 0 {
		return
	}
	delete(s.busy, e)
	for i, d := range s.deferred {
		if d == e {
			d.seg.Close()
			s.deferred = append(s.deferred[:i], s.deferred[i+1:]...)
			break
		}
	}
}

// finishSeals trims and fsyncs frozen segments outside the lock. A segment
// leaves s.sealing only once it is durable, so a checkpoint taken meanwhile
// (finishSealsLocked) never claims an unsynced segment.
func (s *Store) finishSeals() {
	s.mu.Lock()
	todo := s.takeSealingLocked()
	s.mu.Unlock()
	s.finishTaken(todo)
}

// takeSealingLocked returns the frozen segments to finish, each marked busy
// so it stays open until finishTaken is done with it.
func (s *Store) takeSealingLocked() []*segEntry {
	if len(s.sealing) == 0 {
		return nil
	}
	todo := append([]*segEntry(nil), s.sealing...)
	for _, e := range todo {
		s.busy[e]++
	}
	return todo
}

// finishTaken trims and fsyncs segments taken by takeSealingLocked, outside
// the lock, and returns the first error (which also fails the store).
func (s *Store) finishTaken(todo []*segEntry) error {
	var first error
	for _, e := range todo {
		var err error
		if first == nil {
			err = s.opts.Metrics.timeFsync(e.seg.Finish)
		}
		s.mu.Lock()
		switch {
		case first != nil:
			// An earlier one failed: this one stays in s.sealing.
		case err != nil:
			first = s.failLocked(err)
		default:
			s.sealing = removeEntry(s.sealing, e)
			if s.opts.Compress && s.busy[e] == 1 && !s.removed(e) {
				if c, cerr := segment.Compress(e.seg); cerr == nil {
					e.seg = c
				} else {
					first = s.failLocked(cerr)
				}
			}
		}
		s.unbusyLocked(e)
		s.mu.Unlock()
	}
	return first
}

func removeEntry(list []*segEntry, e *segEntry) []*segEntry {
	for i, x := range list {
		if x == e {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// finishSealsLocked completes pending seals under the lock, before a
// checkpoint that claims them durable.
func (s *Store) finishSealsLocked() error {
	for _, e := range s.sealing {
		if err := s.opts.Metrics.timeFsync(e.seg.Finish); err != nil {
			return s.failLocked(err)
		}
	}
	s.sealing = nil
	return nil
}

func (s *Store) removed(e *segEntry) bool {
	for _, d := range s.deferred {
		if d == e {
			return true
		}
	}
	return false
}

// takeWaitersLocked makes appends up to target visible and returns their
// waiters for the caller to notify outside the lock.
func (s *Store) takeWaitersLocked(target uint64) []waiter {
	i := 0
	for i < len(s.waiters) && s.waiters[i].seq <= target {
		s.pendB -= min(s.pendB, s.waiters[i].size)
		i++
	}
	batch := s.waiters[:i:i]
	s.waiters = append(getWaiters(), s.waiters[i:]...)
	if target > s.visible {
		s.visible = target
		if i > 0 && batch[i-1].seq == target {
			s.visTS = batch[i-1].ts
		} else if target == s.last {
			s.visTS = s.lastTS
		}
	}
	s.applyTrimsLocked()
	return batch
}

// waiterBufs recycles the waiter arrays of notified group commits, so that
// under steady load s.waiters is not regrown from nothing after every
// commit. It holds *[]waiter of length 0.
var waiterBufs sync.Pool

func getWaiters() []waiter {
	if p, ok := waiterBufs.Get().(*[]waiter); ok {
		return *p
	}
	return nil
}

// putWaiters recycles ws once nothing refers to its array any more.
func putWaiters(ws []waiter) {
	if cap(ws) == 0 {
		return
	}
	b := ws[:cap(ws)] // declared after the check: &b moves it to the heap
	clear(b)          // drop the callbacks
	b = b[:0]
	waiterBufs.Put(&b)
}

// takeAllWaitersLocked removes every waiter, for failing them.
func (s *Store) takeAllWaitersLocked() []waiter {
	ws := s.waiters
	s.waiters = nil
	s.pendB = 0
	return ws
}

// unlockNotify releases mu and calls the done callbacks of ws. notifyMu is
// taken before mu is released, so callbacks run one at a time and in
// sequence order across goroutines, and never with mu held (callbacks may
// use the store).
func (s *Store) unlockNotify(ws []waiter, err error) {
	if len(ws) == 0 {
		s.mu.Unlock()
		return
	}
	s.notifyMu.Lock()
	s.mu.Unlock()
	notify(ws, err)
	s.notifyMu.Unlock()
}

// notify calls the done callbacks of ws.
func notify(ws []waiter, err error) {
	for _, w := range ws {
		if w.done == nil {
			continue
		}
		if err != nil {
			w.done(0, 0, err)
		} else {
			w.done(w.seq, w.ts, nil)
		}
	}
}

// writeTombsLocked appends tombstones for pending limit evictions.
func (s *Store) writeTombsLocked() error {
	for len(s.tombs) > 0 {
		t := s.tombs[0]
		if err := s.appendTombLocked(t.first, t.count); err != nil {
			return err
		}
		s.tombs = s.tombs[1:]
	}
	s.tombs = nil
	return nil
}

func (s *Store) appendTombLocked(first, count uint64) error {
	n := s.recordSize(0, 0, 8)
	if !s.active.seg.Room(n) {
		var err error
		if s.active.seg.Base() == s.last+1 || s.batch.active {
			// Only tombstones: keep its name. Inside an atomic batch:
			// keep the batch in one segment (batch.go).
			err = s.active.seg.Grow(s.active.seg.End() + s.nextSegmentSize())
		} else {
			err = s.rollLockedNoTombs(s.last+1, n)
		}
		if err != nil {
			return err
		}
	}
	_, err := s.active.seg.Append(segment.FlagTombstone, first, s.lastTS, "", nil, le64(count))
	s.unsynced, s.dirty = true, true
	s.armSyncLocked()
	return err
}

func (s *Store) rollLockedNoTombs(base uint64, need int) error {
	saved := s.tombs
	s.tombs = nil
	err := s.rollLocked(base, need)
	s.tombs = saved
	return err
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// nowNano is the timestamp for a new record.
func (s *Store) nowNano() int64 {
	if s.opts.Now != nil {
		return s.opts.Now().UnixNano()
	}
	return s.clk.now()
}

// releaseIdleBuffers drops the active segment's write buffers when nothing
// was appended since the previous checkpoint tick (segment.ReleaseBuffers).
// A stream that took one burst keeps up to two buffers of 4 MiB otherwise,
// and a server with many such streams holds that much per stream; a stream
// appending at any rate keeps them and never reallocates.
func (s *Store) releaseIdleBuffers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.active == nil {
		return
	}
	if s.last == s.idleMark {
		s.active.seg.ReleaseBuffers()
	}
	s.idleMark = s.last
}
