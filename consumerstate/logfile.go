package consumerstate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/vfs"
)

// Log file constants. Part of the on-disk format (see doc.go).
const (
	logMagic      = "JWCL"
	logVersion    = 1
	logHeaderSize = fileHeaderSize
	recMagic      = "JWCR"
	recHeaderSize = 16 // magic, payload length, checksum
	// maxRecordPayload bounds a record's claimed length so that a damaged
	// length cannot make a reader allocate without limit.
	maxRecordPayload = 1 << 30
)

// logName is the name of the log that applies on top of the snapshot of
// generation gen.
func logName(gen uint64) string { return fmt.Sprintf("state-%016x.log", gen) }

// parseLogName returns the generation named by a log file name.
func parseLogName(name string) (uint64, bool) {
	var gen uint64
	if len(name) != len("state-0000000000000000.log") {
		return 0, false
	}
	if _, err := fmt.Sscanf(name, "state-%016x.log", &gen); err != nil {
		return 0, false
	}
	return gen, logName(gen) == name
}

// logHeader returns the header of a log for generation gen, flagged
// sealed when its records are.
func logHeader(gen uint64, sealed bool) []byte {
	return fileHeader(logMagic, logVersion, gen, sealed)
}

// recordSum is the checksum of a record at offset off of the log of
// generation gen; hdr is the record's first 8 bytes (magic and length).
func recordSum(d *xxhash.Digest, gen uint64, off int64, hdr, payload []byte) uint64 {
	var salt [16]byte
	binary.LittleEndian.PutUint64(salt[0:], gen)
	binary.LittleEndian.PutUint64(salt[8:], uint64(off))
	d.Reset()
	_, _ = d.Write(salt[:])
	_, _ = d.Write(hdr)
	_, _ = d.Write(payload)
	return d.Sum64()
}

// appendRecord appends a framed record for payload at file offset off.
func appendRecord(dst []byte, d *xxhash.Digest, gen uint64, off int64, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, recMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	sum := recordSum(d, gen, off, dst[start:start+8], payload)
	dst = binary.LittleEndian.AppendUint64(dst, sum)
	return append(dst, payload...)
}

// logRecord is one record found in a log.
type logRecord struct {
	off         int64 // offset of the record's header
	payload     []byte
	afterDamage bool // a damaged stretch precedes it (parsedLog.damaged)
}

// parsedLog is the readable part of a log.
type parsedLog struct {
	records []logRecord
	// end is the offset just past the last good record. Bytes from end to
	// the file's size are a torn tail: the unsynced remains of a write
	// interrupted by a crash. end 0 means the header itself never became
	// durable (see neverSynced): the log is empty and must be rewritten.
	end int64
	// damaged lists the damaged stretches that good records follow: bit
	// rot or a torn write, not a crash's unsynced tail. The records after
	// each are kept (records[i].afterDamage).
	damaged []Damage
	// opaque: the records are sealed and were read without a key (Check),
	// checked by their checksums only; their payloads are not operations.
	opaque bool
}

// parseLog reads the records of consumer name's log of generation gen. A
// damaged header is corruption. A damaged record followed by a good one is
// damage: it is skipped and listed, and the good records after it are
// kept. A damaged record with nothing good after it is a torn tail,
// reported through end. A sealed record that does not open is damaged
// exactly as one whose checksum fails; the payloads returned are opened.
func parseLog(data []byte, gen uint64, path string, o opener, name string) (parsedLog, error) {
	if neverSynced(data, gen) {
		return parsedLog{end: 0}, nil
	}
	g, sealed, err := parseFileHeader(data, path, "log", logMagic, logVersion, o)
	if err != nil {
		return parsedLog{}, err
	}
	if g != gen {
		return parsedLog{}, corruptf("%s: offset 8: log generation %d, want %d", path, g, gen)
	}
	dec := recordDecoder(o, sealed, func(off int64) []byte { return logAD(name, gen, off) })
	d := xxhash.New()
	pl := parsedLog{opaque: sealed && o.key == nil}
	off := int64(logHeaderSize)
	afterDamage := false
	for off < int64(len(data)) {
		payload, stored, ok := recordAt(d, data, gen, off, dec)
		if !ok {
			next, found := nextGoodRecord(d, data, gen, off+1, dec)
			if !found {
				break
			}
			pl.damaged = append(pl.damaged, Damage{File: path, Offset: off, Bytes: next - off})
			off, afterDamage = next, true
			continue
		}
		pl.records = append(pl.records, logRecord{off: off, payload: payload, afterDamage: afterDamage})
		off += recHeaderSize + int64(stored)
	}
	pl.end = off
	return pl, nil
}

