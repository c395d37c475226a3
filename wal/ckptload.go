package wal

import (
	"fmt"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/vfs"
)

// decodeCheckpointFile decodes the checkpoint at path, size bytes long.
//
// It reads the file through a read-only mapping rather than into the heap:
// a checkpoint holds 4 bytes per message, and a heap buffer of that size
// would stay in the process's resident set after the restart (Go returns
// freed heap to the OS only slowly), while the mapped pages leave it when
// the mapping goes. The decoded index copies everything it keeps. If the
// file cannot be mapped it is read into memory instead.
func decodeCheckpointFile(fs vfs.FS, path string, size int64) (*index.Index, []byte, error) {
	if size <= 0 || size > 1<<40 {
		return nil, nil, fmt.Errorf("wal: checkpoint %s: size %d: %w", path, size, index.ErrCorrupt)
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if m, err := f.Map(int(size)); err == nil {
		defer m.Unmap()
		if b := m.Bytes(); int64(len(b)) == size {
			return index.Decode(path, b)
		}
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, nil, fmt.Errorf("wal: read checkpoint %s: %w", path, err)
	}
	return index.Decode(path, b)
}
