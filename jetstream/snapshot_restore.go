package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/consumerstate"
	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/jetstream/internal/archive"
	"github.com/jetwal/jetwal/jetstream/validate"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// readArchive reads an archive from r into the builder (archive.Read).
func readArchive(r io.Reader, b *restoreBuilder) error { return archive.Read(r, b) }

// restoreBuilder builds a stream from an archive under a hidden directory
// (".<hash>.new", which a restart removes), then renames it into place and
// loads it like any stream at start (install).
type restoreBuilder struct {
	js  *JetStream
	cfg api.StreamConfig
	tmp string // the hidden directory; "" until the header arrived
	// files seals the stream's files when the server has a key: the data
	// key the builder drew, in msgs/key.jwk.
	files fileSeal

	st   *wal.Store
	hdr  archive.Header
	cons []archive.Consumer
	next uint64 // the sequence the next append gets

	clock atomic.Int64 // the time the next append gets (unix ns); 0: now
	wg    sync.WaitGroup
	aerr  atomic.Pointer[error] // the first failed append
}

func newRestoreBuilder(js *JetStream, cfg api.StreamConfig) *restoreBuilder {
	return &restoreBuilder{js: js, cfg: cfg}
}

// now is the restore store's clock: the archived message's time.
func (b *restoreBuilder) now() time.Time {
	if ns := b.clock.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Now()
}

// Header, Msg and Consumer make the builder the archive.Sink of a restore.

// Header checks the archive's header against the restore request.
func (b *restoreBuilder) Header(h *archive.Header) error {
	if h.Config.Name != b.cfg.Name {
		return fmt.Errorf("%w: it holds stream %q, not %q", archive.ErrMalformed, h.Config.Name, b.cfg.Name)
	}
	if h.LastSeq > 0 && h.FirstSeq > h.LastSeq+1 {
		return fmt.Errorf("%w: first seq %d after last seq %d", archive.ErrMalformed, h.FirstSeq, h.LastSeq)
	}
	b.hdr = *h
	fs := b.js.cfg.FS
	root := streamsDir(b.js.cfg.StoreDir, b.js.cfg.Account)
	tmp := filepath.Join(root, hiddenName(b.cfg.Name+"\x00restore", newSuffix))
	if err := fs.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove %s: %w", tmp, err)
	}
	b.tmp = tmp
	for _, d := range []string{filepath.Join(tmp, msgsDir), filepath.Join(tmp, obsDir)} {
		if err := vfs.MkdirAllSync(fs, d, dirPerm); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	created := h.Created
	if created.IsZero() {
		created = time.Now()
	}
	// An encrypted server restores into an encrypted stream: its key file
	// first, so that meta.inf is sealed and the store opens with it.
	fk, keyFile, err := b.js.newStreamKey(b.cfg.Name)
	if err != nil {
		return err
	}
	if keyFile != nil {
		if err := writeFileSync(fs, filepath.Join(tmp, msgsDir, wal.KeyFileName), keyFile); err != nil {
			return err
		}
		if err := fs.SyncDir(filepath.Join(tmp, msgsDir)); err != nil {
			return fmt.Errorf("sync dir %s: %w", filepath.Join(tmp, msgsDir), err)
		}
	}
	b.files = fk
	if err := writeMeta(fs, tmp, &streamMeta{Created: created.UTC(), StreamConfig: b.cfg}, fk); err != nil {
		return err
	}
	var enc crypt.Config
	if fk.encrypted() {
		enc = b.js.cfg.Encryption
	}
	st, err := wal.Open(filepath.Join(tmp, msgsDir), wal.Options{
		Encryption:   enc,
		FS:           fs,
		Sync:         b.js.cfg.Sync,
		SyncInterval: b.js.cfg.SyncInterval,
		Limits:       storeLimits(&b.cfg),
		Compress:     b.cfg.Compression == api.S2Compression,
		Now:          b.now,
		OuterLock:    true, // the store lock (storelock.go) keeps other processes out
	})
	if err != nil {
		return fmt.Errorf("open restore store: %w", err)
	}
	b.st = st
	b.next = 1
	if h.FirstSeq > 1 {
		if _, err := st.Compact(h.FirstSeq); err != nil {
			return fmt.Errorf("setting first sequence %d: %w", h.FirstSeq, err)
		}
		b.next = h.FirstSeq
	}
	return nil
}

func (b *restoreBuilder) failed() error {
	if p := b.aerr.Load(); p != nil {
		return *p
	}
	return nil
}

// Msg appends one archived message at its own sequence.
func (b *restoreBuilder) Msg(m *store.Msg) error {
	if err := b.failed(); err != nil {
		return err
	}
	if m.Seq < b.next || m.Seq > b.hdr.LastSeq {
		return fmt.Errorf("%w: seq %d outside %d..%d", archive.ErrMalformed, m.Seq, b.next, b.hdr.LastSeq)
	}
	if m.Seq > b.next {
		if err := b.st.SkipTo(m.Seq); err != nil {
			return fmt.Errorf("recreating deleted messages before seq %d: %w", m.Seq, err)
		}
	}
	want := m.Seq
	b.clock.Store(max(m.Time, 1))
	b.wg.Add(1)
	err := b.st.AppendAsync(m.Subject, m.Header, m.Data, func(seq uint64, _ int64, err error) {
		if err == nil && seq != want {
			err = fmt.Errorf("message of seq %d stored as seq %d", want, seq)
		}
		if err != nil {
			b.aerr.CompareAndSwap(nil, &err)
		}
		b.wg.Done()
	})
	if err != nil {
		b.wg.Done()
		return fmt.Errorf("storing seq %d: %w", m.Seq, err)
	}
	b.next = m.Seq + 1
	return nil
}

