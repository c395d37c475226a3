package consumerstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// Store keeps the consumers of one stream, one directory each under the
// stream's obs directory, and flushes the dirty ones in batches.
//
// All methods are safe for concurrent use.
//
// Locking: dirMu serialises the operations that change the obs directory
// (Create, Load, Delete, Close); mu guards the consumer table and the dirty
// list and is never held during I/O. Lock order: dirMu, then a consumer's
// fmu, then its mu, then Store.mu.
type Store struct {
	dir  string
	opts Options // with defaults filled in
	fs   vfs.FS
	seal *sealer // Options.Key's (seal.go)

	dirMu sync.Mutex
	cat   catalog // guarded by dirMu

	mu struct {
		sync.Mutex
		consumers map[string]*Consumer
		dirty     []*Consumer
		// inflight counts, per consumer, the background flushes that took
		// it off the dirty list and have not finished.
		inflight map[*Consumer]int
		// unsynced holds consumers a background flush wrote without
		// fsyncing (ModeNever).
		unsynced map[*Consumer]struct{}
		timer    *time.Timer
		armed    bool // timer is set to fire
		closed   bool
		bgErr    error // first error of a background flush
	}
	// bg counts running background flushes, for Close.
	bg sync.WaitGroup
	// snapBuffers holds *snapBuffer scratch for encoding snapshots, shared
	// by all consumers so that each does not keep O(pending) spare memory.
	snapBuffers sync.Pool
	// logs caps the consumers' open log files (logcache.go).
	logs logCache
}

// snapBuffer is scratch space for writing one snapshot.
type snapBuffer struct {
	enc    encoder
	buf    []byte
	sealed []byte // buf sealed (Options.Key)
}

func (s *Store) getSnapBuffer() *snapBuffer {
	if b, ok := s.snapBuffers.Get().(*snapBuffer); ok {
		return b
	}
	return &snapBuffer{}
}

func (s *Store) putSnapBuffer(b *snapBuffer) { s.snapBuffers.Put(b) }

// Open opens (creating if needed) the obs directory of one stream. It
// removes the remains of Create and Delete calls a crash interrupted;
// consumers themselves are opened by Load.
func Open(obsDir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Store{dir: obsDir, opts: opts, fs: opts.FS, seal: &sealer{key: opts.Key}}
	s.logs.max = opts.MaxOpenLogs
	s.mu.consumers = make(map[string]*Consumer)
	s.mu.inflight = make(map[*Consumer]int)
	s.mu.unsynced = make(map[*Consumer]struct{})
	if err := mkdirAllDurable(s.fs, obsDir); err != nil {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	names, err := s.fs.ReadDir(obsDir)
	if err != nil {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	removed := false
	for _, n := range names {
		if strings.HasPrefix(n, tmpDirPrefix) || strings.HasPrefix(n, delDirPrefix) {
			if err := s.fs.RemoveAll(filepath.Join(obsDir, n)); err != nil {
				return nil, fmt.Errorf("consumerstate: remove leftover: %w", err)
			}
			removed = true
		}
	}
	if removed {
		if err := s.fs.SyncDir(obsDir); err != nil {
			return nil, fmt.Errorf("consumerstate: %s: sync dir: %w", obsDir, err)
		}
	}
	if err := s.openCatalog(); err != nil {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	return s, nil
}

// mkdirAllDurable creates dir and its missing parents and syncs the parent
// of each directory it created, so the whole path survives a crash.
func mkdirAllDurable(fsys vfs.FS, dir string) error {
	dir = filepath.Clean(dir)
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := vfs.MkdirAllSync(fsys, dir, 0o750); err != nil {
		return err
	}
	for _, d := range created {
		parent := filepath.Dir(d)
		if err := fsys.SyncDir(parent); err != nil {
			return fmt.Errorf("%s: sync dir: %w", parent, err)
		}
	}
	return nil
}

// Dir is the obs directory.
func (s *Store) Dir() string { return s.dir }

// SyncPolicy is the store's sync policy, with defaults filled in.
func (s *Store) SyncPolicy() SyncPolicy { return s.opts.Sync }

// validName reports whether name can be a consumer directory: a NATS
// consumer name (no whitespace, '.', '*', '>', or path separators).
func validName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for _, r := range name {
		switch {
		case r <= ' ', r == 0x7f, r == '.', r == '*', r == '>', r == '/', r == '\\':
			return false
		}
	}
	return true
}

func (s *Store) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return fmt.Errorf("consumerstate: %s: %w", s.dir, ErrClosed)
	}
	return nil
}

