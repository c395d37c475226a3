package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// File names inside a store directory.
const (
	lockFile       = "LOCK"
	checkpointFile = "index.ckpt"
)

// waiter is an append waiting for its fsync.
type waiter struct {
	seq  uint64
	ts   int64
	size uint64
	done store.AppendDone
}

// deleteRange is a run of deleted sequences not yet written as a tombstone.
type deleteRange struct{ first, count uint64 }

// Store is the file store of one stream. See the package doc.
type Store struct {
	// batch is the state of an AppendBatch in progress (batch.go).
	batch batchState

	dir  string
	fs   vfs.FS
	opts Options
	lock io.Closer
	// key is the stream's data key when the store is encrypted (its key
	// file opened at Open; encrypt.go), nil when it stores in the clear.
	// Set before recovery, never changed after.
	key *crypt.DataKey

	// testYield, when set (tests only), runs while a long compaction or
	// purge has released the lock between chunks (prune.go).
	testYield   func()
	testRebuilt func(kept int) // called when a removal rebuilds the index from its survivors (survivors.go)

	// readWindows are the sequential readers' read-ahead windows
	// (readahead.go); it has its own lock, taken with mu held.
	readWindows readWindows

	// mu guards everything below it. Readers hold it shared while they copy
	// out of a segment mapping; segments are closed only under it held
	// exclusively, so no read ever touches an unmapped segment.
	notifyMu sync.Mutex // serialises AppendDone callbacks; taken before mu is released

	mu      sync.RWMutex
	segs    []*segEntry // by base sequence
	active  *segEntry
	nextID  index.SegID
	idx     *index.Index
	last    uint64 // highest sequence handed out
	visible uint64 // highest sequence readers may see
	msgs    uint64 // live messages, including ones not yet visible
	bytes   uint64
	pendB   uint64 // bytes of appended messages not yet visible
	// trims are appends whose limit evictions wait until they are visible
	// (limits.go), so that a reader never finds a subject's old message
	// gone while its new one cannot be seen yet.
	trims    []pendingTrim
	lastTS   int64
	visTS    int64  // timestamp of the message at visible
	floor    uint64 // lowest sequence a Compact left possible
	werr     error  // sticky write error
	closed   bool
	limits   store.Limits // set by setLimitsLocked, with evicts and admits
	lost     *store.LostData
	tombs    []deleteRange     // limit evictions not yet written as tombstones
	waiters  []waiter          // SyncAlways appends waiting for fsync
	busy     map[*segEntry]int // segments with I/O running outside mu
	deferred []*segEntry       // removed while busy; closed when idle
	sealing  []*segEntry       // frozen, waiting for finishSeals
	clk      clock
	dirty    bool // index changed since the last checkpoint
	unsynced bool // bytes written or buffered since the last fsync
	// SyncInterval: syncT fires SyncInterval after the first write that
	// waits for an fsync (armSyncLocked), so that an idle store sets no
	// timer (a ticker per store woke a server with 100 idle replicated
	// streams 500 times a second); syncArmed while it is set.
	syncT     *time.Timer
	syncArmed bool
	rolls     int // segment rolls since the last checkpoint

	pending pendingCounts // NumPending's counts per filter (pending.go)

	// evicts: the limits can evict on an append (evictsOnAppend); admits:
	// they can refuse one (checkDiscardNewLocked). Derived once per limits
	// change, so that an append subject to neither pays one branch each.
	evicts, admits bool

	// synced is the last sequence an fsync of the active segment covered
	// (for Metrics' messages per fsync); lastCkpt when the last checkpoint
	// was written, or the store opened (for Stats).
	synced   uint64
	lastCkpt time.Time

	kick       chan struct{} // wakes the sync goroutine
	commits    uint64        // group commits done (fsyncs for SyncAlways appends)
	lastBatch  int           // appends the previous group commit released
	sealKick   chan struct{} // wakes it for frozen segments
	stop       chan struct{}
	wg         sync.WaitGroup
	ageT       *time.Timer
	report     RecoveryReport
	ckptOff    int64       // recovery: offset in the covered segment the checkpoint reached
	reserve    reservation // sequence reservation (reserve.go)
	reserveGen uint32      // generation of the reservation found at open
	ckptFloor  uint64      // last sequence of the checkpoint found at open, even a rejected one (recover.go)
	cutBase    uint64      // recovery: base of a newest segment removed as never written (recover.go)
	recount    bool        // recovery: the checkpoint's byte total was counted the version 1 way (recover.go)
	ckpt       *ckptInfo   // that checkpoint's contents, during recovery (checkHeadLocked)
	ckptMap    vfs.Mapping // the checkpoint the index was read from, in place (ckptload.go)
	closing    bool        // Close is writing its final checkpoint
	// ckptBusy: a checkpoint is being made durable with the lock released;
	// ckptIdle is signalled when it ends (ckptwrite.go).
	ckptBusy bool
	ckptIdle *sync.Cond
	// checkpointing: a periodic checkpoint's goroutine is running (spawn).
	checkpointing atomic.Bool
	opened        bool       // recovery is over: background work may start
	spare         spareState // the next roll's segment file (spare.go)
	// idleMark is last as the previous checkpoint tick found it
	// (releaseIdleBuffers).
	idleMark uint64
}

