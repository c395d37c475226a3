package consumerstate

import (
	"container/list"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/vfs"
)

// Consumer is the stored state of one durable consumer: its config and its
// State, kept in obs/<name>/ as a snapshot plus an append log of the
// operations since (see doc.go).
//
// All methods are safe for concurrent use.
//
// Locking: mu guards the in-memory state; fmu serialises file I/O and
// guards the file fields. A flush holds fmu for its whole duration and takes
// mu only to collect the changes to write, so Update never waits for a disk.
// Lock order: fmu before mu.
type Consumer struct {
	store *Store
	name  string
	dir   string
	fs    vfs.FS

	// queued is set while the consumer is on its store's dirty list.
	queued atomic.Bool
	// lruElem is the consumer's place in its store's log cache, nil while
	// its log is closed there. Guarded by the cache's mu.
	lruElem *list.Element

	mu struct {
		sync.Mutex
		state  State
		jrnl   journal // state.journal points here; jrnl.ops is the version
		cfg    []byte
		closed bool
	}

	fmu struct {
		sync.Mutex
		log      vfs.File // nil while the store's log cache has it closed (logcache.go)
		logDirty bool     // bytes written to the log since its last fsync
		logPath  string
		logSize  int64
		gen      uint64 // generation of state.dat and of the log
		snapSize int64
		written  uint64 // version whose changes are in the files
		synced   uint64 // version whose changes are durable
		failed   error  // sticky: set by a failed write or fsync
		closed   bool   // files closed
		// materialized is false while the consumer exists only in its
		// store's catalogue: no directory yet (log nil, gen 0). The first
		// flush of a change writes the directory (materializeLocked).
		materialized bool
		spare        []byte // the journal's next buffer
		recBuf       []byte
		sealBuf      []byte // a record's sealed payload (Options.Key)
		digest       *xxhash.Digest
		recovery     Recovery
	}
}

// Recovery describes what Load found when it opened a consumer.
type Recovery struct {
	// Generation is the snapshot generation the state was rebuilt from.
	Generation uint64
	// LogFile is the log that was replayed.
	LogFile string
	// LogRecords is the number of log records replayed on the snapshot.
	LogRecords int
	// TornOffset and TornBytes locate a torn log tail that was cut off: the
	// remains of a flush a crash interrupted (TornBytes 0: none).
	TornOffset int64
	TornBytes  int64
	// Removed lists leftover files removed (stale logs, unfinished
	// snapshots or config updates).
	Removed []string
	// Damaged lists damaged stretches of the log that good records
	// followed (bit rot, not a crash): their changes are lost. The records
	// after them were replayed where they still applied; SkippedOps counts
	// the operations that no longer did. A consumer loaded with damage is
	// checkpointed at once, so the damaged log is retired.
	Damaged    []Damage
	SkippedOps int
}

// Damage locates a damaged stretch of a consumer state file.
type Damage struct {
	File   string
	Offset int64
	Bytes  int64
}

func (d Damage) String() string {
	return fmt.Sprintf("%s: offset %d: %d damaged bytes", d.File, d.Offset, d.Bytes)
}

// Name is the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Dir is the consumer's directory.
func (c *Consumer) Dir() string { return c.dir }

// Config returns a copy of the consumer's config JSON.
func (c *Consumer) Config() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.mu.cfg...)
}