// Create creates consumer name with config cfg (JSON, stored verbatim in
// meta.inf) and an empty state. It appends one record to the catalogue
// (obs/catalog.log) and fsyncs it: when Create returns the consumer exists
// durably, under every sync policy. Its directory is written when its
// state first changes, by the flush that writes the change (see doc.go).
func (s *Store) Create(name string, cfg []byte) (*Consumer, error) {
	if !validName(name) {
		return nil, fmt.Errorf("consumerstate: %q: %w", name, ErrInvalidName)
	}
	if !json.Valid(cfg) {
		return nil, fmt.Errorf("consumerstate: consumer %s: %w", name, ErrInvalidConfig)
	}
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	_, open := s.mu.consumers[name]
	s.mu.Unlock()
	if open || s.cat.live[name] {
		return nil, fmt.Errorf("consumerstate: consumer %s: %w", name, ErrExists)
	}
	final := filepath.Join(s.dir, name)
	if _, err := s.fs.Stat(final); err == nil {
		return nil, fmt.Errorf("consumerstate: consumer %s: %w", name, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	if _, err := s.appendCatalog(catalogPayload(catOpCreate, name, cfg), false); err != nil {
		return nil, fmt.Errorf("consumerstate: create consumer %s: %w", name, err)
	}
	s.cat.live[name] = true
	c := newConsumer(s, name, final, append([]byte(nil), cfg...), &State{}, nil, "", 0, 0, 0,
		Recovery{Generation: 1})
	c.fmu.materialized = false
	s.mu.Lock()
	s.mu.consumers[name] = c
	s.mu.Unlock()
	return c, nil
}

// Load opens consumer name, rebuilding its state from its snapshot and
// log and repairing what a crash left behind (see Consumer.Recovery). A
// consumer already open is returned as is. Damaged files are reported with
// an error wrapping ErrCorrupt that names the file and offset.
func (s *Store) Load(name string) (*Consumer, error) {
	if !validName(name) {
		return nil, fmt.Errorf("consumerstate: %q: %w", name, ErrInvalidName)
	}
	s.mu.Lock()
	c := s.mu.consumers[name]
	s.mu.Unlock()
	if c != nil {
		return c, nil
	}
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	c = s.mu.consumers[name]
	s.mu.Unlock()
	if c != nil {
		return c, nil
	}
	dir := filepath.Join(s.dir, name)
	if cfg, ok := s.cat.unloaded[name]; ok {
		// Created through the catalogue, no directory yet.
		c = newConsumer(s, name, dir, cfg, &State{}, nil, "", 0, 0, 0, Recovery{Generation: 1})
		c.fmu.materialized = false
		delete(s.cat.unloaded, name)
		s.mu.Lock()
		s.mu.consumers[name] = c
		s.mu.Unlock()
		return c, nil
	}
	if fi, err := s.fs.Stat(dir); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir) {
		return nil, fmt.Errorf("consumerstate: consumer %s: %w", name, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	c, err := loadConsumer(s, name, dir)
	if err != nil {
		return nil, fmt.Errorf("consumerstate: load consumer %s: %w", name, err)
	}
	s.mu.Lock()
	s.mu.consumers[name] = c
	s.mu.Unlock()
	return c, nil
}

// List returns the names of the consumers, sorted: those with a
// directory and those created whose directory is not written yet.
func (s *Store) List() ([]string, error) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("consumerstate: %w", err)
	}
	out := names[:0]
	for _, n := range names {
		if !validName(n) || s.cat.live[n] {
			continue
		}
		if fi, err := s.fs.Stat(filepath.Join(s.dir, n)); err == nil && fi.IsDir {
			out = append(out, n)
		}
	}
	for n := range s.cat.live {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// Delete removes consumer name and its files. An open Consumer for it
// stops working (ErrClosed). It is atomic: the directory is renamed to
// obs/.del-<name>, the rename made durable, then removed.
func (s *Store) Delete(name string) error {
	if !validName(name) {
		return fmt.Errorf("consumerstate: %q: %w", name, ErrInvalidName)
	}
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.mu.Lock()
	c := s.mu.consumers[name]
	delete(s.mu.consumers, name)
	delete(s.mu.unsynced, c)
	s.mu.Unlock()
	var closeErr error
	if c != nil {
		c.markClosed()
		closeErr = c.closeFiles()
	}
	inCatalog := s.cat.live[name]
	delete(s.cat.unloaded, name)
	if inCatalog {
		// The delete record comes first: from then on a crash removes the
		// directory at the next Open, if it got one.
		delete(s.cat.live, name)
		if _, err := s.appendCatalog(catalogPayload(catOpDelete, name, nil), true); err != nil {
			s.cat.live[name] = true
			return fmt.Errorf("consumerstate: delete consumer %s: %w", name, err)
		}
	}
	final := filepath.Join(s.dir, name)
	if _, err := s.fs.Stat(final); errors.Is(err, fs.ErrNotExist) {
		if inCatalog {
			return closeErr
		}
		return fmt.Errorf("consumerstate: consumer %s: %w", name, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("consumerstate: %w", err)
	}
	del := filepath.Join(s.dir, delDirPrefix+name)
	err := s.fs.RemoveAll(del)
	if err == nil {
		err = s.fs.Rename(final, del)
	}
	if err == nil {
		if err = s.fs.SyncDir(s.dir); err != nil {
			err = fmt.Errorf("%s: sync dir: %w", s.dir, err)
		}
	}
	if err == nil {
		err = s.fs.RemoveAll(del)
	}
	if err != nil {
		return fmt.Errorf("consumerstate: delete consumer %s: %w", name, err)
	}
	return closeErr
}

// enqueue puts a newly dirty consumer on the dirty list and arms the
// background flush.
func (s *Store) enqueue(c *Consumer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return
	}
	s.mu.dirty = append(s.mu.dirty, c)
	if s.mu.armed {
		return
	}
	s.mu.armed = true
	if s.mu.timer == nil {
		s.mu.timer = time.AfterFunc(s.opts.Sync.Interval, s.backgroundFlush)
	} else {
		s.mu.timer.Reset(s.opts.Sync.Interval)
	}
}

// takeDirty empties the dirty list. Called with mu held.
func (s *Store) takeDirtyLocked() []*Consumer {
	list := s.mu.dirty
	s.mu.dirty = nil
	for _, c := range list {
		c.queued.Store(false)
	}
	return list
}

// backgroundFlush runs when the sync interval after a consumer became dirty
// has passed.
func (s *Store) backgroundFlush() {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return
	}
	s.mu.armed = false
	list := s.takeDirtyLocked()
	for _, c := range list {
		s.mu.inflight[c]++
	}
	s.bg.Add(1)
	s.mu.Unlock()
	defer s.bg.Done()
	err := s.flushBatch(list, s.opts.Sync.Mode != ModeNever)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range list {
		if s.mu.inflight[c]--; s.mu.inflight[c] <= 0 {
			delete(s.mu.inflight, c)
		}
	}
	if err != nil && s.mu.bgErr == nil {
		s.mu.bgErr = err
	}
}

// markUnsynced records that c has written changes that are not yet
// durable.
func (s *Store) markUnsynced(c *Consumer) {
	s.mu.Lock()
	s.mu.unsynced[c] = struct{}{}
	s.mu.Unlock()
}

// Flush makes the changes of every consumer durable now, in one batch (up
// to FlushParallelism consumers at a time): the dirty ones, those a
// background flush is writing, and those it wrote without fsync. Clean
// consumers cost nothing.
func (s *Store) Flush() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return fmt.Errorf("consumerstate: %s: %w", s.dir, ErrClosed)
	}
	list := s.takeDirtyLocked()
	if len(s.mu.inflight)+len(s.mu.unsynced) > 0 {
		seen := make(map[*Consumer]bool, len(list))
		for _, c := range list {
			seen[c] = true
		}
		add := func(c *Consumer) {
			if !seen[c] {
				seen[c] = true
				list = append(list, c)
			}
		}
		for c := range s.mu.inflight {
			add(c)
		}
		for c := range s.mu.unsynced {
			add(c)
		}
		clear(s.mu.unsynced)
	}
	s.mu.Unlock()
	return s.flushBatch(list, true)
}

