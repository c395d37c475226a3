package jetstream

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/memstore"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// loadStreams opens every stream directory under root. A stream that cannot
// be loaded is logged with the path at fault and recorded in loadErrs; the
// others still load. Leftovers of interrupted creates and deletes go away.
func (js *JetStream) loadStreams(root string) error {
	fs := js.cfg.FS
	names, err := fs.ReadDir(root)
	if err != nil {
		return fmt.Errorf("jetstream: list %s: %w", root, err)
	}
	now := time.Now()
	var dirs []string
	for _, n := range names {
		dir := filepath.Join(root, n)
		if strings.HasPrefix(n, ".") && (strings.HasSuffix(n, newSuffix) || strings.HasSuffix(n, delSuffix)) {
			if err := fs.RemoveAll(dir); err != nil {
				js.reportLoadError(fmt.Errorf("jetstream: remove leftover %s: %w", dir, err))
			}
			continue
		}
		if fi, err := fs.Stat(dir); err == nil && fi.IsDir {
			if _, err := fs.Stat(filepath.Join(dir, convertMarker)); err == nil {
				// Being made a raft group (cluster_convert.go): the
				// conversion, or the switch's deletion, takes it.
				js.log.Info("stream not loaded: it is being converted into a replicated stream", "stream", n)
				continue
			}
			dirs = append(dirs, dir)
		}
	}
	// The stores open (and recover) loadParallel at a time; the streams
	// then start one by one, in directory order, as before.
	opened := make([]*stream, len(dirs))
	errs := make([]error, len(dirs))
	forEachParallel(len(dirs), loadParallel, func(i int) { opened[i], errs[i] = js.openStream(dirs[i], now) })
	for i, s := range opened {
		if errs[i] != nil {
			js.reportLoadError(errs[i])
			continue
		}
		js.mu.Lock()
		js.streams[s.name] = s
		js.mu.Unlock()
		s.loadConsumers()
		if err := js.subscribeStream(s, nil); err != nil {
			return err
		}
		s.startFeeds()
		st := s.store.State()
		js.log.Info("stream loaded", "stream", s.name, "messages", st.Msgs, "bytes", st.Bytes,
			"first_seq", st.FirstSeq, "last_seq", st.LastSeq)
	}
	return nil
}

func (js *JetStream) reportLoadError(err error) {
	js.log.Error("stream not loaded", "error", err)
	js.mu.Lock()
	js.loadErrs = append(js.loadErrs, err)
	js.mu.Unlock()
}

// openStream loads one file stream from its directory.
func (js *JetStream) openStream(dir string, now time.Time) (*stream, error) {
	// An encrypted stream's key file is opened first: meta.inf is sealed
	// with the data key it holds, and the store's options come from
	// meta.inf. A key that does not open it refuses the stream before
	// anything in its directory is read or repaired.
	name := filepath.Base(dir)
	dk, err := wal.ReadKey(js.cfg.FS, filepath.Join(dir, msgsDir), js.cfg.Encryption)
	if err != nil {
		if errors.Is(err, wal.ErrKeyMismatch) {
			return nil, fmt.Errorf("jetstream: stream %s: the encryption key does not match; the stream is not loaded and its files are left as they are (start with the key it was written with, or that key as prev_key): %w", name, err)
		}
		return nil, fmt.Errorf("jetstream: stream %s: %w", name, err)
	}
	m, err := readMeta(js.cfg.FS, dir, fileSeal{dk: dk, stream: name})
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s: %w", dir, err)
	}
	cfg, aerr := validate.Stream(&m.StreamConfig)
	if aerr != nil {
		return nil, fmt.Errorf("jetstream: %w: %s: %s", ErrMetaCorrupt, filepath.Join(dir, metaFile), aerr.Description)
	}
	if cfg.Storage != api.FileStorage {
		return nil, fmt.Errorf("jetstream: %w: %s: storage %s in a file stream directory", ErrMetaCorrupt, filepath.Join(dir, metaFile), cfg.Storage)
	}
	if dk == nil && js.cfg.Encryption.Enabled() {
		js.log.Warn("stream stored in the clear although an encryption key is configured: it was created without one", "stream", name)
	}
	st, err := js.openWAL(dir, &cfg, dk != nil)
	if err != nil {
		return nil, err
	}
	s := newStream(js, cfg, m.Created.UTC(), dir, st)
	if err := s.recover(now); err != nil {
		st.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return s, nil
}