// UpdateConfig durably replaces the consumer's config (meta.inf and
// meta.sum, or, while the consumer has no directory, with an update record
// of the catalogue). A crash leaves the old or the new config, never a mix.
func (c *Consumer) UpdateConfig(cfg []byte) error {
	if !json.Valid(cfg) {
		return fmt.Errorf("consumer %s: %w", c.name, ErrInvalidConfig)
	}
	if done, err := c.store.updateInCatalog(c, cfg); done {
		return err
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.closed {
		return fmt.Errorf("consumer %s: %w", c.name, ErrClosed)
	}
	if !c.fmu.materialized {
		// Not in the catalogue (updateInCatalog declined): write its
		// directory with the new config.
		c.mu.Lock()
		old := c.mu.cfg
		c.mu.cfg = append([]byte(nil), cfg...)
		c.mu.Unlock()
		if err := c.materializeLocked(); err != nil {
			c.mu.Lock()
			c.mu.cfg = old
			c.mu.Unlock()
			return err
		}
		return nil
	}
	stored, err := c.store.seal.sealMeta(c.name, cfg)
	if err != nil {
		return fmt.Errorf("consumer %s: update config: %w", c.name, err)
	}
	if err := updateMeta(c.fs, c.dir, stored); err != nil {
		return fmt.Errorf("consumer %s: update config: %w", c.name, err)
	}
	c.mu.Lock()
	c.mu.cfg = append([]byte(nil), cfg...)
	c.mu.Unlock()
	return nil
}

// Update runs f on the consumer's state under its lock. Changes f makes
// through State's methods mark the consumer dirty; it is flushed within the
// sync policy's interval, or at the next Flush. f must not keep s, call
// other methods of c, or block.
//
// Replacing the whole state (*s = other) is allowed and makes the next
// flush write a snapshot; changing s.Pending or s.Redelivered directly is
// not (use SetState).
func (c *Consumer) Update(f func(s *State)) error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return fmt.Errorf("consumer %s: %w", c.name, ErrClosed)
	}
	before := c.mu.jrnl.ops
	f(&c.mu.state)
	if c.mu.state.journal != &c.mu.jrnl {
		c.resetStateLocked()
	}
	changed := c.mu.jrnl.ops != before
	c.mu.Unlock()
	if changed && c.queued.CompareAndSwap(false, true) {
		c.store.enqueue(c)
	}
	return nil
}

// SetState replaces the consumer's state with a copy of st (for example one
// restored from elsewhere). st must pass Verify. The next flush writes a
// snapshot.
func (c *Consumer) SetState(st *State) error {
	if err := st.Verify(); err != nil {
		return fmt.Errorf("consumer %s: set state: %w", c.name, err)
	}
	return c.Update(func(s *State) { *s = st.Clone() })
}

// resetStateLocked reattaches the journal after the state was replaced and
// forces a snapshot. Called with mu held.
func (c *Consumer) resetStateLocked() {
	c.mu.state.journal = &c.mu.jrnl
	c.mu.state.indexed = false
	c.mu.jrnl.take(c.mu.jrnl.buf)
	c.mu.jrnl.overflow = true
	c.mu.jrnl.ops++
}

// Snapshot returns a deep copy of the consumer's state.
func (c *Consumer) Snapshot() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.state.Clone()
}

// Flush makes every change made so far durable and returns when it is.
// The JetStream layer calls it before confirming an ack the client asked
// to have confirmed. Concurrent callers share flushes: a caller whose
// changes were made durable by another caller's fsync returns without one
// of its own.
func (c *Consumer) Flush() error { return c.persist(true) }

// Write hands every change made so far to the operating system, without
// an fsync, and returns when it has: a process crash keeps the changes, a
// power loss may not. Under the interval and never policies the JetStream
// layer calls it before confirming an ack. Concurrent callers share writes
// as they share Flush's fsyncs.
func (c *Consumer) Write() error { return c.persist(false) }

// persist writes (and with doSync fsyncs) the changes made so far, unless
// an earlier call already covered them.
func (c *Consumer) persist(doSync bool) error {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return fmt.Errorf("consumer %s: %w", c.name, ErrClosed)
	}
	v := c.mu.jrnl.ops
	c.mu.Unlock()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	done := c.fmu.written
	if doSync {
		done = c.fmu.synced
	}
	if c.fmu.failed == nil && done >= v {
		return nil
	}
	return c.flushLocked(doSync, false)
}

// Checkpoint writes a compacted snapshot of the state now and makes it
// durable, replacing the log.
func (c *Consumer) Checkpoint() error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.closed {
		return fmt.Errorf("consumer %s: %w", c.name, ErrClosed)
	}
	return c.flushLocked(true, true)
}

// closeCheckpoint is Close's flush: a snapshot when the log holds records
// or changes are pending, else at most an fsync of what was written.
func (c *Consumer) closeCheckpoint() error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.closed {
		return nil
	}
	c.mu.Lock()
	pending := c.mu.jrnl.ops != c.fmu.written
	c.mu.Unlock()
	return c.flushLocked(true, pending || c.fmu.logSize > logHeaderSize)
}

