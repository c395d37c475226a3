package consumerstate

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// recovered is what reading a consumer directory found, before any repair.
type recovered struct {
	meta     metaPlan
	state    *State
	gen      uint64
	snapSize int64
	logPath  string
	logFound bool
	log      parsedLog
	logSize  int64    // size of the log file as found
	stale    []string // leftover files to remove
	// skippedOps counts salvaged operations that no longer applied after
	// damage; -1: the records after the damage were dropped whole.
	skippedOps int
}

// readConsumer reads and checks everything in a consumer directory without
// changing it: config (resolving an interrupted update), snapshot, and the
// log of the snapshot's generation replayed on top. Damage anywhere except
// a torn log tail is an error wrapping ErrCorrupt naming file and offset.
//
// Its files are opened through o (seal.go). Read without a key (o.lax,
// Check) a sealed consumer is checked by its checksums only: its state
// is nil and its log records are not replayed.
func readConsumer(fsys vfs.FS, dir string, o opener) (*recovered, error) {
	plan, err := resolveMeta(fsys, dir, o)
	if err != nil {
		return nil, err
	}
	r := &recovered{meta: plan}
	statePath := filepath.Join(dir, stateFile)
	data, err := readFile(fsys, statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, corruptf("%s: missing", statePath)
	}
	if err != nil {
		return nil, err
	}
	name := filepath.Base(dir)
	st, gen, err := decodeSnapshot(data, o, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", statePath, err)
	}
	r.state, r.gen, r.snapSize = st, gen, int64(len(data))

	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == stateTmpFile {
			r.stale = append(r.stale, filepath.Join(dir, name))
			continue
		}
		if g, ok := parseLogName(name); ok && g != gen {
			r.stale = append(r.stale, filepath.Join(dir, name))
		}
	}

	r.logPath = filepath.Join(dir, logName(gen))
	logData, err := readFile(fsys, r.logPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A crash can keep the snapshot's rename but not the new log's
		// creation; the new log was empty then.
		return r, nil
	case err != nil:
		return nil, err
	}
	r.logFound, r.logSize = true, int64(len(logData))
	r.log, err = parseLog(logData, gen, r.logPath, o, name)
	if err != nil {
		return nil, err
	}
	if st == nil || r.log.opaque {
		return r, nil // sealed, read without a key: structure only
	}
	var prefix *State // the state before the first damaged stretch
	for _, rec := range r.log.records {
		if !rec.afterDamage {
			if err := replay(st, rec.payload, rec.off+recHeaderSize); err != nil {
				return nil, fmt.Errorf("%s: record at offset %d: %w", r.logPath, rec.off, err)
			}
			continue
		}
		if prefix == nil {
			if err := st.Verify(); err != nil {
				return nil, fmt.Errorf("%s: state before damage: %w: %w", r.logPath, ErrCorrupt, err)
			}
			c := st.Clone()
			prefix = &c
		}
		r.skippedOps += replaySalvage(st, rec.payload, rec.off+recHeaderSize)
	}
	if err := st.Verify(); err != nil {
		if prefix == nil {
			return nil, fmt.Errorf("%s: state after replay: %w: %w", r.logPath, ErrCorrupt, err)
		}
		// What followed the damage does not fit together: keep the state
		// as it stood before it.
		*st = *prefix
		r.skippedOps = -1
	}
	return r, nil
}

// repair makes the directory match what readConsumer found: finishes or
// undoes a config update, removes stale files, cuts a torn log tail and
// creates a missing log. It returns the log open for appending.
func (r *recovered) repair(fsys vfs.FS, dir string, sealed bool) (vfs.File, Recovery, error) {
	rec := Recovery{Generation: r.gen, LogFile: r.logPath, LogRecords: len(r.log.records), Damaged: r.log.damaged, SkippedOps: r.skippedOps}
	if err := r.meta.apply(fsys, dir); err != nil {
		return nil, rec, err
	}
	rec.Removed = append(rec.Removed, r.meta.removes...)
	for _, p := range r.stale {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, rec, err
		}
		rec.Removed = append(rec.Removed, p)
	}
	if !r.logFound || r.log.end < logHeaderSize {
		f, err := createLog(fsys, r.logPath, r.gen, true, sealed)
		if err != nil {
			return nil, rec, err
		}
		if err := fsys.SyncDir(dir); err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("%s: sync dir: %w", dir, err)
		}
		r.log.end = logHeaderSize
		rec.TornBytes = r.logSize
		return f, rec, nil
	}
	f, err := fsys.OpenRW(r.logPath)
	if err != nil {
		return nil, rec, err
	}
	if r.log.end < r.logSize {
		rec.TornOffset, rec.TornBytes = r.log.end, r.logSize-r.log.end
		if err := f.Truncate(r.log.end); err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("%s: cut torn tail at offset %d: %w", r.logPath, r.log.end, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, rec, fmt.Errorf("%s: sync: %w", r.logPath, err)
		}
	}
	return f, rec, nil
}