// openWAL opens a file stream's store; encrypted says whether the stream
// has a key file (it was created with a key). A stream without one is
// opened with no key, so that the store never draws a key of its own for
// a stream whose other files are plain.
func (js *JetStream) openWAL(dir string, cfg *api.StreamConfig, encrypted bool) (*wal.Store, error) {
	msgs := filepath.Join(dir, msgsDir)
	var enc crypt.Config
	if encrypted {
		enc = js.cfg.Encryption
	}
	st, err := wal.Open(msgs, wal.Options{
		Encryption:   enc,
		FS:           js.cfg.FS,
		Sync:         js.cfg.Sync,
		SyncInterval: js.cfg.SyncInterval,
		Limits:       storeLimits(cfg),
		Compress:     cfg.Compression == api.S2Compression,
		Metrics:      &js.walMetrics,
		OuterLock:    true, // the store lock (storelock.go) keeps other processes out
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s: open %s: %w", cfg.Name, msgs, err)
	}
	js.logRecovery(cfg.Name, st)
	return st, nil
}

// subscribeStream subscribes the stream's subjects and then drops old
// subscriptions, so no message falls between two subject sets.
func (js *JetStream) subscribeStream(s *stream, old []*server.Subscription) error {
	s.cfgMu.RLock()
	subjects := append([]string(nil), s.cfg.Subjects...)
	s.cfgMu.RUnlock()
	subs := make([]*server.Subscription, 0, len(subjects))
	for _, subj := range subjects {
		sub, err := js.srv.Subscribe(subj, "", s.handlePublish)
		if err != nil {
			for _, x := range subs {
				x.Unsubscribe()
			}
			return fmt.Errorf("jetstream: stream %s: subscribe %s: %w", s.name, subj, err)
		}
		subs = append(subs, sub)
	}
	s.cfgMu.Lock()
	s.subs = subs
	s.cfgMu.Unlock()
	for _, x := range old {
		x.Unsubscribe()
	}
	s.sched.start() // the stream serves: its schedules may fire (schedule.go)
	s.exp.start()   // and its messages expire (ttl.go)
	return nil
}

// overlapping returns the name of another stream with a subject that
// overlaps one of subjects, or "".
// The other streams' subjects go into one subject.Set, so the check is a
// tree walk per subject, not a comparison of every pair.
func (js *JetStream) overlapping(self string, subjects []string) string {
	var taken subject.Set
	for name, o := range js.streams {
		if name == self {
			continue
		}
		o.cfgMu.RLock()
		for _, b := range o.cfg.Subjects {
			taken.Add(b, name)
		}
		o.cfgMu.RUnlock()
	}
	for _, a := range subjects {
		if name, ok := taken.Overlapping(a); ok {
			return name
		}
	}
	return ""
}

// checkResources refuses a config whose max_bytes reservation does not fit
// the account's limits (account_limits.go) or the server's MaxMemory /
// MaxStore next to the other streams'. Caller holds js.mu.
func (js *JetStream) checkResources(self string, cfg *api.StreamConfig) *api.ApiError {
	if aerr := js.checkAccountReservation(self, cfg); aerr != nil {
		return aerr
	}
	return js.checkReservation(self, cfg, js.cfg.MaxStore, js.cfg.MaxMemory, "")
}

// createStream creates a stream from a normalized config. It returns the
// existing stream with created=false when one with the same config exists.
func (js *JetStream) createStream(cfg api.StreamConfig) (s *stream, created bool, aerr *api.ApiError) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.closed {
		return nil, false, api.Errorf(api.ErrStreamCreate, "JetStream is shutting down")
	}
	if old := js.streams[cfg.Name]; old != nil {
		oc := old.config()
		if validate.SameStream(&oc, &cfg) {
			return old, false, nil
		}
		return nil, false, api.NewError(api.ErrStreamNameExist)
	}
	if aerr := js.checkStreamLimit(); aerr != nil {
		return nil, false, aerr
	}
	if other := js.overlapping(cfg.Name, cfg.Subjects); other != "" {
		return nil, false, api.NewError(api.ErrStreamSubjectOverlap)
	}
	if aerr := js.checkResources(cfg.Name, &cfg); aerr != nil {
		return nil, false, aerr
	}
	createdAt := time.Now().UTC()
	var st store.StreamStore
	dir := ""
	if cfg.Storage == api.MemoryStorage {
		ms, err := memstore.New(storeLimits(&cfg))
		if err != nil {
			return nil, false, api.Errorf(api.ErrStreamCreate, "creating memory store: %v", err)
		}
		st = ms
	} else {
		var err error
		dir, err = js.makeStreamDir(&cfg, createdAt)
		if err != nil {
			js.log.Error("stream create failed", "stream", cfg.Name, "error", err)
			return nil, false, api.Errorf(api.ErrStreamCreate, "creating stream directory: %v", err)
		}
		ws, err := js.openWAL(dir, &cfg, js.cfg.Encryption.Enabled())
		if err != nil {
			js.log.Error("stream create failed", "stream", cfg.Name, "error", err)
			_ = js.removeStreamDir(dir)
			return nil, false, api.Errorf(api.ErrStreamCreate, "opening stream store: %v", err)
		}
		st = ws
	}
	if cfg.FirstSeq > 1 {
		if _, err := st.Compact(cfg.FirstSeq); err != nil {
			_ = st.Remove()
			if dir != "" {
				_ = js.removeStreamDir(dir)
			}
			return nil, false, api.Errorf(api.ErrStreamCreate, "setting first sequence: %v", err)
		}
	}
	s = newStream(js, cfg, createdAt, dir, st)
	s.resyncLocked()
	js.streams[cfg.Name] = s
	if err := js.subscribeStream(s, nil); err != nil {
		delete(js.streams, cfg.Name)
		_ = st.Remove()
		if dir != "" {
			_ = js.removeStreamDir(dir)
		}
		return nil, false, api.Errorf(api.ErrStreamCreate, "%v", err)
	}
	s.startFeeds()
	js.log.Info("stream created", "stream", validate.Describe(&cfg))
	return s, true, nil
}

