package segment

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// zeroWriteFS records the writes made to the files it creates, in order.
type zeroWriteFS struct {
	vfs.FS
	mu     sync.Mutex
	writes []fileWrite
}

type fileWrite struct {
	off, end int64
	zeros    bool
}

type zeroWriteFile struct {
	vfs.File
	fs *zeroWriteFS
}

func (z *zeroWriteFS) Create(name string) (vfs.File, error) {
	f, err := z.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &zeroWriteFile{File: f, fs: z}, nil
}

func (f *zeroWriteFile) WriteAt(p []byte, off int64) (int, error) {
	zeros := len(p) > 0 && !bytes.ContainsFunc(p, func(r rune) bool { return r != 0 })
	f.fs.mu.Lock()
	f.fs.writes = append(f.fs.writes, fileWrite{off, off + int64(len(p)), zeros})
	f.fs.mu.Unlock()
	return f.File.WriteAt(p, off)
}

// TestZeroAhead: with zero-ahead on, flushes write zeros in chunks just
// past the records (never over them, never past the capacity), so every
// record lands on zeroed space after the first chunk; the records read
// back and survive a reopen. Off, no zeros are written. Both the inline
// and the background flush.
func TestZeroAhead(t *testing.T) {
	data := bytes.Repeat([]byte{0xAB}, 4000)
	const records = 1200 // about 4.9 MB: several chunks, past the capacity's end
	for _, bg := range []bool{false, true} {
		for _, on := range []bool{false, true} {
			dir := t.TempDir()
			fs := &zeroWriteFS{FS: vfs.Default}
			capacity := int64(5 * zeroChunk)
			s, err := Create(fs, dir, 1, 1, capacity)
			if err != nil {
				t.Fatal(err)
			}
			s.SetZeroAhead(on)
			for i := 0; i < records; i++ {
				if _, err := s.Append(0, uint64(i+1), int64(i), "zero.ahead", nil, data); err == ErrFull {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if i%25 != 24 {
					continue
				}
				if bg {
					if err := s.StartFlush(0); err != nil {
						t.Fatal(err)
					}
					if err := s.WaitFlush(); err != nil {
						t.Fatal(err)
					}
				} else if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			end, n := s.End(), 0
			s.Close()
			zeroWrites, zeroed := 0, int64(0)
			for i, w := range fs.writes {
				if !w.zeros {
					// Once zeros were written, records land on them.
					if zeroWrites > 0 && w.end > zeroed {
						t.Fatalf("bg=%v: records at [%d,%d) past the zeroed space %d", bg, w.off, w.end, zeroed)
					}
					continue
				}
				if !on {
					t.Fatalf("bg=%v off: zeros written at [%d,%d)", bg, w.off, w.end)
				}
				zeroWrites++
				if w.end > capacity {
					t.Fatalf("bg=%v: zeros at [%d,%d) past the capacity %d", bg, w.off, w.end, capacity)
				}
				for _, r := range fs.writes[:i] {
					if !r.zeros && r.off < w.end && r.end > w.off {
						t.Fatalf("bg=%v: zeros at [%d,%d) over records at [%d,%d)", bg, w.off, w.end, r.off, r.end)
					}
				}
				zeroed = max(zeroed, w.end)
			}
			if on && zeroWrites < 4 {
				t.Fatalf("bg=%v: %d zero writes, want one per chunk", bg, zeroWrites)
			}
			r, err := Open(vfs.Default, filepath.Join(dir, FileName(1, false)), true)
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Scan(func(off int64, rec *Record) error {
				n++
				if !bytes.Equal(rec.Data, data) || rec.Seq != uint64(n) {
					t.Fatalf("bg=%v on=%v: record %d at %d reads back wrong", bg, on, n, off)
				}
				return nil
			})
			if err != nil || res.End != end || len(res.Damage) != 0 {
				t.Fatalf("bg=%v on=%v: scan %d records to %d (%v, damage %v), want to %d", bg, on, n, res.End, err, res.Damage, end)
			}
			r.Close()
		}
	}
}

// BenchmarkSyncedAppend: a 40 KB write plus fdatasync per op (a raft log's
// StoreEntries of about 200 messages), into a fresh fallocated segment
// with and without zero-ahead. Reports µs per synced write.
func BenchmarkSyncedAppend(b *testing.B) {
	data := make([]byte, 200)
	for _, on := range []bool{false, true} {
		name := "zeroahead=off"
		if on {
			name = "zeroahead=on"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			var s *Segment
			base := uint64(1)
			next := func() {
				if s != nil {
					s.Close()
				}
				var err error
				if s, err = Create(vfs.Default, dir, base, 1, 64<<20); err != nil {
					b.Fatal(err)
				}
				s.SetZeroAhead(on)
			}
			next()
			b.SetBytes(200 * int64(len(data)))
			start := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := 0; j < 200; j++ {
					_, err := s.Append(0, base, 1, "bench.subject", nil, data)
					if err == ErrFull {
						b.StopTimer()
						if err := s.Flush(); err != nil {
							b.Fatal(err)
						}
						next()
						b.StartTimer()
						_, err = s.Append(0, base, 1, "bench.subject", nil, data)
					}
					if err != nil {
						b.Fatal(err)
					}
					base++
				}
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/sync")
			s.Close()
		})
	}
}
