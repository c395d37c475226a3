package consumerstate

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/vfs"
)

// The consumer catalogue, obs/catalog.log: a journal of consumer creations
// and deletions whose consumer directories may not be durable yet. Part of
// the on-disk format (see doc.go).
const (
	catalogFile       = "catalog.log"
	catalogTmpFile    = tmpDirPrefix + catalogFile // a compaction in progress; Open removes it
	catalogMagic      = "JWCK"
	catalogVersion    = 1
	catalogHeaderSize = 24 // magic, version, 3 reserved, generation, xxhash64 of bytes 0-15
	// catalogBytes is the size a catalogue is created with, zero-filled,
	// so that appending a record overwrites bytes already allocated and
	// its fdatasync writes no file metadata.
	catalogBytes = 32 << 10

	catOpCreate byte = 1 // payload: op, uvarint name length, name, config JSON
	catOpDelete byte = 2 // payload: op, uvarint name length, name
	catOpUpdate byte = 3 // payload: op, uvarint name length, name, new config JSON
)

// catalog is the open catalogue of a Store. Guarded by Store.dirMu.
type catalog struct {
	path string
	f    vfs.File // nil: no catalogue file yet (created by the first Create)
	gen  uint64
	end  int64 // offset just past the last record
	size int64 // file size; [end, size) is zeros
	// live holds the names that have a create record not followed by a
	// delete record in this generation.
	live map[string]bool
	// unloaded holds the configs of live consumers without a directory
	// that Load has not opened yet (found by Open).
	unloaded map[string][]byte
	failed   error // sticky: a record write or fsync failed
	// held is the consumer whose fmu the caller of appendCatalog holds
	// (updateInCatalog), so that a compaction does not lock it again.
	held   *Consumer
	digest *xxhash.Digest
	buf    []byte
}

// catalogHeader returns the header of a catalogue of generation gen.
func catalogHeader(gen uint64) []byte {
	h := make([]byte, catalogHeaderSize)
	copy(h, catalogMagic)
	h[4] = catalogVersion
	binary.LittleEndian.PutUint64(h[8:], gen)
	binary.LittleEndian.PutUint64(h[16:], xxhash.Sum64(h[:16]))
	return h
}

// catalogPayload encodes a catalogue record's payload.
func catalogPayload(op byte, name string, cfg []byte) []byte {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(name)+len(cfg))
	b = append(b, op)
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	return append(b, cfg...)
}

// catalogContents is what reading a catalogue found.
type catalogContents struct {
	gen     uint64
	end     int64
	records int
	// live maps each live name to the config of its create record.
	live map[string][]byte
	// deleted holds the names whose last record is a delete.
	deleted map[string]bool
	// tornOffset and tornBytes locate a torn final record (tornBytes 0:
	// none): a record whose write a crash interrupted, never acknowledged.
	tornOffset, tornBytes int64
}

// parseCatalog reads a catalogue. A damaged header, a damaged record that
// a good record follows, or a record that does not make sense is
// corruption, reported with the file and offset. A damaged final record is
// a torn tail and is left out.
func parseCatalog(data []byte, path string) (*catalogContents, error) {
	if len(data) < catalogHeaderSize {
		return nil, corruptf("%s: offset 0: %d bytes, shorter than the %d-byte catalogue header", path, len(data), catalogHeaderSize)
	}
	if string(data[0:4]) != catalogMagic {
		return nil, corruptf("%s: offset 0: bad catalogue magic %q", path, data[0:4])
	}
	if got, want := binary.LittleEndian.Uint64(data[16:24]), xxhash.Sum64(data[:16]); got != want {
		return nil, corruptf("%s: offset 16: catalogue header checksum %016x, computed %016x", path, got, want)
	}
	if data[4] != catalogVersion {
		return nil, corruptf("%s: offset 4: unsupported catalogue version %d", path, data[4])
	}
	if data[5]|data[6]|data[7] != 0 {
		return nil, corruptf("%s: offset 5: reserved bytes not zero", path)
	}
	cc := &catalogContents{
		gen:     binary.LittleEndian.Uint64(data[8:16]),
		live:    make(map[string][]byte),
		deleted: make(map[string]bool),
	}
	d := xxhash.New()
	off := int64(catalogHeaderSize)
	for off < int64(len(data)) {
		payload, ok := recordAt(d, data, cc.gen, off)
		if !ok {
			if next, found := nextGoodRecord(d, data, cc.gen, off+1); found {
				return nil, corruptf("%s: offset %d: damaged catalogue record followed by a good one at offset %d", path, off, next)
			}
			last := int64(len(data)) - 1
			for last >= off && data[last] == 0 {
				last--
			}
			if last >= off {
				cc.tornOffset, cc.tornBytes = off, last+1-off
			}
			break
		}
		if err := cc.apply(payload); err != nil {
			return nil, corruptf("%s: record at offset %d: %v", path, off, err)
		}
		cc.records++
		off += recHeaderSize + int64(len(payload))
	}
	cc.end = off
	return cc, nil
}