// loadConsumer opens the consumer in dir, repairing what a crash left.
func loadConsumer(s *Store, name, dir string) (*Consumer, error) {
	r, err := readConsumer(s.fs, dir, opener{key: s.opts.Key})
	if err != nil {
		return nil, err
	}
	f, rec, err := r.repair(s.fs, dir, s.seal.on())
	if err != nil {
		return nil, err
	}
	c := newConsumer(s, name, dir, r.meta.cfg, r.state, f, r.logPath, r.log.end, r.gen, r.snapSize, rec)
	if len(rec.Damaged) > 0 {
		// Retire the damaged log: a snapshot of what was recovered
		// replaces it (the damage stays in Recovery for the caller to
		// report).
		if err := c.Checkpoint(); err != nil {
			c.closeFiles()
			return nil, fmt.Errorf("%s: checkpoint after damage: %w", dir, err)
		}
	}
	return c, nil
}

// newConsumer assembles an open consumer.
func newConsumer(s *Store, name, dir string, cfg []byte, st *State, log vfs.File, logPath string,
	logSize int64, gen uint64, snapSize int64, rec Recovery) *Consumer {
	c := &Consumer{store: s, name: name, dir: dir, fs: s.fs}
	c.mu.state = *st
	c.mu.state.journal = &c.mu.jrnl
	c.mu.cfg = cfg
	c.fmu.log, c.fmu.logPath, c.fmu.logSize = log, logPath, logSize
	c.fmu.gen, c.fmu.snapSize = gen, snapSize
	c.fmu.digest = xxhash.New()
	c.fmu.recovery = rec
	c.fmu.materialized = true
	c.mu.jrnl.limit = int(c.compactThresholdLocked())
	if log != nil {
		s.logs.use(c) // repair left it synced: the cache may close it
	}
	return c
}

// Check verifies consumer state on disk without changing anything: every
// consumer directory under an obs directory, or dir itself if it is a
// consumer directory (it holds meta.inf or state.dat). It returns nil, or
// every problem found joined, each wrapping ErrCorrupt (or the I/O error)
// and naming its file and offset. A torn log tail is not a problem: it is
// what a crash leaves, and opening the consumer cuts it off.
//
// Without a key, the files of encrypted consumer state (Options.Key) are
// checked by their checksums and structure only; CheckKey opens them too.
func Check(dir string, fsys vfs.FS) error {
	return check(dir, fsys, opener{lax: true})
}

// CheckKey is Check with the stream's data key: every sealed value is
// opened and the state checked as Load would, and a value that does not
// open is reported as damage. With a nil key it is Check.
func CheckKey(dir string, fsys vfs.FS, key *crypt.DataKey) error {
	return check(dir, fsys, opener{key: key, lax: key == nil})
}

func check(dir string, fsys vfs.FS, o opener) error {
	if fsys == nil {
		fsys = vfs.Default
	}
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == metaFile || n == stateFile {
			return checkOne(fsys, dir, o)
		}
	}
	var errs []error
	if err := checkCatalog(fsys, dir, o); err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			continue
		}
		p := filepath.Join(dir, n)
		fi, err := fsys.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.IsDir {
			continue
		}
		if err := checkOne(fsys, p, o); err != nil {
			errs = append(errs, fmt.Errorf("consumer %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// checkOne checks one consumer directory: a damaged stretch that good
// records follow is a problem even though opening the consumer salvages
// around it.
func checkOne(fsys vfs.FS, dir string, o opener) error {
	r, err := readConsumer(fsys, dir, o)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range r.log.damaged {
		errs = append(errs, fmt.Errorf("%w: %s: damaged log record followed by good ones (its changes are lost)", ErrCorrupt, d))
	}
	return errors.Join(errs...)
}
