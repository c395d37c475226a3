package segment

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// Dump writes a listing of the segment file at path to w (what `jetwal
// dump` prints): a header line, then one line per record — offset,
// sequence, time, header and data sizes, the stored xxhash64 and the
// subject; a tombstone with the range it deletes — each damaged range with
// its offset and where valid records resume, and a closing count. It
// returns the number of damaged ranges; the error is for a file it could
// not read.
func Dump(fs vfs.FS, path string, w io.Writer) (damaged int, err error) {
	seg, err := Open(fs, path, false)
	if err != nil {
		return 0, err
	}
	defer seg.Close()
	fmt.Fprintf(w, "segment %s base %d created %s compressed %v\n",
		path, seg.Base(), time.Unix(0, seg.Created()).UTC().Format(time.RFC3339Nano), seg.Compressed())
	fmt.Fprintf(w, "%-10s %-10s %-35s %-8s %-8s %-16s %s\n", "offset", "seq", "time", "hdr", "data", "checksum", "subject")
	records := 0
	res, err := seg.ScanDamage(HeaderSize, 0, func(off int64, r *Record) error {
		records++
		ts := time.Unix(0, r.Time).UTC().Format(time.RFC3339Nano)
		sum := recordChecksum(r)
		switch {
		case r.Tombstone():
			c := r.TombstoneCount()
			fmt.Fprintf(w, "%-10d %-10s %-35s %-8s %-8s %016x tombstone: deletes %d-%d\n",
				off, "-", ts, "-", "-", sum, r.Seq, r.Seq+c-1)
		default:
			subj := strconv.Quote(string(r.Subject))
			if r.Flags&FlagErased != 0 {
				subj = "(erased)"
			}
			fmt.Fprintf(w, "%-10d %-10d %-35s %-8d %-8d %016x %s\n",
				off, r.Seq, ts, len(r.Header), len(r.Data), sum, subj)
		}
		return nil
	}, func(d Damage) {
		damaged++
		next := "nothing valid after it"
		if d.Resync >= 0 {
			next = fmt.Sprintf("next valid record at offset %d", d.Resync)
		}
		fmt.Fprintf(w, "DAMAGED %v; %s\n", d.Err, next)
	})
	if err != nil {
		return damaged, err
	}
	fmt.Fprintf(w, "%d records, end of data at offset %d, %d damaged ranges\n", records, res.End, damaged)
	return damaged, nil
}

// recordChecksum is the record's stored xxhash64: a record Scan returned
// passed its checksum, so re-encoding it reproduces the stored value (this
// works for compressed segments too, whose raw record bytes are not on disk).
func recordChecksum(r *Record) uint64 {
	b := AppendRecord(nil, r.Flags, r.Seq, r.Time, string(r.Subject), r.Header, r.Data)
	return binary.LittleEndian.Uint64(b[len(b)-ChecksumSize:])
}