// Recovery reports what opening the consumer found.
func (c *Consumer) Recovery() Recovery {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	r := c.fmu.recovery
	r.Removed = append([]string(nil), r.Removed...)
	return r
}

// flush is the batch flusher's entry point.
func (c *Consumer) flush(doSync bool) error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.closed {
		return nil
	}
	return c.flushLocked(doSync, false)
}

// compactThresholdLocked is the log size past which a flush writes a
// snapshot instead. Called with fmu held.
func (c *Consumer) compactThresholdLocked() int64 {
	t := c.store.opts.CompactBytes
	if t < 0 {
		return 0
	}
	return max(t, 2*c.fmu.snapSize)
}

// flushLocked writes the changes made since the last flush: as one log
// record, or as a new snapshot when the log has grown past its threshold,
// the journal overflowed, or force is set. Called with fmu held.
func (c *Consumer) flushLocked(doSync, force bool) error {
	if c.fmu.failed != nil {
		return c.fmu.failed
	}
	if c.fmu.closed {
		return fmt.Errorf("consumer %s: %w", c.name, ErrClosed)
	}
	if !c.fmu.materialized {
		c.mu.Lock()
		clean := c.mu.jrnl.ops == c.fmu.written
		c.mu.Unlock()
		if clean && !force {
			return nil // the catalogue's record is the consumer
		}
		return c.materializeLocked()
	}
	thresh := c.compactThresholdLocked()
	c.mu.Lock()
	v := c.mu.jrnl.ops
	if v == c.fmu.written && !force {
		c.mu.Unlock()
		if doSync && c.fmu.synced < c.fmu.written {
			log, err := c.logLocked()
			if err != nil {
				return c.fail(err)
			}
			if err := log.Sync(); err != nil {
				return c.fail(fmt.Errorf("%s: sync: %w", c.fmu.logPath, err))
			}
			c.fmu.synced, c.fmu.logDirty = c.fmu.written, false
		}
		return nil
	}
	j := &c.mu.jrnl
	snap := force || thresh == 0 || j.overflow ||
		c.fmu.logSize+recHeaderSize+int64(len(j.buf)) > thresh
	var payload []byte
	var sb *snapBuffer
	if snap {
		sb = c.store.getSnapBuffer()
		sb.buf = sb.enc.appendEncoded(sb.buf[:0], &c.mu.state, c.fmu.gen+1)
		j.take(j.buf)
	} else {
		payload = j.take(c.fmu.spare)
	}
	c.mu.Unlock()

	if snap {
		stored := sb.buf
		var err error
		if c.store.seal.on() {
			sb.sealed, err = c.store.seal.sealSnapshot(sb.sealed[:0], sb.buf, c.name)
			stored = sb.sealed
		}
		var cleanupErr error
		if err == nil {
			cleanupErr, err = c.writeSnapshotLocked(stored)
		}
		c.store.putSnapBuffer(sb)
		if err != nil {
			return c.fail(err)
		}
		c.fmu.written, c.fmu.synced = v, v
		c.setJournalLimit()
		if cleanupErr != nil {
			return fmt.Errorf("consumer %s: %w", c.name, cleanupErr)
		}
		return nil
	}
	err := c.appendLogLocked(payload, doSync)
	c.fmu.spare = payload[:0]
	if err != nil {
		return c.fail(err)
	}
	c.fmu.written = v
	if doSync {
		c.fmu.synced = v
	} else {
		c.store.markUnsynced(c)
	}
	return nil
}

// setJournalLimit sizes the journal to the compaction threshold: a journal
// larger than that would be written as a snapshot anyway. Called with fmu
// held.
func (c *Consumer) setJournalLimit() {
	limit := int(c.compactThresholdLocked())
	c.mu.Lock()
	c.mu.jrnl.limit = limit
	c.mu.Unlock()
}

// fail makes err sticky. Called with fmu held.
func (c *Consumer) fail(err error) error {
	c.fmu.failed = fmt.Errorf("consumer %s: %w: %w", c.name, ErrWriteFailed, err)
	return c.fmu.failed
}

