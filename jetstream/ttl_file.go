package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// The expiry heap of a stream with per-message TTLs survives a restart in
// a file of its own, written like dedupe.dat (at a clean stop, and every
// 30 s while it changes):
//
//	ttl.dat, a sidecar file (sidecar_file.go) of magic "JWT1",
//	covered: the stream's last sequence when it was written,
//	entries: n x { seq u64, expires unix ns i64 }
//
// At open the entries are loaded and the messages after covered are read
// for their Nats-TTL headers (all of them when there is no file).
const (
	ttlFile  = "ttl.dat"
	ttlMagic = "JWT1"
)

func encodeTTLs(h ttlHeap, covered uint64) []byte {
	b := newSidecar(ttlMagic, len(h)*16)
	for _, e := range h {
		b = binary.LittleEndian.AppendUint64(b, e.seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.at))
	}
	return sealSidecar(b, covered, len(h))
}

var errTTLFile = errors.New("damaged per-message TTL file")

func decodeTTLs(b []byte, h *ttlHeap) (uint64, error) {
	body, covered, n, err := openSidecar(b, ttlMagic, errTTLFile)
	if err != nil {
		return 0, err
	}
	if len(body) != sidecarHeader+16*n {
		return 0, fmt.Errorf("%w: %d entries in %d bytes", errTTLFile, n, len(body))
	}
	for i := range n {
		p := sidecarHeader + 16*i
		h.add(int64(binary.LittleEndian.Uint64(body[p+8:])), binary.LittleEndian.Uint64(body[p:]))
	}
	return covered, nil
}

// saveTTLs writes the heap (temp file, fsync, rename).
func saveTTLs(fsys vfs.FS, dir string, fk fileSeal, h ttlHeap, covered uint64) error {
	return saveSidecar(fsys, dir, ttlFile, sealTTL, fk, encodeTTLs(h, covered))
}

// loadTTLs reads ttl.dat into h; ok is false without a usable file.
func loadTTLs(fsys vfs.FS, dir string, fk fileSeal, h *ttlHeap) (covered uint64, ok bool, err error) {
	covered, ok, err = loadSidecar(fsys, dir, ttlFile, sealTTL, fk, func(b []byte) (uint64, error) { return decodeTTLs(b, h) })
	if err != nil {
		*h = (*h)[:0]
	}
	return covered, ok, err
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
	if err := saveTTLs(s.env.cfg.FS, s.dir, s.files, s.ttls, s.ttlCovered()); err != nil {
		s.env.log.Warn("saving per-message TTLs", "stream", s.name, "error", err)
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
