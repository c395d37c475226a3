package index

import (
	"fmt"

	"github.com/jetwal/jetwal/subject"
)

// Checks of a subject entry read from a checkpoint (subjcodec.go), beyond
// the list's marks (seqList.check): what the walks of a list, Remove and
// the plans rely on without checking again. A checkpoint is checksummed, so
// these catch an encoder's bug or a crafted file, not bit rot; either way
// the store rebuilds the index from its segments rather than serve from a
// list that would walk backwards, past 2^64, or through entries it does not
// count.

// walk decodes every entry of l: each mark's varints, read within its own
// block, give exactly its n entries, strictly increasing; marks follow each
// other without overlap; a run does not pass 2^64; the last entry is
// l.last. It costs one pass over buf, which loading needs anyway to be
// trusted later.
func (l *seqList) walk() error {
	var prev uint64
	for j, m := range l.marks {
		if j > 0 && m.seq <= prev {
			return fmt.Errorf("list mark %d starts at %d, not after the entries before it (up to %d)", j, m.seq, prev)
		}
		if l.run(j) {
			end := m.seq + uint64(m.n) - 1
			if end < m.seq {
				return fmt.Errorf("list mark %d: a run of %d from %d passes 2^64", j, m.n, m.seq)
			}
			prev = end
			continue
		}
		cur, n := m.seq, uint32(1)
		p, end := int(m.off), l.blockEnd(j)
		for p < end {
			// A uvarint read inline (a load walks every entry of every
			// list, and binary.Uvarint's call costs as much as the
			// decoding): at most 10 bytes, within the mark's block, a
			// delta of at least 1 that does not pass 2^64.
			var d uint64
			for shift := uint(0); ; shift += 7 {
				if p >= end || shift > 63 {
					return fmt.Errorf("list mark %d: varint cut at byte %d", j, p)
				}
				c := l.buf[p]
				p++
				d |= uint64(c&0x7f) << shift
				if c < 0x80 {
					if shift == 63 && c > 1 {
						return fmt.Errorf("list mark %d: delta past 2^64 at byte %d", j, p)
					}
					break
				}
			}
			if d == 0 || cur+d < cur {
				return fmt.Errorf("list mark %d: bad delta at byte %d", j, p)
			}
			cur += d
			n++
		}
		if n != m.n {
			return fmt.Errorf("list mark %d has %d entries, says %d", j, n, m.n)
		}
		prev = cur
	}
	if len(l.marks) > 0 && prev != l.last {
		return fmt.Errorf("list ends at %d, says %d", prev, l.last)
	}
	return nil
}

// has reports whether q is an entry of l.
func (l *seqList) has(q uint64) bool {
	it := l.from(q)
	for {
		e, ok := it.next()
		if !ok || e > q {
			return false
		}
		if e == q {
			return true
		}
	}
}

// checkEntry checks a decoded subject entry against its list (walked and
// checked already): a valid subject name; msgs live messages, at most the
// list's entries (the list keeps removed entries until it is rebuilt);
// first and last among them, in order.
func checkEntry(name []byte, msgs, first, last uint64, l *seqList) error {
	if !subject.ValidPublish(string(name)) {
		return fmt.Errorf("subject entry with an invalid name %q", name)
	}
	switch {
	case msgs > uint64(l.n):
		return fmt.Errorf("subject %s: %d messages, its list holds %d", name, msgs, l.n)
	case msgs == 1 && first != last, msgs > 1 && first >= last:
		return fmt.Errorf("subject %s: %d messages from %d to %d", name, msgs, first, last)
	case !l.has(first) || !l.has(last):
		return fmt.Errorf("subject %s: first %d or last %d not in its list", name, first, last)
	}
	return nil
}