// appendLogLocked appends one record holding payload to the log. Called
// with fmu held.
func (c *Consumer) appendLogLocked(payload []byte, doSync bool) error {
	log, err := c.logLocked()
	if err != nil {
		return err
	}
	if c.store.seal.on() {
		c.fmu.sealBuf, err = c.store.seal.seal(c.fmu.sealBuf[:0], payload, logAD(c.name, c.fmu.gen, c.fmu.logSize))
		if err != nil {
			return fmt.Errorf("%s: offset %d: seal: %w", c.fmu.logPath, c.fmu.logSize, err)
		}
		payload = c.fmu.sealBuf
	}
	c.fmu.recBuf = appendRecord(c.fmu.recBuf[:0], c.fmu.digest, c.fmu.gen, c.fmu.logSize, payload)
	c.fmu.logDirty = true
	if _, err := log.WriteAt(c.fmu.recBuf, c.fmu.logSize); err != nil {
		return fmt.Errorf("%s: offset %d: write: %w", c.fmu.logPath, c.fmu.logSize, err)
	}
	if doSync {
		if err := log.Sync(); err != nil {
			return fmt.Errorf("%s: sync: %w", c.fmu.logPath, err)
		}
		c.fmu.logDirty = false
	}
	c.fmu.logSize += int64(len(c.fmu.recBuf))
	return nil
}

// writeSnapshotLocked replaces state.dat with snap (already stamped with
// generation gen+1) and starts the empty log of the new generation:
//
//	write state.dat.tmp, fsync; create state-<gen+1>.log with its header
//	(not fsynced: its first synced append makes the header durable, and
//	until then a crash leaves a log that reads as empty); rename
//	state.dat.tmp to state.dat; fsync the directory; remove the old log.
//
// Until the directory fsync the old snapshot and log describe the state;
// after it the new ones do. The old log's removal is cleanup: if a crash
// undoes it, Load removes the log as stale. A failure there is returned as
// cleanupErr and is not sticky. Called with fmu held.
func (c *Consumer) writeSnapshotLocked(snap []byte) (cleanupErr, err error) {
	gen := c.fmu.gen + 1
	tmp := filepath.Join(c.dir, stateTmpFile)
	if err := writeFile(c.fs, tmp, snap); err != nil {
		return nil, err
	}
	logPath := filepath.Join(c.dir, logName(gen))
	lf, err := createLog(c.fs, logPath, gen, false, c.store.seal.on())
	if err != nil {
		return nil, err
	}
	if err := c.fs.Rename(tmp, filepath.Join(c.dir, stateFile)); err != nil {
		lf.Close()
		return nil, err
	}
	if err := c.fs.SyncDir(c.dir); err != nil {
		lf.Close()
		return nil, fmt.Errorf("%s: sync dir: %w", c.dir, err)
	}
	old, oldPath := c.fmu.log, c.fmu.logPath
	c.fmu.log, c.fmu.logPath, c.fmu.logSize = lf, logPath, logHeaderSize
	c.fmu.logDirty = true // the header, until the first synced append
	c.fmu.gen, c.fmu.snapSize = gen, int64(len(snap))
	c.store.logs.use(c)
	if old != nil {
		if err := old.Close(); err != nil {
			cleanupErr = fmt.Errorf("%s: close: %w", oldPath, err)
		}
	}
	// The old log is removed whether or not the log cache had closed it.
	if oldPath != "" {
		if err := c.fs.Remove(oldPath); err != nil && cleanupErr == nil {
			cleanupErr = fmt.Errorf("remove stale log: %w", err)
		}
	}
	return cleanupErr, nil
}

// createLog creates an empty log of generation gen (flagged sealed when
// its records will be), synced if doSync, and returns it open for
// appending. It does not sync the directory.
func createLog(fsys vfs.FS, path string, gen uint64, doSync, sealed bool) (vfs.File, error) {
	f, err := fsys.Create(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(logHeader(gen, sealed), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: write header: %w", path, err)
	}
	if doSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: sync: %w", path, err)
		}
	}
	return f, nil
}

// shutdown stops accepting updates and closes the consumer's files.
func (c *Consumer) markClosed() {
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
}

func (c *Consumer) closeFiles() error {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.closed {
		return nil
	}
	c.fmu.closed = true
	c.store.logs.forget(c)
	if c.fmu.log == nil {
		return nil
	}
	if err := c.fmu.log.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", c.fmu.logPath, err)
	}
	return nil
}
