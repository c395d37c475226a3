package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/vfs"
)

// The expiry heap of a stream with per-message TTLs survives a restart in
// a file of its own, written like dedupe.dat (at a clean stop, and every
// 30 s while it changes):
//
//	ttl.dat, little endian
//	0   4  magic "JWT1"
//	4   8  covered: the stream's last sequence when it was written
//	12  4  n: entries
//	16  .. n x { seq u64, expires unix ns i64 }
//	end 8  xxhash64 of everything before
//
// At open the entries are loaded and the messages after covered are read
// for their Nats-TTL headers (all of them when there is no file).
const (
	ttlFile  = "ttl.dat"
	ttlMagic = "JWT1"
)

func encodeTTLs(h ttlHeap, covered uint64) []byte {
	b := make([]byte, 16, 16+len(h)*16+8)
	copy(b, ttlMagic)
	binary.LittleEndian.PutUint64(b[4:], covered)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(h)))
	for _, e := range h {
		b = binary.LittleEndian.AppendUint64(b, e.seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.at))
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

var errTTLFile = errors.New("damaged per-message TTL file")

func decodeTTLs(b []byte, h *ttlHeap) (uint64, error) {
	if len(b) < 24 || string(b[:4]) != ttlMagic {
		return 0, fmt.Errorf("%w: bad header", errTTLFile)
	}
	body := b[:len(b)-8]
	if xxhash.Sum64(body) != binary.LittleEndian.Uint64(b[len(b)-8:]) {
		return 0, fmt.Errorf("%w: checksum mismatch", errTTLFile)
	}
	n := int(binary.LittleEndian.Uint32(body[12:]))
	if len(body) != 16+16*n {
		return 0, fmt.Errorf("%w: %d entries in %d bytes", errTTLFile, n, len(body))
	}
	for i := range n {
		p := 16 + 16*i
		h.add(int64(binary.LittleEndian.Uint64(body[p+8:])), binary.LittleEndian.Uint64(body[p:]))
	}
	return binary.LittleEndian.Uint64(body[4:]), nil
}

// saveTTLs writes the heap (temp file, fsync, rename).
func saveTTLs(fsys vfs.FS, dir string, h ttlHeap, covered uint64) error {
	path := filepath.Join(dir, ttlFile)
	if err := writeFileSync(fsys, path+tmpSuffix, encodeTTLs(h, covered)); err != nil {
		return err
	}
	if err := fsys.Rename(path+tmpSuffix, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return fsys.SyncDir(dir)
}

// loadTTLs reads ttl.dat into h; ok is false without a usable file.
func loadTTLs(fsys vfs.FS, dir string, h *ttlHeap) (covered uint64, ok bool, err error) {
	b, err := readFile(fsys, filepath.Join(dir, ttlFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err == nil {
		covered, err = decodeTTLs(b, h)
	}
	if err != nil {
		*h = (*h)[:0]
		return 0, false, fmt.Errorf("%s: %w", filepath.Join(dir, ttlFile), err)
	}
	return covered, true, nil
}

// saveTTLsIfDue saves a changed heap every dedupeSaveEvery (the sweep).
func (s *stream) saveTTLsIfDue(now time.Time) {
	if s.dir == "" {
		return
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if !s.ttlChanged || now.Sub(s.ttlSaved) < dedupeSaveEvery {
		return
	}
	if err := saveTTLs(s.js.cfg.FS, s.dir, s.ttls, s.ttlCovered()); err != nil {
		s.js.log.Warn("saving per-message TTLs", "stream", s.name, "error", err)
		return
	}
	s.ttlChanged, s.ttlSaved = false, now
}

// ttlCovered is the last sequence whose TTL is in the heap: the stream's
// last, short of any append still in flight. Called with pmu held.
func (s *stream) ttlCovered() uint64 {
	last := s.store.State().LastSeq
	if s.inHead < len(s.inflight) {
		last = min(last, s.inflight[s.inHead].seq-1)
	}
	return last
}