// BackgroundError returns the first error a background flush met, if any.
// The failing consumer's Flush reports it too.
func (s *Store) BackgroundError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.bgErr
}

// flushBatch flushes consumers, up to FlushParallelism at a time, so their
// writes and fsyncs overlap.
func (s *Store) flushBatch(list []*Consumer, doSync bool) error {
	return s.eachParallel(list, func(c *Consumer) error { return c.flush(doSync) })
}

// eachParallel runs fn on every consumer of list, up to FlushParallelism at
// a time, and joins the errors.
func (s *Store) eachParallel(list []*Consumer, fn func(*Consumer) error) error {
	if len(list) == 0 {
		return nil
	}
	workers := min(s.opts.FlushParallelism, len(list))
	errs := make([]error, len(list))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(list) {
				return
			}
			errs[i] = fn(list[i])
		}
	}
	if workers <= 1 {
		work()
		return errors.Join(errs...)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close makes every consumer durable and closes the store. Consumers stop
// accepting updates. A consumer whose log holds records is checkpointed
// (its state goes into a new snapshot, its log starts empty), so after a
// clean close the state is in one checksummed file, and a damaged or lost
// log costs nothing; idle consumers cost no I/O.
func (s *Store) Close() error {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	if s.mu.timer != nil {
		s.mu.timer.Stop()
	}
	list := make([]*Consumer, 0, len(s.mu.consumers))
	for _, c := range s.mu.consumers {
		list = append(list, c)
	}
	s.mu.dirty = nil
	s.mu.Unlock()
	s.bg.Wait()
	for _, c := range list {
		c.markClosed()
	}
	err := s.eachParallel(list, (*Consumer).closeCheckpoint)
	for _, c := range list {
		err = errors.Join(err, c.closeFiles())
	}
	if s.cat.f != nil {
		if cerr := s.cat.f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("consumerstate: %s: close: %w", s.cat.path, cerr))
		}
		s.cat.f = nil
	}
	return err
}
