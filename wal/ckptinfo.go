package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/vfs"
)

// CheckpointSummary is what a store's checkpoint recorded, for checkers
// such as `jetwal verify` that must not open (and so repair) the store.
type CheckpointSummary struct {
	Last    uint64   // last sequence handed out, durable when it was taken
	Bases   []uint64 // the segments it listed, by base sequence
	Covered int64    // how far it covered the last listed segment
	idx     *index.Index
}

// LiveBefore counts the messages the checkpoint knew as live below seq,
// with the lowest and highest of them.
func (c *CheckpointSummary) LiveBefore(seq uint64) (n, first, last uint64) {
	for q, ok := c.idx.Seqs.Next(1); ok && q < seq; q, ok = c.idx.Seqs.Next(q + 1) {
		if n == 0 {
			first = q
		}
		n, last = n+1, q
	}
	return n, first, last
}

// ReadCheckpoint reads the checkpoint of the store in dir without opening
// the store. It returns nil and no error when there is none.
func ReadCheckpoint(fs vfs.FS, dir string) (*CheckpointSummary, error) {
	if fs == nil {
		fs = vfs.Default
	}
	path := filepath.Join(dir, checkpointFile)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("wal: read %s: %w", path, err)
	}
	idx, t, err := index.Decode(path, b)
	if err != nil {
		return nil, err
	}
	// The trailer layout is drawn above trailerVersion (recover.go).
	bad := fmt.Errorf("wal: checkpoint %s: truncated trailer", path)
	if len(t) < 1+8*4+4 || (t[0] != trailerVersion && t[0] != trailerVersionV1) {
		return nil, bad
	}
	le := binary.LittleEndian
	c := &CheckpointSummary{Last: le.Uint64(t[1:]), idx: idx}
	p := 1 + 8*4
	n := int(le.Uint32(t[p:]))
	p += 4
	if n < 1 || len(t) < p+12*n+4+8 {
		return nil, bad
	}
	for range n {
		c.Bases = append(c.Bases, le.Uint64(t[p:]))
		p += 12
	}
	c.Covered = int64(le.Uint64(t[p+4:]))
	return c, nil
}