// neverSynced reports whether a log's bytes are what a crash leaves of a
// log that was created but never synced: nothing, a prefix of its header,
// or zeros. A snapshot creates its new log without syncing it; the log's
// first synced append makes the header durable along with the record, so
// such a log never held a durable record.
func neverSynced(data []byte, gen uint64) bool {
	if len(data) < logHeaderSize && (bytes.Equal(data, logHeader(gen, false)[:len(data)]) ||
		bytes.Equal(data, logHeader(gen, true)[:len(data)])) {
		return true
	}
	for _, b := range data {
		if b != 0 {
			return false
		}
	}
	return true
}

// recordAt returns the content of the good record at off, if there is
// one, and the length of its stored payload: dec opens a sealed payload
// (nil: the payload is the content), and a payload that does not open
// makes the record not good, as a checksum failure does.
func recordAt(d *xxhash.Digest, data []byte, gen uint64, off int64, dec decoder) (content []byte, stored int, ok bool) {
	rest := data[off:]
	if len(rest) < recHeaderSize || string(rest[0:4]) != recMagic {
		return nil, 0, false
	}
	n := binary.LittleEndian.Uint32(rest[4:8])
	if n > maxRecordPayload || int64(n) > int64(len(rest)-recHeaderSize) {
		return nil, 0, false
	}
	payload := rest[recHeaderSize : recHeaderSize+int(n)]
	if recordSum(d, gen, off, rest[0:8], payload) != binary.LittleEndian.Uint64(rest[8:16]) {
		return nil, 0, false
	}
	if dec != nil {
		if payload, ok = dec(off, payload); !ok {
			return nil, 0, false
		}
	}
	return payload, int(n), true
}

// nextGoodRecord looks for a good record starting at or after from.
func nextGoodRecord(d *xxhash.Digest, data []byte, gen uint64, from int64, dec decoder) (int64, bool) {
	for from < int64(len(data)) {
		i := bytes.Index(data[from:], []byte(recMagic))
		if i < 0 {
			return 0, false
		}
		at := from + int64(i)
		if _, _, ok := recordAt(d, data, gen, at, dec); ok {
			return at, true
		}
		from = at + 1
	}
	return 0, false
}

// readFile reads a whole file through fsys; one larger than any consumer
// state file is damage.
func readFile(fsys vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fsys, path, maxRecordPayload*2)
	if errors.Is(err, vfs.ErrTooLarge) {
		return nil, corruptf("%s: larger than any consumer state file", path)
	}
	return b, err
}

// writeFile creates path holding b and syncs it. It does not sync the
// directory.
func writeFile(fsys vfs.FS, path string, b []byte) error {
	f, err := fsys.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return fmt.Errorf("%s: write: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("%s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", path, err)
	}
	return nil
}

// namedBytes is a file to write: its name in a directory and its bytes.
type namedBytes struct {
	name string
	b    []byte
}

// writeFilesSynced creates and writes the files in dir, and makes them and
// dir's entries durable together (vfs.SyncAll: about one journal commit
// rather than one per file on the OS filesystem).
func writeFilesSynced(fsys vfs.FS, dir string, files []namedBytes) (err error) {
	open := make([]vfs.File, 0, len(files))
	defer func() {
		for _, f := range open {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("%s: close: %w", f.Name(), cerr)
			}
		}
	}()
	for _, nb := range files {
		path := filepath.Join(dir, nb.name)
		f, err := fsys.Create(path)
		if err != nil {
			return err
		}
		open = append(open, f)
		if _, err := f.WriteAt(nb.b, 0); err != nil {
			return fmt.Errorf("%s: write: %w", path, err)
		}
	}
	if err := vfs.SyncAll(fsys, open, []string{dir}); err != nil {
		return fmt.Errorf("%s: sync: %w", dir, err)
	}
	return nil
}