type segEntry struct {
	id  index.SegID
	seg *segment.Segment
}

var _ store.StreamStore = (*Store)(nil)

// MsgSize is how the store accounts a message's bytes, as nats-server's
// file store does (store.FileRecordSize).
func (s *Store) MsgSize(subject string, hdr, data []byte) uint64 {
	return store.FileRecordSize(subject, hdr, data)
}

// Open opens (creating if needed) the store in dir and recovers it.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	fs := opts.FS
	if err := vfs.MkdirAllSync(fs, dir, 0o750); err != nil {
		return nil, fmt.Errorf("wal: create %s: %w", dir, err)
	}
	if err := fs.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, fmt.Errorf("wal: sync %s: %w", filepath.Dir(dir), err)
	}
	var lk io.Closer
	var err error
	if opts.OuterLock {
		lk, err = vfs.Claim(fs, dir)
	} else {
		lk, err = fs.Lock(filepath.Join(dir, lockFile))
	}
	if err != nil {
		return nil, fmt.Errorf("wal: lock %s: %w", dir, err)
	}
	s := &Store{
		dir: dir, fs: fs, opts: opts, lock: lk,
		kick: make(chan struct{}, 1), sealKick: make(chan struct{}, 1), stop: make(chan struct{}),
		busy: map[*segEntry]int{},
	}
	s.setLimitsLocked(opts.Limits)
	s.reserve.step = reserveStep
	s.ckptIdle = sync.NewCond(&s.mu)
	began := time.Now()
	if err := s.openKey(); err != nil { // encrypt.go
		lk.Close()
		return nil, err
	}
	if err := s.recover(); err != nil {
		s.closeSegments()
		s.releaseCheckpointMap(true)
		lk.Close()
		return nil, err
	}
	s.report.Took = time.Since(began)
	s.synced, s.lastCkpt = s.last, time.Now()
	if s.opts.Sync == SyncInterval {
		s.syncT = time.NewTimer(s.opts.SyncInterval)
		s.syncT.Stop()
	}
	s.wg.Add(1)
	go s.background()
	s.mu.Lock()
	s.opened = true
	s.scheduleAgeLocked()
	if s.syncDueLocked() {
		s.armSyncLocked()
	}
	s.mu.Unlock()
	return s, nil
}

// Recovery returns what the last Open found and repaired.
func (s *Store) Recovery() RecoveryReport { return s.report }

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) segByID(id index.SegID) *segment.Segment {
	// Segments are few; a linear scan from the newest is fastest for the
	// common read of recent messages.
	for i := len(s.segs) - 1; i >= 0; i-- {
		if s.segs[i].id == id {
			return s.segs[i].seg
		}
	}
	return nil
}

// Sync makes everything appended so far durable.
func (s *Store) Sync() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	ws, err := s.syncLocked()
	s.unlockNotify(ws, nil)
	return err
}

// syncLocked flushes tombstones and the write buffer and fsyncs frozen
// segments and the active one while holding mu. It returns the waiters it made durable; the
// caller notifies them after unlocking.
func (s *Store) syncLocked() ([]waiter, error) {
	if s.werr != nil {
		return nil, s.werr
	}
	if err := s.writeTombsLocked(); err != nil {
		return nil, s.failLocked(err)
	}
	// Segments frozen by a roll are trimmed and fsynced in the background;
	// "everything appended so far" includes them.
	if err := s.finishSealsLocked(); err != nil {
		return nil, err
	}
	if err := s.opts.Metrics.timeFsync(s.active.seg.Sync); err != nil {
		return nil, s.failLocked(err)
	}
	s.syncedTo(s.last)
	s.unsynced = false
	return s.takeWaitersLocked(s.last), nil
}

// failLocked makes a write error sticky.
func (s *Store) failLocked(err error) error {
	if s.werr == nil {
		s.werr = fmt.Errorf("%w: %w", store.ErrWriteFailed, err)
	}
	return s.werr
}