// apply adds one record's payload to the contents.
func (cc *catalogContents) apply(p []byte) error {
	if len(p) == 0 {
		return errors.New("empty record")
	}
	op := p[0]
	n, k := binary.Uvarint(p[1:])
	if k <= 0 || n > uint64(len(p)-1-k) {
		return errors.New("bad name length")
	}
	name := string(p[1+k : 1+k+int(n)])
	rest := p[1+k+int(n):]
	if !validName(name) {
		return fmt.Errorf("invalid consumer name %q", name)
	}
	switch op {
	case catOpCreate:
		if _, ok := cc.live[name]; ok {
			return fmt.Errorf("create of consumer %s, which exists", name)
		}
		if !json.Valid(rest) {
			return fmt.Errorf("consumer %s: config is not valid JSON", name)
		}
		cc.live[name] = rest
		delete(cc.deleted, name)
	case catOpUpdate:
		if _, ok := cc.live[name]; !ok {
			return fmt.Errorf("config update of consumer %s, which the catalogue does not hold", name)
		}
		if !json.Valid(rest) {
			return fmt.Errorf("consumer %s: config is not valid JSON", name)
		}
		cc.live[name] = rest
	case catOpDelete:
		if _, ok := cc.live[name]; !ok {
			return fmt.Errorf("delete of consumer %s, which the catalogue does not hold", name)
		}
		if len(rest) != 0 {
			return fmt.Errorf("delete of consumer %s: %d trailing bytes", name, len(rest))
		}
		delete(cc.live, name)
		cc.deleted[name] = true
	default:
		return fmt.Errorf("unknown operation %d", op)
	}
	return nil
}

// readCatalog reads and parses obs/catalog.log without changing it. A
// missing catalogue gives nil contents.
func readCatalog(fsys vfs.FS, obsDir string) (*catalogContents, error) {
	path := filepath.Join(obsDir, catalogFile)
	data, err := readFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseCatalog(data, path)
}

// catRecord is a create record carried into a compacted catalogue.
type catRecord struct {
	name string
	cfg  []byte
}

// writeCatalog replaces the catalogue with one of generation gen and size
// bytes holding the create records of keep, zero-filled after them:
// written as .tmp-catalog.log, fsynced, renamed over catalog.log, the obs
// directory fsynced. Called with dirMu held.
func (s *Store) writeCatalog(gen uint64, size int64, keep []catRecord) error {
	tmp := filepath.Join(s.dir, catalogTmpFile)
	b := make([]byte, 0, size)
	b = append(b, catalogHeader(gen)...)
	d := xxhash.New()
	live := make(map[string]bool, len(keep))
	for _, r := range keep {
		b = appendRecord(b, d, gen, int64(len(b)), catalogPayload(catOpCreate, r.name, r.cfg))
		live[r.name] = true
	}
	end := int64(len(b))
	if end > size {
		return fmt.Errorf("%s: %d bytes of records do not fit in %d", tmp, end, size)
	}
	b = b[:size]
	clear(b[end:])
	if err := writeFile(s.fs, tmp, b); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, s.cat.path); err != nil {
		return err
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("%s: sync dir: %w", s.dir, err)
	}
	f, err := s.fs.OpenRW(s.cat.path)
	if err != nil {
		return err
	}
	if s.cat.f != nil {
		if err := s.cat.f.Close(); err != nil {
			f.Close()
			return fmt.Errorf("%s: close: %w", s.cat.path, err)
		}
	}
	s.cat.f, s.cat.gen, s.cat.end, s.cat.size = f, gen, end, size
	s.cat.live = live
	return nil
}

