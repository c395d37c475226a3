package segment

import (
	"os"
	"path/filepath"
	"testing"

	mmap "github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// BenchmarkWritePath measures the two ways an append can reach a
// preallocated segment file: encoding into a user-space buffer flushed with
// one pwrite per 256 KiB (what Segment does), or encoding straight into a
// writable shared mapping of the file. Each 64 MiB file is created and
// preallocated inside the timed loop, so first-touch page faults of the
// mapping are counted, as they are in a real stream.
func BenchmarkWritePath(b *testing.B) {
	const size = 64 << 20
	data := make([]byte, 128)
	newFile := func(b *testing.B) *os.File {
		f, err := os.Create(filepath.Join(b.TempDir(), "seg"))
		if err != nil {
			b.Fatal(err)
		}
		if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
			f.Truncate(size)
		}
		return f
	}
	rec := EncodedSize(len("bench.subject"), 0, len(data))
	b.Run("pwrite", func(b *testing.B) {
		b.SetBytes(int64(rec))
		f := newFile(b)
		var buf []byte
		var off int64
		for i := 0; i < b.N; i++ {
			if off+int64(len(buf)+rec) > size {
				f.WriteAt(buf, off)
				f.Close()
				f, buf, off = newFile(b), buf[:0], 0
			}
			buf = AppendRecord(buf, 0, uint64(i), 1, "bench.subject", nil, data)
			if len(buf) >= 256<<10 {
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				off += int64(len(buf))
				buf = buf[:0]
			}
		}
		f.Close()
	})
	b.Run("mmap", func(b *testing.B) {
		b.SetBytes(int64(rec))
		f := newFile(b)
		m, err := mmap.Map(f, mmap.RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		off := 0
		for i := 0; i < b.N; i++ {
			if off+rec > size {
				m.Unmap()
				f.Close()
				f = newFile(b)
				if m, err = mmap.Map(f, mmap.RDWR, 0); err != nil {
					b.Fatal(err)
				}
				off = 0
			}
			AppendRecord(m[:off], 0, uint64(i), 1, "bench.subject", nil, data)
			off += rec
		}
		m.Unmap()
		f.Close()
	})
}
