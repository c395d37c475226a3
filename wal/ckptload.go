package wal

import (
	"fmt"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/vfs"
)

// decodeCheckpointFile decodes the checkpoint at path, size bytes long.
//
// It reads the file through a read-only mapping rather than into the heap,
// and the decoded index keeps referring to the mapping: a packed block of
// the sequence index (about 1.1 bytes per message) is read in place
// (index.DecodeInPlace), so it costs page cache instead of heap. Once
// decoded, the mapping is cooled: the pages the checksum and the decode
// read leave the resident set, and a block becomes resident again only
// when a reader looks a sequence up in it. The caller keeps the returned
// mapping until the index and everything decoded from it are gone (the
// store's Close); nil means the index holds no reference. A checkpoint is
// never written in place (a new one is renamed over it), so the mapped
// file does not change. If the file cannot be mapped it is read into
// memory and decoded by copying.
func decodeCheckpointFile(fs vfs.FS, path string, size int64) (*index.Index, []byte, vfs.Mapping, error) {
	if size <= 0 || size > 1<<40 {
		return nil, nil, nil, fmt.Errorf("wal: checkpoint %s: size %d: %w", path, size, index.ErrCorrupt)
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	if m, err := f.Map(int(size)); err == nil {
		if b := m.Bytes(); int64(len(b)) == size {
			idx, t, err := index.DecodeInPlace(path, b)
			if err != nil {
				m.Unmap()
				return nil, nil, nil, err
			}
			m.Cool()
			return idx, t, m, nil
		}
		m.Unmap()
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, nil, nil, fmt.Errorf("wal: read checkpoint %s: %w", path, err)
	}
	idx, t, err := index.Decode(path, b)
	return idx, t, nil, err
}

// releaseCheckpointMap unmaps the checkpoint the index was decoded from,
// after dropping every reference into it: the recovery evidence, and with
// dropIndex the index (an empty one takes its place, so that a late reader
// finds nothing rather than unmapped memory). Without dropIndex the caller
// knows the index was not decoded from it.
func (s *Store) releaseCheckpointMap(dropIndex bool) {
	if s.ckptMap == nil {
		return
	}
	if dropIndex {
		s.idx = index.New()
	}
	s.ckpt = nil
	s.ckptMap.Unmap()
	s.ckptMap = nil
}

// adoptCheckpoint moves the packed blocks of the sequence index out of the
// heap (or out of the previous checkpoint's mapping) into a mapping of the
// checkpoint just written at path, size bytes long, durable and renamed
// into place: after each checkpoint, as after a restart, the sealed index
// costs page cache, not heap, and the previous checkpoint's mapping, and
// with it its disk space, is released. If the new file cannot be mapped
// or does not hold the blocks exactly, nothing changes. Not during
// recovery, whose evidence (s.ckpt) may refer to the old mapping, nor for
// Close's final checkpoint, whose mapping Close would drop at once.
func (s *Store) adoptCheckpoint(path string, size int64, p *index.Placement) {
	if s.ckpt != nil || s.closing || size <= 0 {
		return
	}
	f, err := s.fs.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	m, err := f.Map(int(size))
	if err != nil {
		return
	}
	if b := m.Bytes(); int64(len(b)) != size || !s.idx.Seqs.Repoint(p, b) {
		m.Unmap()
		return
	}
	m.Cool()
	if s.ckptMap != nil {
		s.ckptMap.Unmap()
	}
	s.ckptMap = m
}