// Consumer checks one archived consumer and keeps it for complete.
func (b *restoreBuilder) Consumer(c *archive.Consumer) error {
	if !validate.ConsumerName(c.Name) {
		return fmt.Errorf("%w: consumer name %q", archive.ErrMalformed, c.Name)
	}
	var meta consumerMeta
	if err := json.Unmarshal(c.Meta, &meta); err != nil {
		return fmt.Errorf("%w: consumer %s config: %v", archive.ErrMalformed, c.Name, err)
	}
	st, err := consumerstate.Decode(c.State)
	if err != nil {
		return fmt.Errorf("%w: consumer %s state: %v", archive.ErrMalformed, c.Name, err)
	}
	if err := st.Verify(); err != nil {
		return fmt.Errorf("%w: consumer %s state: %v", archive.ErrMalformed, c.Name, err)
	}
	b.cons = append(b.cons, *c)
	return nil
}

// complete ends the message store (trailing holes, durability) and writes
// the consumers, all still under the hidden directory.
func (b *restoreBuilder) complete() error {
	if b.st == nil {
		return fmt.Errorf("%w: no header", archive.ErrMalformed)
	}
	if b.hdr.LastSeq >= b.next {
		if err := b.st.SkipTo(b.hdr.LastSeq + 1); err != nil {
			return fmt.Errorf("recreating deleted messages up to seq %d: %w", b.hdr.LastSeq, err)
		}
	}
	b.wg.Wait()
	if err := b.failed(); err != nil {
		return err
	}
	if err := b.st.Sync(); err != nil {
		return fmt.Errorf("sync restored messages: %w", err)
	}
	err := b.st.Close()
	b.st = nil
	if err != nil {
		return fmt.Errorf("close restored messages: %w", err)
	}
	if len(b.cons) == 0 {
		return nil
	}
	obs, err := consumerstate.Open(filepath.Join(b.tmp, obsDir), b.js.consumerStoreOptions(b.files.dk))
	if err != nil {
		return fmt.Errorf("open restored consumers: %w", err)
	}
	for i := range b.cons {
		c := &b.cons[i]
		st, err := consumerstate.Decode(c.State)
		if err == nil {
			var cs *consumerstate.Consumer
			if cs, err = obs.Create(c.Name, c.Meta); err == nil {
				if err = cs.SetState(st); err == nil {
					err = cs.Flush()
				}
			}
		}
		if err != nil {
			_ = obs.Close()
			return fmt.Errorf("restoring consumer %s: %w", c.Name, err)
		}
	}
	if err := obs.Close(); err != nil {
		return fmt.Errorf("close restored consumers: %w", err)
	}
	return nil
}

// abort removes everything the restore built.
func (b *restoreBuilder) abort() {
	if b.st != nil {
		b.wg.Wait()
		_ = b.st.Close()
		b.st = nil
	}
	if b.tmp != "" {
		if err := b.js.cfg.FS.RemoveAll(b.tmp); err != nil {
			b.js.log.Warn("removing an abandoned restore; the next start retries", "dir", b.tmp, "error", err)
		}
	}
}

// install completes the restore, renames the directory into place and
// loads the stream. On an error nothing of the stream remains.
func (b *restoreBuilder) install() (*stream, error) {
	if err := b.complete(); err != nil {
		b.abort()
		return nil, err
	}
	js := b.js
	fs := js.cfg.FS
	root := filepath.Dir(b.tmp)
	final := filepath.Join(root, b.cfg.Name)
	fail := func(err error) (*stream, error) {
		b.abort()
		return nil, err
	}
	// Checked again: the name and subjects were free when the restore
	// began. Once the directory is in place a create of the same name
	// fails (makeStreamDir), so the name stays this restore's.
	js.mu.Lock()
	aerr := js.checkRestoreTargetLocked(&b.cfg)
	var err error
	if aerr == nil {
		if _, serr := fs.Stat(final); serr == nil {
			err = fmt.Errorf("stream directory %s already exists (a stream that failed to load?)", b.cfg.Name)
		} else if rerr := fs.Rename(b.tmp, final); rerr != nil {
			err = fmt.Errorf("rename restored stream into place: %w", rerr)
		}
	}
	js.mu.Unlock()
	if aerr != nil {
		return fail(errors.New(aerr.Description))
	}
	if err != nil {
		return fail(err)
	}
	b.tmp = ""
	if err := fs.SyncDir(root); err != nil {
		_ = js.removeStreamDir(final)
		return nil, fmt.Errorf("sync dir %s: %w", root, err)
	}
	s, err := js.openStream(final, time.Now())
	if err != nil {
		_ = js.removeStreamDir(final)
		return nil, fmt.Errorf("opening the restored stream: %w", err)
	}
	js.mu.Lock()
	js.streams[s.name] = s
	js.mu.Unlock()
	s.loadConsumers()
	if err := js.subscribeStream(s, nil); err != nil {
		js.mu.Lock()
		delete(js.streams, s.name)
		js.mu.Unlock()
		s.closeConsumers(false)
		_ = s.store.Close()
		_ = js.removeStreamDir(final)
		return nil, err
	}
	return s, nil
}
