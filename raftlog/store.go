package raftlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// seg is one segment and the byte offset of each record in it, in index
// order: record i holds index base+i.
type seg struct {
	s    *segment.Segment
	base uint64
	offs []uint32
}

// Store is a raft log and stable store in one directory. All methods are
// safe for concurrent use. Writers (StoreEntries, DeleteRange) are
// serialised; readers run concurrently with them and see only entries whose
// write has been synced.
type Store struct {
	fs   vfs.FS
	dir  string
	opts Options
	lock io.Closer

	// Encryption (encrypt.go), fixed at Open.
	key          *crypt.DataKey // the data key; nil: the log is in the clear
	plainWithKey bool           // a key is configured, the log stays plain
	rewrapped    bool           // the key file was rewrapped from PrevKey

	// writeMu serialises writers. It is taken before mu.
	writeMu sync.Mutex
	// Guarded by writeMu (read without mu by the writer only).
	metaFirst uint64   // first index persisted in the meta file
	meta      slotFile // the meta file
	werr      error    // sticky write error: no writes after it until reopened

	// mu guards the index below; readers hold it shared while they copy a
	// record out of a segment's mapping, so segments are closed only under
	// it exclusively.
	mu     sync.RWMutex
	segs   []*seg // by base; the last one is the active segment
	first  uint64 // 0 when empty
	last   uint64 // 0 when empty; only synced entries are visible
	closed bool

	stable stableKV
}

// Open opens or creates the store in dir. Recovery reads the newest
// segment's records; older segments are known from their index files.
func Open(fs vfs.FS, dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("raftlog: create %s: %w", dir, err)
	}
	if err := fs.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, fmt.Errorf("raftlog: sync dir %s: %w", filepath.Dir(dir), err)
	}
	var lock io.Closer
	var err error
	if opts.OuterLock {
		lock, err = vfs.Claim(fs, dir)
	} else {
		lock, err = fs.Lock(filepath.Join(dir, LockFile))
	}
	if err != nil {
		return nil, fmt.Errorf("raftlog: lock %s: %w", dir, err)
	}
	s := &Store{fs: fs, dir: dir, opts: opts.withDefaults(), lock: lock}
	s.meta = slotFile{fs: fs, path: filepath.Join(dir, MetaFile), kind: slotKindMeta}
	s.stable.file = slotFile{fs: fs, path: filepath.Join(dir, StableFile), kind: slotKindStable}
	if err := s.openKey(); err != nil {
		lock.Close()
		return nil, err
	}
	if err := s.recover(); err != nil {
		s.closeSegments()
		lock.Close()
		return nil, err
	}
	return s, nil
}

// IsStore reports whether dir holds a raft log store (its meta file).
func IsStore(fs vfs.FS, dir string) bool {
	fi, err := fs.Stat(filepath.Join(dir, MetaFile))
	return err == nil && !fi.IsDir
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

func (s *Store) recover() error {
	names, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("raftlog: list %s: %w", s.dir, err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			// An interrupted atomic write; the old file is intact.
			if err := s.fs.Remove(s.path(n)); err != nil {
				return fmt.Errorf("raftlog: remove %s: %w", s.path(n), err)
			}
		}
	}
	bases := segmentBases(names)
	p, err := s.meta.load()
	switch {
	case isNotExist(err) && len(bases) == 0:
		if err := s.meta.write(encodeMeta(0)); err != nil {
			return err
		}
	case isNotExist(err):
		return fmt.Errorf("raftlog: %s missing beside %d segments: %w", s.meta.path, len(bases), err)
	case err != nil:
		return fmt.Errorf("raftlog: %w", err)
	default:
		if s.metaFirst, err = decodeMeta(s.meta.path, p); err != nil {
			return err
		}
	}
	if err := s.stable.load(); err != nil {
		return err
	}
	for i, base := range bases {
		newest := i == len(bases)-1
		sg, err := s.openSegment(base, newest)
		if err != nil {
			return err
		}
		if sg == nil {
			continue // a newest segment whose creation never completed
		}
		s.segs = append(s.segs, sg)
	}
	// Every segment but the newest must hold each index up to the next base.
	for i := 0; i+1 < len(s.segs); i++ {
		sg, next := s.segs[i], s.segs[i+1]
		if next.base <= sg.base || uint64(len(sg.offs)) < next.base-sg.base {
			return corrupt(sg.s.Path(), sg.s.End(), "segment holds indexes %d-%d but the next segment starts at %d: a hole",
				sg.base, sg.base+uint64(len(sg.offs))-1, next.base)
		}
	}
	if n := len(s.segs); n > 0 {
		tail := s.segs[n-1]
		switch {
		case len(tail.offs) > 0:
			s.last = tail.base + uint64(len(tail.offs)) - 1
		case n > 1:
			s.last = tail.base - 1
		}
		if s.last != 0 {
			s.first = max(s.metaFirst, s.segs[0].base)
		}
	}
	if s.first == 0 || s.first > s.last {
		// Nothing visible: an empty new segment, or everything deleted by a
		// DeleteRange that was cut short after its meta write.
		s.first, s.last = 0, 0
		return s.dropSegments(len(s.segs))
	}
	// Segments wholly below first: a prefix truncation cut short.
	drop := 0
	for drop+1 < len(s.segs) && s.segs[drop+1].base <= s.first {
		drop++
	}
	return s.dropSegments(drop)
}

// dropSegments closes and removes the oldest n segments.
func (s *Store) dropSegments(n int) error {
	if n == 0 {
		return nil
	}
	gone := s.segs[:n:n]
	s.segs = append([]*seg(nil), s.segs[n:]...)
	return s.removeFiles(gone)
}

