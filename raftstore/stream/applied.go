package stream

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/vfs"
)

// mark is what the FSM knows to be durable in its store: every log entry up
// to Index is applied, the store's last sequence was LastSeq and the
// largest timestamp applied was LastTS.
type mark struct {
	Index   uint64
	LastSeq uint64
	LastTS  int64
}

// The mark file, <dir>/applied, holds two 40-byte slots written in turn, so
// a torn write leaves the other slot whole; the valid slot with the higher
// generation wins (little endian):
//
//	offset size field
//	0      4    magic "JWRA"
//	4      4    generation
//	8      8    index
//	16     8    last sequence
//	24     8    last timestamp (unix ns)
//	32     8    xxhash64 of bytes [0, 32)
const (
	markFile  = "applied"
	markMagic = "JWRA"
	markSlot  = 40
)

type markWriter struct {
	fs   vfs.FS
	path string
	f    vfs.File
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
	mf.f = f
	var b [2 * markSlot]byte
	n, _ := f.ReadAt(b[:], 0)
	le := binary.LittleEndian
	found := false
	for i := 0; i+markSlot <= n; i += markSlot {
		s := b[i : i+markSlot]
		if string(s[:4]) != markMagic || le.Uint64(s[32:]) != xxhash.Sum64(s[:32]) {
			continue
		}
		if g := le.Uint32(s[4:]); !found || g > mf.gen {
			found, mf.gen = true, g
			m = mark{Index: le.Uint64(s[8:]), LastSeq: le.Uint64(s[16:]), LastTS: int64(le.Uint64(s[24:]))}
		}
	}
	return mf, m, nil
}

// write makes m the durable mark: one slot write and an fdatasync.
func (mf *markWriter) write(m mark) error {
	mf.gen++
	var s [markSlot]byte
	le := binary.LittleEndian
	copy(s[:], markMagic)
	le.PutUint32(s[4:], mf.gen)
	le.PutUint64(s[8:], m.Index)
	le.PutUint64(s[16:], m.LastSeq)
	le.PutUint64(s[24:], uint64(m.LastTS))
	le.PutUint64(s[32:], xxhash.Sum64(s[:32]))
	off := int64(mf.gen%2) * markSlot
	if _, err := mf.f.WriteAt(s[:], off); err != nil {
		return fmt.Errorf("stream: %s: offset %d: write applied mark: %w", mf.path, off, err)
	}
	if err := mf.f.Sync(); err != nil {
		return fmt.Errorf("stream: %s: sync applied mark: %w", mf.path, err)
	}
	return nil
}

func (mf *markWriter) close() error { return mf.f.Close() }