// compactCatalog replaces the catalogue with one of the next generation
// that holds only the create records of the consumers still without a
// durable directory, with room for at least extra more bytes. Called with
// dirMu held.
func (s *Store) compactCatalog(extra int64) error {
	var keep []catRecord
	used := int64(catalogHeaderSize)
	for name := range s.cat.live {
		s.mu.Lock()
		c := s.mu.consumers[name]
		s.mu.Unlock()
		var r catRecord
		switch cfg, unloaded := s.cat.unloaded[name]; {
		case unloaded:
			r = catRecord{name: name, cfg: cfg}
		case c == nil:
			return fmt.Errorf("%s: consumer %s is in the catalogue but not open", s.cat.path, name)
		default:
			var done bool
			if c == s.cat.held {
				done = c.fmu.materialized
			} else {
				c.fmu.Lock()
				done = c.fmu.materialized
				c.fmu.Unlock()
			}
			if done {
				continue
			}
			// Until its directory is durable, the record is the consumer
			// (with its config as the last update record left it).
			r = catRecord{name: name, cfg: c.Config()}
		}
		keep = append(keep, r)
		used += recHeaderSize + int64(len(catalogPayload(catOpCreate, r.name, r.cfg)))
	}
	size := s.catalogSize()
	if need := 2*used + extra; need > size {
		size = (need + 4095) &^ 4095
	}
	return s.writeCatalog(s.cat.gen+1, size, keep)
}

// catalogSize is the size of a new catalogue.
func (s *Store) catalogSize() int64 {
	if s.opts.catalogBytes > 0 {
		return s.opts.catalogBytes
	}
	return catalogBytes
}

// appendCatalog appends one record and fsyncs the catalogue (under every
// sync policy: the catalogue's records then reach the disk in order, so a
// damaged record followed by a good one is never a crash's doing). When
// the record does not fit, the catalogue is compacted first; a delete
// record is then not needed (the compacted catalogue no longer holds the
// name) and appended reports false. Called with dirMu held.
func (s *Store) appendCatalog(payload []byte, isDelete bool) (appended bool, err error) {
	if s.cat.failed != nil {
		return false, s.cat.failed
	}
	if s.cat.f == nil {
		if err := s.writeCatalog(1, s.catalogSize(), nil); err != nil {
			return false, err
		}
	}
	need := int64(recHeaderSize + len(payload))
	if s.cat.end+need > s.cat.size {
		if err := s.compactCatalog(need); err != nil {
			return false, fmt.Errorf("compact catalogue: %w", err)
		}
		if isDelete {
			return false, nil
		}
	}
	if s.cat.digest == nil {
		s.cat.digest = xxhash.New()
	}
	s.cat.buf = appendRecord(s.cat.buf[:0], s.cat.digest, s.cat.gen, s.cat.end, payload)
	if _, err := s.cat.f.WriteAt(s.cat.buf, s.cat.end); err != nil {
		s.cat.failed = fmt.Errorf("%w: %s: offset %d: write: %w", ErrWriteFailed, s.cat.path, s.cat.end, err)
		return false, s.cat.failed
	}
	if err := s.cat.f.Sync(); err != nil {
		s.cat.failed = fmt.Errorf("%w: %s: sync: %w", ErrWriteFailed, s.cat.path, err)
		return false, s.cat.failed
	}
	s.cat.end += need
	return true, nil
}

