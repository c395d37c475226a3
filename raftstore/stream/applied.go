package stream

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/vfs"
)

// mark is what the FSM knows to be durable in its store: every log entry up
// to Index is applied, and so are the first Sub messages of entry Index+1
// (an OpAppendBatch marked in its middle, after a message it refused); the
// store's last sequence was LastSeq and the largest timestamp applied was
// LastTS.
type mark struct {
	Index   uint64
	Sub     uint64
	LastSeq uint64
	LastTS  int64
}

// The mark file, <dir>/applied, holds slots written in turn, so a torn
// write leaves the one written before it whole; the valid slot with the
// highest generation wins (generations run on across both formats).
// Version 1 (40-byte slots at offsets 0 and 40, read only: a file written
// before batches) and version 2 (48-byte slots at offsets 80 and 128, the
// one written now, generation g at 80 + 48 × (g mod 2)), little endian:
//
//	v1 offset size field            v2 offset size field
//	   0      4    magic "JWRA"        0      4    magic "JWR2"
//	   4      4    generation          4      4    generation
//	   8      8    index               8      8    index
//	   16     8    last sequence       16     8    sub (messages of entry index+1)
//	   24     8    last timestamp      24     8    last sequence
//	   32     8    xxhash64 of [0,32)  32     8    last timestamp (unix ns)
//	                                   40     8    xxhash64 of [0,40)
//
// A version 2 write never touches the version 1 slots, so the first mark
// written after an upgrade may tear with the old marks still whole.
// (A downgrade is not supported: an older binary reads only version 1
// slots and cannot decode OpAppendBatch entries.)
const (
	markFile    = "applied"
	markMagic   = "JWRA"
	markSlot    = 40
	markMagic2  = "JWR2"
	markSlot2   = 48
	markOffset2 = 2 * markSlot
	markSize    = markOffset2 + 2*markSlot2
)

// markWriter writes the mark file. It holds no descriptor between writes:
// marks are written between entries that are not plain appends (deletes,
// purges, snapshots, a batch cut short), rarely next to the syncs each
// costs, and a server holding thousands of replicas would otherwise keep a
// descriptor open for each.
type markWriter struct {
	fs   vfs.FS
	path string
	gen  uint32
}

// openMark opens (or creates) the mark file in dir and reads the newest
// valid mark; a missing or unreadable file is the zero mark.
func openMark(fs vfs.FS, dir string) (*markWriter, mark, error) {
	path := filepath.Join(dir, markFile)
	mf := &markWriter{fs: fs, path: path}
	var m mark
	f, err := fs.OpenRW(path)
	if err != nil {
		if f, err = fs.Create(path); err != nil {
			return nil, m, fmt.Errorf("stream: create %s: %w", path, err)
		}
		if err := fs.SyncDir(dir); err != nil {
			f.Close()
			return nil, m, fmt.Errorf("stream: sync %s: %w", dir, err)
		}
	}
	var b [markSize]byte
	n, _ := f.ReadAt(b[:], 0)
	m, mf.gen, _ = readMarks(b[:n])
	if err := f.Close(); err != nil {
		return nil, m, fmt.Errorf("stream: close %s: %w", path, err)
	}
	return mf, m, nil
}

// readMarks returns the newest valid mark in the mark file's bytes b and
// its generation; ok is false when there is none.
func readMarks(b []byte) (m mark, gen uint32, ok bool) {
	le := binary.LittleEndian
	take := func(g uint32, c mark) {
		if !ok || g > gen {
			ok, gen, m = true, g, c
		}
	}
	for off := 0; off+markSlot <= min(len(b), markOffset2); off += markSlot {
		s := b[off : off+markSlot]
		if string(s[:4]) == markMagic && le.Uint64(s[32:]) == xxhash.Sum64(s[:32]) {
			take(le.Uint32(s[4:]), mark{Index: le.Uint64(s[8:]), LastSeq: le.Uint64(s[16:]), LastTS: int64(le.Uint64(s[24:]))})
		}
	}
	for off := markOffset2; off+markSlot2 <= len(b); off += markSlot2 {
		s := b[off : off+markSlot2]
		if string(s[:4]) == markMagic2 && le.Uint64(s[40:]) == xxhash.Sum64(s[:40]) {
			take(le.Uint32(s[4:]), mark{Index: le.Uint64(s[8:]), Sub: le.Uint64(s[16:]),
				LastSeq: le.Uint64(s[24:]), LastTS: int64(le.Uint64(s[32:]))})
		}
	}
	return m, gen, ok
}

// write makes m the durable mark: one slot write and an fdatasync.
func (mf *markWriter) write(m mark) error {
	mf.gen++
	var s [markSlot2]byte
	le := binary.LittleEndian
	copy(s[:], markMagic2)
	le.PutUint32(s[4:], mf.gen)
	le.PutUint64(s[8:], m.Index)
	le.PutUint64(s[16:], m.Sub)
	le.PutUint64(s[24:], m.LastSeq)
	le.PutUint64(s[32:], uint64(m.LastTS))
	le.PutUint64(s[40:], xxhash.Sum64(s[:40]))
	off := int64(markOffset2) + int64(mf.gen%2)*markSlot2
	f, err := mf.fs.OpenRW(mf.path)
	if err != nil {
		return fmt.Errorf("stream: open %s to write the applied mark: %w", mf.path, err)
	}
	if _, err := f.WriteAt(s[:], off); err != nil {
		f.Close()
		return fmt.Errorf("stream: %s: offset %d: write applied mark: %w", mf.path, off, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("stream: %s: sync applied mark: %w", mf.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("stream: %s: close after writing the applied mark: %w", mf.path, err)
	}
	return nil
}
