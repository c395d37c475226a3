package consumerstate

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/crypt"
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
	catalogHeaderSize = fileHeaderSize
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

// catalogHeader returns the header of a catalogue of generation gen,
// flagged sealed when its records are.
func catalogHeader(gen uint64, sealed bool) []byte {
	return fileHeader(catalogMagic, catalogVersion, gen, sealed)
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
// a torn tail and is left out. Sealed records are opened through o; one
// whose checksum holds but that does not open is corruption (another key
// or tampering, never a torn write). Without a key
// (o.lax) sealed records are checked by their checksums only, not applied.
func parseCatalog(data []byte, path string, o opener) (*catalogContents, error) {
	gen, sealed, err := parseFileHeader(data, path, "catalogue", catalogMagic, catalogVersion, o)
	if err != nil {
		return nil, err
	}
	cc := &catalogContents{
		gen:     gen,
		live:    make(map[string][]byte),
		deleted: make(map[string]bool),
	}
	dec := recordDecoder(o, sealed, func(off int64) []byte { return catalogAD(cc.gen, off) })
	opaque := sealed && o.key == nil
	d := xxhash.New()
	off := int64(catalogHeaderSize)
	for off < int64(len(data)) {
		payload, stored, ok := recordAt(d, data, cc.gen, off, nil)
		if ok && dec != nil {
			// Its checksum holds, so these are the bytes written: a seal
			// that does not open is another key or tampering, never a torn
			// write, and must not be cut off (a compaction would drop
			// every record after it).
			if payload, ok = dec(off, payload); !ok {
				return nil, corruptf("%s: offset %d: sealed catalogue record does not open (another key, or tampered)", path, off)
			}
		}
		if !ok {
			if next, found := nextGoodRecord(d, data, cc.gen, off+1, dec); found {
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
		if !opaque {
			if err := cc.apply(payload); err != nil {
				return nil, corruptf("%s: record at offset %d: %v", path, off, err)
			}
		}
		cc.records++
		off += recHeaderSize + int64(stored)
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

// readCatalog reads and parses obs/catalog.log (opened through o) without
// changing it. A missing catalogue gives nil contents.
func readCatalog(fsys vfs.FS, obsDir string, o opener) (*catalogContents, error) {
	path := filepath.Join(obsDir, catalogFile)
	data, err := readFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseCatalog(data, path, o)
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
	b = append(b, catalogHeader(gen, s.seal.on())...)
	d := xxhash.New()
	live := make(map[string]bool, len(keep))
	for _, r := range keep {
		payload, err := s.sealCatalog(catalogPayload(catOpCreate, r.name, r.cfg), gen, int64(len(b)))
		if err != nil {
			return err
		}
		b = appendRecord(b, d, gen, int64(len(b)), payload)
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
		used += s.catalogRecordSize(catalogPayload(catOpCreate, r.name, r.cfg))
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
	need := s.catalogRecordSize(payload)
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
	// Sealed for this generation and offset (after any compaction).
	payload, err = s.sealCatalog(payload, s.cat.gen, s.cat.end)
	if err != nil {
		return false, err
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

// catalogRecordSize is the stored size of a catalogue record of payload.
func (s *Store) catalogRecordSize(payload []byte) int64 {
	n := int64(recHeaderSize + len(payload))
	if s.seal.on() {
		n += crypt.Overhead
	}
	return n
}

// sealCatalog returns the stored payload of a catalogue record at offset
// off of the catalogue of generation gen: payload itself in a plain store.
func (s *Store) sealCatalog(payload []byte, gen uint64, off int64) ([]byte, error) {
	if !s.seal.on() {
		return payload, nil
	}
	return s.seal.seal(nil, payload, catalogAD(gen, off))
}

// openCatalog reads the catalogue at Open and reconciles the consumer
// directories with it: a live consumer without a directory stays in the
// catalogue, for Load to open (s.cat.unloaded); a deleted consumer whose
// directory remains loses it. Then, if the catalogue holds records no
// longer needed or a torn tail, it is compacted. Called from Open.
func (s *Store) openCatalog() error {
	s.cat.path = filepath.Join(s.dir, catalogFile)
	s.cat.live = make(map[string]bool)
	cc, err := readCatalog(s.fs, s.dir, opener{key: s.opts.Key})
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
//
// meta and snap are meta.inf's and state.dat's stored bytes; sealed flags
// the empty log's header.
func buildConsumerDir(fsys vfs.FS, obsDir, name string, meta, snap []byte, sealed bool) error {
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
			{metaFile, meta}, {metaSumFile, metaSum(meta)}, {stateFile, snap}, {logName(1), logHeader(1, sealed)},
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
func checkCatalog(fsys vfs.FS, obsDir string, o opener) error {
	_, err := readCatalog(fsys, obsDir, o)
	return err
}
