package segment

import (
	"fmt"
	"io"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// SalvageResult is what Salvage found in a segment file whose header
// cannot be trusted.
type SalvageResult struct {
	Records int    // valid records, tombstones included
	Msgs    int    // valid message records
	MinSeq  uint64 // lowest message sequence (0: no message)
	MaxSeq  uint64 // highest message sequence, or tombstone end - 1
}

// Salvage reads a plain segment file without trusting its header and
// counts the records it still holds, each proven by its own checksum. It
// changes nothing. Package wal uses it to decide whether a segment whose
// header is damaged can be repaired (RepairHeader) or must be set aside,
// and which sequences it had handed out.
func Salvage(fs vfs.FS, path string) (SalvageResult, error) {
	return SalvageKey(fs, path, 0, nil)
}

// SalvageKey is Salvage for a segment of an encrypted store: its records
// are sealed by key, and each counts only if its tag holds too. (Without
// the key, a sealed tombstone's count is unknown: it counts as deleting
// its first sequence only.) base is the segment's base, known from its
// file name: it is in every record's associated data.
func SalvageKey(fs vfs.FS, path string, base uint64, key *crypt.DataKey) (SalvageResult, error) {
	f, err := fs.Open(path)
	if err != nil {
		return SalvageResult{}, fmt.Errorf("segment: salvage %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return SalvageResult{}, fmt.Errorf("segment: salvage %s: %w", path, err)
	}
	b := make([]byte, size)
	if n, err := f.ReadAt(b, 0); n < len(b) && err != nil && err != io.EOF {
		return SalvageResult{}, fmt.Errorf("segment: salvage %s: %w", path, err)
	}
	var res SalvageResult
	ov := 0
	if key != nil {
		ov = crypt.Overhead
	}
	// A sealed record counts only if it opens (with the base from the
	// file name, not the header, which cannot be trusted).
	sk := &Segment{path: path, key: key, ov: ov, hdr: segHeader{base: base}}
	for off := int64(HeaderSize); off < int64(len(b)); {
		var r Record
		n, st, _, _, _ := decodeRecord(b[off:], &r, ov)
		if st == decodeOK && r.raw != nil {
			if _, err := sk.unseal(&r, nil, off); err != nil {
				st = decodeBad
			}
		}
		if st != decodeOK {
			if off = findNext(b, off+1, 0, ov); off < 0 {
				break
			}
			continue
		}
		res.Records++
		switch {
		case r.Tombstone():
			if end := r.Seq + r.TombstoneCount(); end > 0 {
				res.MaxSeq = max(res.MaxSeq, end-1)
			}
		default:
			res.Msgs++
			if res.MinSeq == 0 || r.Seq < res.MinSeq {
				res.MinSeq = r.Seq
			}
			res.MaxSeq = max(res.MaxSeq, r.Seq)
		}
		off += int64(n)
	}
	return res, nil
}

// RepairHeader writes a fresh header for a plain segment starting at base
// (known from the file's name) over a damaged one, and syncs it. The
// records after it are untouched; the creation time is unknown and set to 0.
func RepairHeader(fs vfs.FS, path string, base uint64) error {
	return RepairHeaderKey(fs, path, base, false)
}

// RepairHeaderKey is RepairHeader for a segment whose records are sealed
// (encrypted set) or plain.
func RepairHeaderKey(fs vfs.FS, path string, base uint64, encrypted bool) error {
	var flags byte
	if encrypted {
		flags = SegFlagEncrypted
	}
	f, err := fs.OpenRW(path)
	if err != nil {
		return fmt.Errorf("segment: repair header of %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.WriteAt(encodeHeader(base, 0, flags), 0); err != nil {
		return fmt.Errorf("segment: repair header of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("segment: repair header of %s: sync: %w", path, err)
	}
	return nil
}
