package raftlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/cespare/xxhash/v2"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// A slot file holds one small value durably with one write and one
// fdatasync per update. It has two slots of equal size, each a
// self-checksummed copy of the value with a generation number; an update
// overwrites the older slot in place and syncs it. A crash tears at most the
// slot being written, and the other still holds the previous value, so a
// reader (the slot with the highest generation that checks) sees the old
// value or the new one, never a mix. The meta and stable files are slot
// files.
//
// Slot (little endian):
//
//	offset size field
//	0      4    magic "JWRS"
//	4      1    version (1)
//	5      1    kind: 1 meta, 2 stable
//	6      2    reserved, zero
//	8      8    generation, from 1; an all-zero slot was never written
//	16     4    payload length P
//	20     4    reserved, zero
//	24     P    payload
//	24+P   8    xxhash64 of bytes [0, 24+P)
//
// The file is 2 × slot size bytes; slot 1 starts at slot size. A value too
// large for its slot moves the file to bigger slots: a new file is written
// whole, synced and renamed over the old one (then the directory is synced).
const (
	slotMagic      = "JWRS"
	slotHeader     = 24
	minSlotSize    = 512
	slotKindMeta   = 1
	slotKindStable = 2
)

type slotFile struct {
	fs   vfs.FS
	path string
	kind byte
	size int64  // slot size; 0 until the file exists
	gen  uint64 // generation of the newest valid slot
	cur  int    // index of that slot
}

// load reads the newest valid slot's payload. It returns an error wrapping
// os.ErrNotExist when the file is missing.
func (sf *slotFile) load() ([]byte, error) {
	b, err := readFile(sf.fs, sf.path)
	if err != nil {
		return nil, err
	}
	p, gen, cur, size, err := decodeSlots(sf.path, sf.kind, b)
	if err != nil {
		return nil, err
	}
	sf.gen, sf.cur, sf.size = gen, cur, size
	return p, nil
}

// decodeSlots returns the payload of the newest valid slot of file bytes b,
// its generation, index and the slot size.
func decodeSlots(path string, kind byte, b []byte) ([]byte, uint64, int, int64, error) {
	if len(b) < 2*minSlotSize || len(b)%2 != 0 {
		return nil, 0, 0, 0, corrupt(path, 0, "file of %d bytes is not two slots", len(b))
	}
	size := int64(len(b) / 2)
	var best []byte
	var bestGen uint64
	bestIdx := -1
	var firstErr error
	for i := 0; i < 2; i++ {
		s := b[int64(i)*size : int64(i+1)*size]
		p, gen, err := decodeSlot(path, int64(i)*size, kind, s)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if gen > bestGen {
			best, bestGen, bestIdx = p, gen, i
		}
	}
	if bestIdx < 0 {
		if firstErr == nil {
			firstErr = corrupt(path, 0, "no slot was ever written")
		}
		return nil, 0, 0, 0, firstErr
	}
	return best, bestGen, bestIdx, size, nil
}

// decodeSlot checks one slot. An all-zero slot has generation 0 and no error.
func decodeSlot(path string, off int64, kind byte, s []byte) ([]byte, uint64, error) {
	if binary.LittleEndian.Uint64(s[8:]) == 0 && string(s[:4]) != slotMagic {
		return nil, 0, nil // never written
	}
	if string(s[:4]) != slotMagic {
		return nil, 0, corrupt(path, off, "bad slot magic %q", s[:4])
	}
	n := int64(binary.LittleEndian.Uint32(s[16:]))
	if slotHeader+n+8 > int64(len(s)) {
		return nil, 0, corrupt(path, off+16, "slot payload of %d bytes overruns the %d-byte slot", n, len(s))
	}
	end := slotHeader + n
	if want, got := binary.LittleEndian.Uint64(s[end:]), xxhash.Sum64(s[:end]); want != got {
		return nil, 0, &segment.CorruptError{File: path, Offset: off + end, Reason: "slot checksum mismatch", Expected: want, Actual: got}
	}
	if s[4] != fileVersion {
		return nil, 0, fmt.Errorf("%s: offset %d: unsupported raftlog format version %d", path, off, s[4])
	}
	if s[5] != kind {
		return nil, 0, corrupt(path, off+5, "slot kind %d, want %d", s[5], kind)
	}
	return s[slotHeader:end], binary.LittleEndian.Uint64(s[8:]), nil
}

func encodeSlot(kind byte, gen uint64, payload []byte, size int64) []byte {
	s := make([]byte, size)
	copy(s, slotMagic)
	s[4] = fileVersion
	s[5] = kind
	binary.LittleEndian.PutUint64(s[8:], gen)
	binary.LittleEndian.PutUint32(s[16:], uint32(len(payload)))
	copy(s[slotHeader:], payload)
	end := slotHeader + len(payload)
	binary.LittleEndian.PutUint64(s[end:], xxhash.Sum64(s[:end]))
	return s
}

// write stores payload durably: in place in the older slot with one sync,
// or by replacing the file when it does not exist yet or the payload needs
// bigger slots.
func (sf *slotFile) write(payload []byte) error {
	need := int64(slotHeader + len(payload) + 8)
	gen := sf.gen + 1
	if sf.size == 0 || need > sf.size {
		size := int64(minSlotSize)
		for size < need {
			size *= 2
		}
		b := make([]byte, 2*size)
		copy(b, encodeSlot(sf.kind, gen, payload, size))
		if err := writeFileAtomic(sf.fs, sf.path, b); err != nil {
			return err
		}
		sf.size, sf.gen, sf.cur = size, gen, 0
		return nil
	}
	next := 1 - sf.cur
	f, err := sf.fs.OpenRW(sf.path)
	if err != nil {
		return fmt.Errorf("raftlog: open %s: %w", sf.path, err)
	}
	off := int64(next) * sf.size
	if _, err := f.WriteAt(encodeSlot(sf.kind, gen, payload, sf.size), off); err != nil {
		f.Close()
		return fmt.Errorf("raftlog: write %s at offset %d: %w", sf.path, off, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("raftlog: sync %s: %w", sf.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("raftlog: close %s: %w", sf.path, err)
	}
	sf.gen, sf.cur = gen, next
	return nil
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