// Close flushes, writes an index checkpoint and releases the store.
func (s *Store) Close() error {
	s.mu.Lock()
	// A reservation mark being written in the background ends first: Close
	// writes the final one, and closes the file, only once nothing else
	// does (reserve.go). Appends may go on meanwhile; Close syncs them.
	s.reserve.noAhead = true
	s.reserve.waitLocked(&s.mu)
	// So too a checkpoint being made durable in the background: from here
	// Close keeps the lock until the store is closed, so none starts again.
	for s.ckptBusy {
		s.ckptIdle.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	var (
		err   error
		ws    []waiter
		wserr error
	)
	if s.werr == nil {
		ws, err = s.syncLocked()
		if err == nil {
			s.closing = true // the checkpoint is not mapped: Close unmaps at once
			err = s.checkpointLocked()
		}
	}
	if rerr := s.closeReservationLocked(err == nil && s.werr == nil); err == nil {
		err = rerr
	}
	if err != nil {
		wserr = err
		ws = append(ws, s.takeAllWaitersLocked()...)
	}
	s.closed = true
	if s.ageT != nil {
		s.ageT.Stop()
	}
	s.unlockNotify(ws, wserr)
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	s.discardSpareLocked()
	s.closeSegments()
	s.releaseCheckpointMap(true)
	s.mu.Unlock()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

func (s *Store) closeSegments() {
	// A segment busy outside the lock (a Verify scanning it) is closed by
	// unbusyLocked when that ends, never under the reader.
	var busy []*segEntry
	for _, list := range [][]*segEntry{s.segs, s.deferred} {
		for _, e := range list {
			if s.busy[e] > 0 {
				busy = append(busy, e)
				continue
			}
			e.seg.Close()
		}
	}
	s.segs, s.deferred, s.active = nil, busy, nil
}

// Remove closes the store and deletes its directory.
func (s *Store) Remove() error {
	if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) && !errors.Is(err, store.ErrWriteFailed) {
		return err
	}
	if err := s.fs.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("wal: remove %s: %w", s.dir, err)
	}
	return s.fs.SyncDir(filepath.Dir(s.dir))
}

// background runs group commit (SyncAlways), interval syncs, and periodic
// checkpoints.
func (s *Store) background() {
	defer s.wg.Done()
	var tick <-chan time.Time
	if s.syncT != nil {
		defer s.syncT.Stop()
		tick = s.syncT.C
	}
	var ckpt <-chan time.Time
	if s.opts.CheckpointEvery > 0 {
		t := time.NewTicker(s.opts.CheckpointEvery)
		defer t.Stop()
		ckpt = t.C
	}
	var syncing atomic.Bool
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			s.groupCommit()
		case <-s.sealKick:
			s.finishSeals()
		case <-tick:
			s.mu.Lock()
			s.syncArmed = false
			s.mu.Unlock()
			if !s.spawn(&syncing, s.intervalSync) {
				// The last one still runs: look again an interval on.
				s.mu.Lock()
				s.armSyncLocked()
				s.mu.Unlock()
			}
		case <-ckpt:
			s.releaseIdleWindows()
			s.releaseIdleBuffers()
			s.spawn(&s.checkpointing, func() { s.periodicCheckpoint() })
		}
	}
}

// periodicCheckpoint syncs the store and checkpoints its index if it
// changed since the last checkpoint (every CheckpointEvery, and every
// checkpointRolls segment rolls). Most of what the sync has to write
// back (under SyncNever, up to CheckpointEvery's worth of appends) is
// synced first without the lock; then the sync of what came in meanwhile
// and the encoding of the checkpoint take one hold of the lock (the
// checkpoint claims what the sync made durable), and the checkpoint is made
// durable without it (ckptwrite.go).
func (s *Store) periodicCheckpoint() error {
	s.syncOutsideLock()
	s.mu.Lock()
	if s.closed || !s.dirty || s.werr != nil || s.ckptBusy {
		s.mu.Unlock()
		return nil
	}
	ws, err := s.syncLocked()
	var j *ckptJob
	if err == nil {
		j, err = s.beginCheckpointLocked()
	}
	s.unlockNotify(ws, nil)
	if err != nil {
		return err
	}
	ferr := s.finishCheckpoint(j)
	if ferr == nil {
		j.m = s.mapCheckpoint(j) // adopted under mu (adoptCheckpoint)
	}
	s.mu.Lock()
	err = s.endCheckpointLocked(j, ferr)
	s.mu.Unlock()
	j.unmapOld()
	return err
}

// spawn runs fn on a goroutine of its own unless the one started before
// through running is still at work: the interval sync and the periodic
// checkpoint wait for fsyncs, and the group commits and seals on the
// background goroutine must not wait behind them.
func (s *Store) spawn(running *atomic.Bool, fn func()) bool {
	if !running.CompareAndSwap(false, true) {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer running.Store(false)
		fn()
	}()
	return true
}