// makeStreamDir builds a file stream's directory under a hidden name, with
// durable metadata, then renames it into place.
func (js *JetStream) makeStreamDir(cfg *api.StreamConfig, created time.Time) (string, error) {
	fs := js.cfg.FS
	root := streamsDir(js.cfg.StoreDir, js.cfg.Account)
	final := filepath.Join(root, cfg.Name)
	tmp := filepath.Join(root, hiddenName(cfg.Name, newSuffix))
	if err := fs.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("remove %s: %w", tmp, err)
	}
	if _, err := fs.Stat(final); err == nil {
		return "", fmt.Errorf("%s already exists (a stream that failed to load?)", final)
	}
	// The tree appears whole, by one rename made durable by the root's
	// fsync. Until then a crash leaves a hidden directory the next start
	// removes, so no step before needs to be durable on its own: the
	// files and the tree's directory are synced once, together, just
	// before the rename. (The root and its parents are made durable first:
	// the rename's fsync covers the root's entries, not the root.)
	if err := vfs.MkdirAllSync(fs, root, dirPerm); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	for _, d := range []string{filepath.Join(tmp, msgsDir), filepath.Join(tmp, obsDir)} {
		if err := fs.MkdirAll(d, dirPerm); err != nil {
			return "", fmt.Errorf("create %s: %w", d, err)
		}
	}
	fk, keyFile, err := js.newStreamKey(cfg.Name)
	if err != nil {
		return "", err
	}
	if err := writeNewMeta(fs, tmp, &streamMeta{Created: created, StreamConfig: *cfg}, fk, keyFile); err != nil {
		return "", err
	}
	if err := fs.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("rename %s to %s: %w", tmp, final, err)
	}
	if err := fs.SyncDir(root); err != nil {
		return "", fmt.Errorf("sync dir %s: %w", root, err)
	}
	return final, nil
}

