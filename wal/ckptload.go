package wal

import (
	"fmt"

	"github.com/jetwal/jetwal/crypt"
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
//
// key is an encrypted store's data key: the subject section must be sealed
// and open with it (index.DecodeOpen). nil: a plain store's checkpoint.
func decodeCheckpointFile(fs vfs.FS, path string, size int64, key *crypt.DataKey) (*index.Index, []byte, vfs.Mapping, error) {
	var open index.Opener
	if key != nil {
		open = key
	}
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
			idx, t, err := index.DecodeInPlaceOpen(path, b, open)
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
	idx, t, err := index.DecodeOpen(path, b, open)
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
// checkpoint j wrote, durable and renamed into place: after each
// checkpoint, as after a restart, the sealed index costs page cache, not
// heap, and the previous checkpoint's mapping, and with it its disk space,
// is released. The caller holds mu. If the new file cannot be mapped or
// does not hold the blocks exactly, nothing changes. Not during recovery,
// whose evidence (s.ckpt) may refer to the old mapping, nor for Close's
// final checkpoint, whose mapping Close would drop at once.
//
// The mapping is made and checked by mapCheckpoint, which the periodic
// checkpoint runs before it takes mu (j.m), and the previous mapping is
// left in j.old for the caller to unmap once it has released mu (nothing
// refers to it any more): under mu only the arrays are swapped
// (index.Seqs.Move). Done under mu, the byte comparison, which faults the
// new mapping in page by page, and the munmap of the old one, whose page
// tables readers had faulted in, held appends and reads 5-10 ms for a
// 16 MB checkpoint (4M messages), about 7 ms of it the munmap.
func (s *Store) adoptCheckpoint(j *ckptJob) {
	m := j.m
	j.m = nil
	if s.ckpt != nil || s.closing || j.size <= 0 {
		if m != nil {
			m.Unmap()
		}
		return
	}
	if m == nil {
		if m = s.mapCheckpoint(j); m == nil {
			return
		}
	}
	if !s.idx.Seqs.Move(j.place, m.Bytes()) {
		m.Unmap()
		return
	}
	j.old, s.ckptMap = s.ckptMap, m
}

// mapCheckpoint maps the checkpoint j wrote and checks that it holds the
// packed blocks j placed (index.Placement.Check), then cools the mapping:
// nil if it cannot be mapped or does not hold them. It needs no lock: it
// reads the file and the arrays j's placement kept, which do not change.
func (s *Store) mapCheckpoint(j *ckptJob) vfs.Mapping {
	if j.size <= 0 {
		return nil
	}
	f, err := s.fs.Open(j.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	m, err := f.Map(int(j.size))
	if err != nil {
		return nil
	}
	if b := m.Bytes(); int64(len(b)) != j.size || !j.place.Check(b) {
		m.Unmap()
		return nil
	}
	m.Cool()
	return m
}
