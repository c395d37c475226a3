package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/jetstream/internal/dedupe"
	"github.com/jetwal/jetwal/vfs"
)

// The duplicate window survives a clean stop in a file of its own, so that
// a restart does not read every message stored within the window (at a
// high publish rate, millions of them, paging the whole store in) to find
// the Nats-Msg-Id headers:
//
//	dedupe.dat, a sidecar file (sidecar_file.go) of magic "JWD1",
//	covered: the stream's last sequence when it was written,
//	entries: n x { seq u64, ts i64, idLen u16, id }
//
// At open the entries still inside the window are loaded and only the
// messages after covered are read (none after a clean stop). The file is
// written at close and, while ids are being added, every 30 s; after a
// crash it is older and the messages appended since are read, as far back
// as the window reaches.
const (
	dedupeFile  = "dedupe.dat"
	dedupeMagic = "JWD1"
)

func encodeDedupe(d *dedupe.Table, covered uint64) []byte {
	b := newSidecar(dedupeMagic, d.Len()*32)
	n := 0
	for e, current := range d.Arrived() {
		if e.Pending && e.Seq > 0 {
			// Not yet stored: the file covers only what comes before it,
			// so a restart reads this message (if it was stored) again.
			covered = min(covered, e.Seq-1)
		}
		if e.Pending || !current || len(e.ID) > 1<<16-1 {
			continue
		}
		b = binary.LittleEndian.AppendUint64(b, e.Seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.TS))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(e.ID)))
		b = append(b, e.ID...)
		n++
	}
	return sealSidecar(b, covered, n)
}

// dedupeSaveEvery is how often a running stream saves a changed window, so
// that a restart after a crash reads at most that much of the stream.
const dedupeSaveEvery = 30 * time.Second

// saveDedupeIfDue saves s's window when messages were stored since the
// last save and dedupeSaveEvery has passed (the sweep goroutine calls it):
// even an empty window is worth saving, as it tells a restart after a
// crash where to start reading.
func (s *stream) saveDedupeIfDue(now time.Time) {
	if s.dir == "" {
		return
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	d := s.dedup
	if now.Sub(d.Saved) < dedupeSaveEvery {
		return
	}
	last := s.store.State().LastSeq
	if !d.Added && last == d.SavedSeq {
		// Nothing to save: look again a period from now, not at every
		// sweep (a State per idle stream per second adds up on a server
		// of thousands of streams). A message stored meanwhile is saved
		// at most a period and a sweep after it.
		d.Saved = now
		return
	}
	// Held under pmu: completions wait, so no entry turns from pending to
	// stored while the file is encoded.
	if err := saveDedupe(s.env.cfg.FS, s.dir, s.files, d, last); err != nil {
		s.env.log.Warn("saving the duplicate window", "stream", s.name, "error", err)
		return
	}
	d.Added, d.Saved, d.SavedSeq = false, now, last
}

// errDedupeFile is wrapped by every complaint about a damaged dedupe.dat.
var errDedupeFile = errors.New("damaged duplicate-window file")

// decodeDedupe adds the file's entries to d (in their stored order) and
// returns the sequence the file covers.
func decodeDedupe(b []byte, d *dedupe.Table) (uint64, error) {
	body, covered, n, err := openSidecar(b, dedupeMagic, errDedupeFile)
	if err != nil {
		return 0, err
	}
	p := sidecarHeader
	for range n {
		if p+18 > len(body) {
			return 0, fmt.Errorf("%w: offset %d: truncated entry", errDedupeFile, p)
		}
		seq := binary.LittleEndian.Uint64(body[p:])
		ts := int64(binary.LittleEndian.Uint64(body[p+8:]))
		l := int(binary.LittleEndian.Uint16(body[p+16:]))
		p += 18
		if p+l > len(body) {
			return 0, fmt.Errorf("%w: offset %d: truncated id", errDedupeFile, p)
		}
		d.Add(string(body[p:p+l]), seq, ts, false)
		p += l
	}
	return covered, nil
}

// saveDedupe writes the window at a clean close (temp file, fsync, rename).
func saveDedupe(fsys vfs.FS, dir string, fk fileSeal, d *dedupe.Table, covered uint64) error {
	return saveSidecar(fsys, dir, dedupeFile, sealDedupe, fk, encodeDedupe(d, covered))
}

// loadDedupe reads dedupe.dat into d. ok is false when there is no usable
// file (none, or damaged: then err says why and the caller rescans).
func loadDedupe(fsys vfs.FS, dir string, fk fileSeal, d *dedupe.Table) (covered uint64, ok bool, err error) {
	return loadSidecar(fsys, dir, dedupeFile, sealDedupe, fk, func(b []byte) (uint64, error) { return decodeDedupe(b, d) })
}