// newStreamKey draws the data key of a new file stream when a key is
// configured: it returns the stream's fileSeal and its key file's bytes
// (the data key wrapped by the configured key), for the caller to write
// into the new directory's msgs/ before the store first opens it. Without
// a key both are zero: the stream is plain.
func (js *JetStream) newStreamKey(name string) (fileSeal, []byte, error) {
	enc := js.cfg.Encryption
	if !enc.Enabled() {
		return fileSeal{}, nil, nil
	}
	dk, err := enc.NewKey()
	if err != nil {
		return fileSeal{}, nil, err
	}
	b, err := crypt.MarshalKey(dk, enc.Key)
	if err != nil {
		return fileSeal{}, nil, err
	}
	return fileSeal{dk: dk, stream: name}, b, nil
}

// hiddenName is the name a stream directory has while it is being made or
// removed: "." + a hash of the name + suffix. Its length does not depend on
// the stream's, so a name of the longest length the filesystem takes (255
// bytes) still has room for it.
func hiddenName(name, suffix string) string {
	return "." + checksum([]byte(name)) + suffix
}

// removeStreamDir deletes a stream directory. The rename to a hidden name,
// made durable by the directory sync, is the one step that deletes the
// stream: before it the stream loads whole, after it not at all. What
// follows is cleanup; if it fails or a crash cuts it short, the next start
// removes the hidden directory (loadStreams).
func (js *JetStream) removeStreamDir(dir string) error {
	fs := js.cfg.FS
	root := filepath.Dir(dir)
	gone := filepath.Join(root, hiddenName(filepath.Base(dir), delSuffix))
	if err := fs.RemoveAll(gone); err != nil {
		return fmt.Errorf("remove %s: %w", gone, err)
	}
	if err := fs.Rename(dir, gone); err != nil {
		return fmt.Errorf("rename %s: %w", dir, err)
	}
	if err := fs.SyncDir(root); err != nil {
		return fmt.Errorf("sync dir %s: %w", root, err)
	}
	if err := fs.RemoveAll(gone); err != nil {
		js.log.Warn("stream deleted; removing its files failed, the next start retries", "dir", gone, "error", err)
	}
	return nil
}

// deleteStream removes a stream and its data.
func (js *JetStream) deleteStream(name string) *api.ApiError {
	js.mu.Lock()
	s := js.streams[name]
	if s == nil {
		js.mu.Unlock()
		return api.NewError(api.ErrStreamNotFound)
	}
	delete(js.streams, name)
	js.mu.Unlock()

	s.cfgMu.Lock()
	subs := s.subs
	s.subs = nil
	s.cfgMu.Unlock()
	for _, x := range subs {
		x.Unsubscribe()
	}
	s.stopFeeds()
	s.sched.stop() // schedule.go
	s.exp.stop()   // ttl.go
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.closeConsumers(true)
	s.atomic.dropAll()
	s.fast.dropAll()
	var err error
	if s.dir == "" {
		if err = s.store.Remove(); errors.Is(err, store.ErrClosed) {
			err = nil
		}
	} else {
		// Close, not Remove: the files stay whole until removeStreamDir's
		// rename deletes the stream in one step. A store that cannot close
		// cleanly (a full disk) is deleted all the same.
		if cerr := s.store.Close(); cerr != nil && !errors.Is(cerr, store.ErrClosed) {
			js.log.Warn("closing the store of a stream being deleted", "stream", name, "error", cerr)
		}
		err = js.removeStreamDir(s.dir)
	}
	if err != nil {
		js.log.Error("stream delete", "stream", name, "error", err)
		return api.Errorf(api.ErrStreamDelete, "deleting stream %s: %v", name, err)
	}
	js.log.Info("stream deleted", "stream", name)
	js.adviseStream(name, api.ActionDelete) // after its consumers' (closeConsumers), as nats-server
	return nil
}

