package segment

// zeroReadChunk is how much of a file zeroFrom reads per pread.
const zeroReadChunk = 64 << 10

// zeroFrom reports whether bytes [from, to) of the segment hold nothing but
// zeros. b is the segment's readable bytes (its mapping, or a compressed
// segment's decoded body) and to <= len(b).
//
// The bytes past the end of a plain segment's records are its preallocated,
// zero-filled tail, tens of megabytes in an active segment. Reading them
// through the mapping would make every one of those pages resident in the
// process (and keep them there until the mapping is cooled or released),
// although no record will ever be read from them. So a plain segment's
// tail is read with pread into a small buffer instead: the kernel's page
// cache serves it and the process's resident set does not grow. If the
// file cannot be read, the mapping is checked instead.
func (s *Segment) zeroFrom(b []byte, from, to int64) bool {
	if from >= to {
		return true
	}
	if s.compressed || s.f == nil {
		return allZero(b[from:to])
	}
	buf := make([]byte, min(zeroReadChunk, to-from))
	for off := from; off < to; {
		got, err := s.f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
		if !allZero(buf[:got]) {
			return false
		}
		off += int64(got)
		if err != nil && off < to {
			// Short of the mapping's length (or unreadable): check the
			// rest where it is mapped.
			return allZero(b[off:to])
		}
	}
	return true
}
