package wal

import (
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// TestRollWithTombsOverflowing: a roll first writes the tombstones of
// pending limit evictions into the segment it leaves. When there are more
// of them than the segment's tombstone reserve holds, writing them rolls
// to a segment of the very base the outer roll was about to create. The
// outer roll must take that segment, not create a second file of the same
// name over it: sealing the first one then trimmed the shared file to its
// own end (its tombstones), cutting off the messages written through the
// second, acknowledged and synced (found by TestAtomicBatchCrash, seed
// 7221562005968541521, as a lost append after recovery).
func TestRollWithTombsOverflowing(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", crash), func(t *testing.T) {
			mem := vfs.NewMemFS()
			opts := Options{FS: mem, Sync: SyncNever, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10, CheckpointEvery: -1}
			s, err := Open("/db", opts)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, 100)
			n := segment.EncodedSize(len("s.000"), 0, len(data))
			// Fill the first segment until one more message would not fit.
			count := 0
			for {
				s.mu.Lock()
				full := !s.active.seg.Room(n + tombReserve)
				s.mu.Unlock()
				if full {
					break
				}
				if _, _, err := s.Append(fmt.Sprintf("s.%03d", count), nil, data); err != nil {
					t.Fatal(err)
				}
				count++
			}
			if count < 2*40 {
				t.Fatalf("only %d messages fit", count)
			}
			// 40 evictions of every other message: 40 tombstone ranges, more
			// than the 32 the segment keeps room for, queued for the roll.
			s.mu.Lock()
			for seq := uint64(1); seq <= 80; seq += 2 {
				s.evictLocked(seq)
			}
			if len(s.tombs) != 40 {
				s.mu.Unlock()
				t.Fatalf("%d tombstone ranges queued, want 40", len(s.tombs))
			}
			s.mu.Unlock()
			// This append does not fit: it rolls, and the roll writes the
			// tombstones first.
			seq, _, err := s.Append("s.new", nil, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			bases := map[uint64]bool{}
			for _, e := range s.segs {
				if bases[e.seg.Base()] {
					t.Errorf("two segments of base %d", e.seg.Base())
				}
				bases[e.seg.Base()] = true
			}
			s.mu.Unlock()
			s.finishSeals() // the old segments' trims and fsyncs, done
			fs := mem
			if crash {
				fs = mem.ProcessCrashClone()
				abandon(s)
			} else if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			o := opts
			o.FS = fs
			s2, err := Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if r := s2.Recovery(); len(r.Corrupt) > 0 || r.TornTail != nil {
				t.Fatalf("recovery found damage: %+v", r)
			}
			got := contents(t, s2)
			var want string
			{
				// Build the expected listing from the first store's rules:
				// odd sequences up to 79 evicted, the rest kept.
				m, err := Open(t.TempDir(), Options{Sync: SyncNever, CheckpointEvery: -1})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < count; i++ {
					if _, _, err := m.Append(fmt.Sprintf("s.%03d", i), nil, data); err != nil {
						t.Fatal(err)
					}
				}
				if _, _, err := m.Append("s.new", nil, data); err != nil {
					t.Fatal(err)
				}
				for q := uint64(1); q <= 80; q += 2 {
					if err := m.Delete(q, false); err != nil {
						t.Fatal(err)
					}
				}
				want = contents(t, m)
				m.Close()
			}
			if got != want {
				t.Fatalf("after reopening, sequence %d appended after the roll:\n%s\nwant:\n%s", seq, got, want)
			}
		})
	}
}