// updateStream applies a normalized config to an existing stream.
func (js *JetStream) updateStream(req api.StreamConfig) (*stream, *api.ApiError) {
	js.mu.Lock()
	defer js.mu.Unlock()
	s := js.streams[req.Name]
	if s == nil {
		return nil, api.NewError(api.ErrStreamNotFound)
	}
	// A replicated stream's leader applies the meta group's update (its
	// replica count checked there); any other stream is this server's own.
	if aerr := validate.Replicas(req.Replicas); aerr != nil && s.rep == nil {
		return nil, aerr
	}
	old := s.config()
	cfg, aerr := validate.StreamUpdate(&old, &req)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkNewConsumerLimits(&old, &cfg); aerr != nil {
		return nil, aerr
	}
	if other := js.overlapping(cfg.Name, cfg.Subjects); other != "" {
		return nil, api.NewError(api.ErrStreamSubjectOverlap)
	}
	if aerr := js.checkResources(cfg.Name, &cfg); aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	if err := s.store.UpdateLimits(storeLimits(&cfg)); err != nil {
		s.mu.Unlock()
		return nil, api.Errorf(api.ErrStreamUpdate, "applying limits: %v", err)
	}
	if w, ok := s.store.(*wal.Store); ok && cfg.Compression != old.Compression {
		// As nats-server: segments sealed from now on take the new form.
		if err := w.SetCompress(cfg.Compression == api.S2Compression); err != nil {
			s.mu.Unlock()
			return nil, api.Errorf(api.ErrStreamUpdate, "applying compression: %v", err)
		}
	}
	if s.dir != "" {
		if err := writeMeta(js.cfg.FS, s.dir, &streamMeta{Created: s.created, StreamConfig: cfg}, s.files); err != nil {
			// The old config stays in force; the tighter limits already
			// applied are harmless and go back to the old ones on restart.
			_ = s.store.UpdateLimits(storeLimits(&old))
			s.mu.Unlock()
			return nil, api.Errorf(api.ErrStreamUpdate, "writing stream metadata: %v", err)
		}
	}
	s.cfgMu.Lock()
	subjectsChanged := !equalStrings(old.Subjects, cfg.Subjects)
	s.cfg = cfg
	s.xf, _ = newXforms(&cfg) // checked by validate.Stream
	oldSubs := s.subs
	s.cfgMu.Unlock()
	s.setMarkerAge(&cfg) // ttl.go
	s.pmu.Lock()
	s.dedup.Window = int64(cfg.Duplicates)
	s.pmu.Unlock()
	s.mu.Unlock()
	if !cfg.AllowBatchPublish {
		s.fast.dropAll() // as nats-server: open fast batches end with the permission
	}
	if subjectsChanged {
		if err := js.subscribeStream(s, oldSubs); err != nil {
			return nil, api.Errorf(api.ErrStreamUpdate, "%v", err)
		}
	}
	if !bytes.Equal(old.Sources, cfg.Sources) || !bytes.Equal(old.Mirror, cfg.Mirror) {
		// A changed source list, or a mirror removed (promoted to an
		// ordinary stream, which keeps what it copied and copies no more).
		s.stopFeeds()
		s.startFeeds()
	}
	js.log.Info("stream updated", "stream", validate.Describe(&cfg))
	return s, nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// close unsubscribes the stream and closes its store, keeping its data.
func (s *stream) close() error {
	s.cfgMu.Lock()
	subs := s.subs
	s.subs = nil
	s.cfgMu.Unlock()
	for _, x := range subs {
		x.Unsubscribe()
	}
	s.stopFeeds()
	s.sched.stop() // schedule.go
	s.exp.stop()   // ttl.go
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.closeConsumers(false)
	s.atomic.dropAll()
	s.fast.dropAll()
	last := s.store.State().LastSeq
	if err := s.store.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
		return fmt.Errorf("jetstream: close stream %s: %w", s.name, err)
	}
	if s.dir != "" {
		s.pmu.Lock()
		var err error
		// The sweep's last save still holds the window (recovery drops
		// what expired since) unless an id or a message came after it:
		// an idle stream's close writes and fsyncs nothing here.
		if d := s.dedup; d.Added || d.SavedSeq != last || d.Saved.IsZero() {
			d.Expire(time.Now().UnixNano())
			err = saveDedupe(s.env.cfg.FS, s.dir, s.files, d, last)
		}
		var terr error
		if s.config().AllowMsgTTL || len(s.ttls) > 0 {
			terr = saveTTLs(s.env.cfg.FS, s.dir, s.files, s.ttls, last)
		}
		s.pmu.Unlock()
		if err != nil {
			// Costs only time: the next start reads the window instead.
			s.env.log.Warn("saving the duplicate window", "stream", s.name, "error", err)
		}
		if terr != nil {
			s.env.log.Warn("saving per-message TTLs", "stream", s.name, "error", terr)
		}
	}
	return nil
}
