package segment

import (
	"fmt"
	"io"
)

// Zero-ahead: a segment whose every write is followed by an fdatasync (a
// raft log) writes zeros ahead of its records, so that the records land on
// blocks already written.
//
// A segment file is preallocated with fallocate, which reserves blocks as
// unwritten extents. The first write into such a block changes the extent
// tree, so the fdatasync after it must commit the filesystem's journal as
// well as the data; ext4 commits one journal at a time for every process,
// so syncs of several stores on one disk queue behind each other. Writing
// zeros over the reserved space first makes the extents written, and the
// fdatasync of a later record write is a data flush alone. On this
// machine's ext4 a 40 KB write plus fdatasync took 184-216 µs into an
// fallocated file and 104-118 µs into a zero-written one (quiet disk; the
// journal contention under load widens the gap). BenchmarkSyncedAppend
// measures both.
//
// Zeroing the whole capacity at creation would stall a raft log's roll to
// a 64 MiB segment for tens of milliseconds, so the zeros go in chunks:
// when a write ends within half a chunk of what is zeroed, the same flush
// writes zeroChunk more beyond it. Only the sync after such a flush
// converts extents, one in every zeroChunk bytes of records. The zeros lie
// past the end of the records, where a scan already expects zeros (or stops
// at a bad record), so a crash at any point leaves a segment that recovers
// as before. Zero-ahead is an optimization: if writing the zeros fails (a
// full disk where preallocation is unsupported), the segment stops zeroing
// and the records' own write reports the disk's state.
const zeroChunk = 1 << 20

// zeros is the source of the zero writes (never written).
var zeros [zeroChunk]byte

// SetZeroAhead turns zero-ahead on or off for the segment's next writes.
func (s *Segment) SetZeroAhead(on bool) { s.zeroAhead = on }

// planZero returns the range to zero after a write ending at writeEnd,
// empty when none is due, and counts it as zeroed.
func (s *Segment) planZero(writeEnd int64) (from, to int64) {
	if !s.zeroAhead || s.sealed || writeEnd+zeroChunk/2 <= s.zeroed {
		return 0, 0
	}
	from = max(s.zeroed, writeEnd)
	to = min(s.capacity, writeEnd+zeroChunk)
	if from >= to {
		return 0, 0
	}
	s.zeroed = to
	return from, to
}

// writeZeros writes zeros over [from, to) of f.
func writeZeros(f io.WriterAt, path string, from, to int64) error {
	for off := from; off < to; {
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("segment: zero ahead in %s at offset %d: %w", path, off, err)
		}
		off += n
	}
	return nil
}