// removeFiles removes the files of segments no reader can reach any more,
// in the order given, then syncs the directory.
func (s *Store) removeFiles(gone []*seg) error {
	for _, g := range gone {
		// The index first: a segment without one is rebuilt by a scan.
		idx := s.indexPath(g.base)
		if err := s.fs.Remove(idx); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("raftlog: remove %s: %w", idx, err)
		}
		if err := g.s.Remove(); err != nil {
			return fmt.Errorf("raftlog: %w", err)
		}
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("raftlog: sync dir %s: %w", s.dir, err)
	}
	return nil
}

func (s *Store) indexPath(base uint64) string {
	return s.path(strings.TrimSuffix(segment.FileName(base, false), segment.SuffixPlain) + IndexSuffix)
}

// openSegment opens one segment. Older segments take their offsets from
// their index file, or a scan when it is missing or stale; the newest is
// scanned and its torn tail cut off. It returns nil for a newest segment
// whose header never reached the disk.
func (s *Store) openSegment(base uint64, newest bool) (*seg, error) {
	path := s.path(segment.FileName(base, false))
	ss, err := segment.OpenKey(s.fs, path, newest, s.key)
	if err != nil {
		if newest && errors.Is(err, ErrCorrupt) {
			if fi, serr := s.fs.Stat(path); serr == nil && fi.Size < segment.HeaderSize {
				// Created, but the crash came before its header was synced.
				if err := s.fs.Remove(path); err != nil {
					return nil, fmt.Errorf("raftlog: remove %s: %w", path, err)
				}
				return nil, nil
			}
		}
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	if err := s.checkSegmentKey(ss); err != nil {
		ss.Close()
		return nil, err
	}
	if ss.Base() != base {
		ss.Close()
		return nil, corrupt(path, 8, "header base %d does not match the file name", ss.Base())
	}
	sg := &seg{s: ss, base: base}
	if !newest {
		if b, err := readFile(s.fs, s.indexPath(base)); err == nil {
			if offs, err := decodeIndex(s.indexPath(base), b, base, ss.End(), ss.Created()); err == nil {
				sg.offs = offs
				return sg, nil
			}
		}
	}
	offs, end, err := scanSegment(ss, base, newest)
	if err != nil {
		ss.Close()
		return nil, err
	}
	sg.offs = offs
	if newest {
		if err := ss.SetEnd(end); err != nil {
			ss.Close()
			return nil, fmt.Errorf("raftlog: %w", err)
		}
		ss.SetZeroAhead(true)
		return sg, nil
	}
	// Rebuild the missing or stale index; it is a cache, so a failure to
	// write it is not fatal to opening.
	_ = writeFile(s.fs, s.indexPath(base), encodeIndex(base, ss.End(), ss.Created(), offs))
	return sg, nil
}

// scanSegment reads every record of a segment, checking that record i holds
// index base+i. A damaged tail of the newest segment is a torn write and ends
// the segment; any other damage is corruption.
func scanSegment(ss *segment.Segment, base uint64, newest bool) ([]uint32, int64, error) {
	var offs []uint32
	var damage *segment.Damage
	res, err := ss.ScanDamage(segment.HeaderSize, 0, func(off int64, r *segment.Record) error {
		if damage != nil {
			// Valid records after damage: not a torn tail.
			return fmt.Errorf("raftlog: %w (valid records follow it, from offset %d)", damage.Err, off)
		}
		want := base + uint64(len(offs))
		if r.Tombstone() || r.Seq != want {
			return corrupt(ss.Path(), off, "record holds index %d (tombstone %v), expected %d", r.Seq, r.Tombstone(), want)
		}
		offs = append(offs, uint32(off))
		return nil
	}, func(d segment.Damage) {
		if damage == nil {
			damage = &d
		}
	})
	if err != nil {
		return nil, 0, err
	}
	switch {
	case damage == nil:
	case !newest:
		return nil, 0, fmt.Errorf("raftlog: %w", damage.Err)
	case damage.Resync >= 0:
		// A record whose checksum holds follows the damage (in an
		// encrypted segment, one whose tag failed too): not a torn tail.
		return nil, 0, fmt.Errorf("raftlog: %w (a record with a valid checksum follows it, at offset %d)", damage.Err, damage.Resync)
	case authFailure(damage):
		// A whole record whose tag fails: tampered bytes or another data
		// key, never a torn write. Cutting it would destroy entries a
		// wrong key file only hides.
		return nil, 0, fmt.Errorf("raftlog: %w (not a torn write: the record's checksum holds)", damage.Err)
	}
	return offs, res.End, nil
}

func segmentBases(names []string) []uint64 {
	var bases []uint64
	for _, n := range names {
		num, ok := strings.CutSuffix(n, segment.SuffixPlain)
		if !ok {
			continue
		}
		if b, err := strconv.ParseUint(num, 10, 64); err == nil && b > 0 {
			bases = append(bases, b)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases
}

// FirstIndex is the first index stored, 0 when empty.
func (s *Store) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.first, nil
}

// LastIndex is the last index stored, 0 when empty.
func (s *Store) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.last, nil
}

// Close releases the segments and the directory lock. Slices returned by
// Get stay valid (they are copies).
func (s *Store) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if n := len(s.segs); n > 0 && s.werr == nil {
		err = s.segs[n-1].s.Sync()
	}
	if cerr := s.closeSegments(); err == nil {
		err = cerr
	}
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

func (s *Store) closeSegments() error {
	var err error
	for _, sg := range s.segs {
		if cerr := sg.s.Close(); err == nil {
			err = cerr
		}
	}
	s.segs = nil
	return err
}

// now is the creation time written into segment headers.
func now() int64 { return time.Now().UnixNano() }