// openCatalog reads the catalogue at Open and reconciles the consumer
// directories with it: a live consumer without a directory stays in the
// catalogue, for Load to open (s.cat.unloaded); a deleted consumer whose
// directory remains loses it. Then, if the catalogue holds records no
// longer needed or a torn tail, it is compacted. Called from Open.
func (s *Store) openCatalog() error {
	s.cat.path = filepath.Join(s.dir, catalogFile)
	s.cat.live = make(map[string]bool)
	cc, err := readCatalog(s.fs, s.dir)
	if err != nil || cc == nil {
		return err
	}
	changed := false
	var dels []string
	var keep []catRecord
	s.cat.unloaded = make(map[string][]byte)
	for name, cfg := range cc.live {
		final := filepath.Join(s.dir, name)
		if _, err := s.fs.Stat(final); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		keep = append(keep, catRecord{name: name, cfg: cfg})
		s.cat.unloaded[name] = cfg
	}
	for name := range cc.deleted {
		final := filepath.Join(s.dir, name)
		if _, err := s.fs.Stat(final); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		del := filepath.Join(s.dir, delDirPrefix+name)
		if err := s.fs.Rename(final, del); err != nil {
			return fmt.Errorf("remove consumer %s deleted in %s: %w", name, s.cat.path, err)
		}
		dels = append(dels, del)
		changed = true
	}
	if changed {
		if err := s.fs.SyncDir(s.dir); err != nil {
			return fmt.Errorf("%s: sync dir: %w", s.dir, err)
		}
		for _, d := range dels {
			if err := s.fs.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	s.cat.gen = cc.gen
	if cc.records > len(keep) || cc.tornBytes > 0 {
		// Keep the records of the consumers without a directory.
		s.cat.live = make(map[string]bool)
		for _, r := range keep {
			s.cat.live[r.name] = true
		}
		return s.compactCatalog(0)
	}
	for _, r := range keep {
		s.cat.live[r.name] = true
	}
	f, err := s.fs.OpenRW(s.cat.path)
	if err != nil {
		return err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: size: %w", s.cat.path, err)
	}
	s.cat.f, s.cat.end, s.cat.size = f, cc.end, size
	return nil
}

// buildConsumerDir creates the directory of consumer name atomically:
// obs/.tmp-<name> is written and made durable with its files, then renamed
// into place. The rename is not synced: the caller syncs obsDir.
func buildConsumerDir(fsys vfs.FS, obsDir, name string, cfg, snap []byte) error {
	tmp := filepath.Join(obsDir, tmpDirPrefix+name)
	build := func() error {
		if err := fsys.RemoveAll(tmp); err != nil {
			return err
		}
		// tmp needs no durable entry of its own: it is garbage until the
		// rename, which the caller's directory sync makes durable.
		if err := fsys.MkdirAll(tmp, 0o750); err != nil {
			return err
		}
		if err := writeFilesSynced(fsys, tmp, []namedBytes{
			{metaFile, cfg}, {metaSumFile, metaSum(cfg)}, {stateFile, snap}, {logName(1), logHeader(1)},
		}); err != nil {
			return err
		}
		return fsys.Rename(tmp, filepath.Join(obsDir, name))
	}
	if err := build(); err != nil {
		return errors.Join(err, fsys.RemoveAll(tmp))
	}
	return nil
}

// updateInCatalog replaces the config of c if c has no directory yet: an
// update record is appended to the catalogue and fsynced, as a create's.
// It reports false, changing nothing, if c has a directory (or is closed):
// the caller then updates meta.inf.
func (s *Store) updateInCatalog(c *Consumer, cfg []byte) (bool, error) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fmu.materialized || c.fmu.closed || !s.cat.live[c.name] {
		return false, nil
	}
	if c.fmu.failed != nil {
		return true, c.fmu.failed
	}
	// c.fmu stays held, so that no flush writes c's directory with the
	// old config meanwhile.
	s.cat.held = c
	_, err := s.appendCatalog(catalogPayload(catOpUpdate, c.name, cfg), false)
	s.cat.held = nil
	if err != nil {
		return true, fmt.Errorf("consumer %s: update config: %w", c.name, err)
	}
	c.mu.Lock()
	c.mu.cfg = append([]byte(nil), cfg...)
	c.mu.Unlock()
	return true, nil
}

// checkCatalog is Check's look at an obs directory's catalogue.
func checkCatalog(fsys vfs.FS, obsDir string) error {
	_, err := readCatalog(fsys, obsDir)
	return err
}
