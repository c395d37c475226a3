package segment

import (
	"fmt"
	"io"

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
	for off := int64(HeaderSize); off < int64(len(b)); {
		var r Record
		n, st, _, _, _ := decodeRecord(b[off:], &r)
		if st != decodeOK {
			if off = findNext(b, off+1, 0); off < 0 {
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
	f, err := fs.OpenRW(path)
	if err != nil {
		return fmt.Errorf("segment: repair header of %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.WriteAt(encodeHeader(base, 0, 0), 0); err != nil {
		return fmt.Errorf("segment: repair header of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("segment: repair header of %s: sync: %w", path, err)
	}
	return nil
}
