package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// RecoveryReport says what Open found.
type RecoveryReport struct {
	UsedCheckpoint bool   // the index came from a checkpoint
	CheckpointErr  error  // why a checkpoint present on disk was not used
	Segments       int    // segments opened
	Scanned        int    // segments (or tails of one) scanned record by record
	Records        uint64 // records scanned
	// TornTail is set when the newest segment ended in an invalid record,
	// the expected result of a crash mid-write; the tail was truncated.
	TornTail      *segment.CorruptError
	TruncatedFrom int64
	// DroppedBatch is set when the newest segment ended inside an atomic
	// batch (AppendBatch), which a crash cut short: it was dropped whole.
	DroppedBatch *DroppedBatch
	// Corrupt lists damage anywhere else: reported, never served, never
	// silently skipped. The messages lost are in State().Lost.
	Corrupt []*segment.CorruptError
	// Repaired lists segments whose damaged header was rewritten from the
	// file name, their records kept; SetAside lists files renamed aside
	// (quarantineSuffix) because they held nothing that could be used.
	Repaired []string
	SetAside []string
	// SkippedAfterReboot counts the sequences skipped because the machine
	// rebooted since they were reserved (reserve.go): under SyncInterval and
	// SyncNever, messages acknowledged there may have been lost, and their
	// sequences are never handed out again.
	SkippedAfterReboot uint64
	// Took is how long the recovery ran (the store's Open, less creating
	// the directory and taking its lock).
	Took time.Duration
	// PlainWithKey is set when a key is configured but the store was
	// written without one: it stays in the clear (encrypt.go). The caller
	// must say so loudly; Encrypted() is false.
	PlainWithKey bool
	// Rewrapped is set when the key file opened with the previous key
	// (prev_key) and was written again wrapped by the new one.
	Rewrapped bool
}

const maxLostList = 100000

type segFile struct {
	base       uint64
	path       string
	compressed bool
}

// segmentFiles lists the segment files of dir by base, changing nothing:
// where both a plain and a compressed copy of one segment exist (a
// compression finished, the plain file not yet removed), the compressed
// one, and the plain one in leftovers; interrupted temporary files too.
func segmentFiles(fs vfs.FS, dir string) ([]segFile, error) {
	files, _, err := segmentFilesAndLeftovers(fs, dir)
	return files, err
}

func segmentFilesAndLeftovers(fs vfs.FS, dir string) (files []segFile, leftovers []string, err error) {
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	byBase := map[uint64]segFile{}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if strings.HasSuffix(n, ".tmp") {
			leftovers = append(leftovers, p) // an interrupted checkpoint or compression
			continue
		}
		var num string
		comp := false
		switch {
		case strings.HasSuffix(n, segment.SuffixCompressed):
			num, comp = strings.TrimSuffix(n, segment.SuffixCompressed), true
		case strings.HasSuffix(n, segment.SuffixPlain):
			num = strings.TrimSuffix(n, segment.SuffixPlain)
		default:
			continue
		}
		base, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			continue
		}
		if prev, ok := byBase[base]; ok {
			plain := prev.path
			if !prev.compressed {
				byBase[base] = segFile{base: base, path: p, compressed: comp}
			} else {
				plain = p
			}
			leftovers = append(leftovers, plain)
			continue
		}
		byBase[base] = segFile{base: base, path: p, compressed: comp}
	}
	files = make([]segFile, 0, len(byBase))
	for _, f := range byBase {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].base < files[j].base })
	return files, leftovers, nil
}

// listSegments lists the segments for recovery and removes the leftovers.
func (s *Store) listSegments() ([]segFile, error) {
	files, leftovers, err := segmentFilesAndLeftovers(s.fs, s.dir)
	for _, p := range leftovers {
		s.fs.Remove(p)
	}
	return files, err
}

// recover opens the segments and rebuilds the index: from the checkpoint
// plus what was written after it when possible, by a full scan otherwise.
func (s *Store) recover() error {
	files, err := s.listSegments()
	if err != nil {
		return err
	}
	var handedOut uint64 // sequences that set-aside segments had handed out
	for i, f := range files {
		writable := i == len(files)-1 && !f.compressed
		seg, err := segment.OpenKey(s.fs, f.path, writable, s.key)
		if err == nil {
			err = s.checkSegmentKey(seg) // encrypt.go
		}
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				return err // an I/O error, not damage: refuse, naming the file
			}
			if i == len(files)-1 && s.neverWritten(f.path) {
				// A new segment whose header never reached the disk.
				// Its name still says where the segment before it
				// ended: that one holds only sequences below it.
				s.report.Corrupt = append(s.report.Corrupt, asCorrupt(err))
				s.fs.Remove(f.path)
				s.cutBase = f.base
				continue
			}
			var maxSeq uint64
			if seg, maxSeq, err = s.openDamaged(f, writable, err); err != nil {
				return err
			}
			handedOut = max(handedOut, maxSeq)
			if seg == nil {
				continue // set aside; the gap it leaves is reported as lost
			}
		}
		s.nextID++
		s.segs = append(s.segs, &segEntry{id: s.nextID, seg: seg})
	}
	s.report.Segments = len(s.segs)

	start, lastSeq, ok := s.loadCheckpoint()
	if !ok {
		s.idx = index.New()
		s.last, s.msgs, s.bytes, s.lastTS, s.lost = 0, 0, 0, 0, nil
		start = 0
		if len(s.segs) > 0 {
			s.last = s.segs[0].seg.Base() - 1
		}
	}
	if err := s.scanFrom(start, lastSeq); err != nil {
		return err
	}
	s.dropOpenBatchLocked() // batch.go
	if s.recount {
		s.recountBytesLocked()
	}
	if len(s.segs) > 0 {
		// Sequences never go backwards: a segment's base is one past the
		// last sequence handed out when it was created.
		s.last = max(s.last, s.segs[len(s.segs)-1].seg.Base()-1)
	}
	if s.cutBase > 0 {
		// So is that of a newest segment removed as never written.
		s.last = max(s.last, s.cutBase-1)
	}
	s.checkHeadLocked()
	if !s.report.UsedCheckpoint {
		s.releaseCheckpointMap(false) // the index was rebuilt: nothing refers to it
	}
	if s.ckptFloor > s.last {
		// The segments end before what a (rejected) checkpoint recorded as
		// durable: a segment was cut short or lost. Those messages are
		// lost, and their sequences are never handed out again.
		s.report.Corrupt = append(s.report.Corrupt, &segment.CorruptError{File: filepath.Join(s.dir, checkpointFile),
			Reason: fmt.Sprintf("the checkpoint recorded sequences up to %d, the segments end at %d", s.ckptFloor, s.last)})
		s.noteLost(s.last+1, s.ckptFloor)
		s.last = s.ckptFloor
	}
	if handedOut > s.last {
		// A set-aside newest segment held messages after everything else:
		// they are lost, and their sequences are never handed out again.
		s.noteLost(s.last+1, handedOut)
		s.last = handedOut
	}
	s.report.SkippedAfterReboot = s.applyReservation()
	if len(s.segs) == 0 || s.segs[len(s.segs)-1].seg.Sealed() {
		size := s.opts.FirstSegmentSize
		if len(s.segs) > 0 {
			// After a clean close sealed the last segment: go on from its size.
			size = min(max(2*s.segs[len(s.segs)-1].seg.Capacity(), size), s.opts.SegmentSize)
		}
		seg, err := segment.CreateKey(s.fs, s.dir, s.last+1, s.nowNano(), size, s.key)
		if err != nil {
			return err
		}
		s.nextID++
		s.segs = append(s.segs, &segEntry{id: s.nextID, seg: seg})
	}
	s.active = s.segs[len(s.segs)-1]
	// Every commit fsyncs with SyncAlways (segment/zeroahead.go).
	s.active.seg.SetZeroAhead(s.opts.Sync == SyncAlways)
	if err := s.tombOpenBatchLocked(); err != nil { // batch.go
		return err
	}
	s.visible, s.visTS = s.last, s.lastTS
	// Limits are deterministic: evictions whose tombstones a crash lost are
	// redone here.
	s.enforceLimitsLocked("")
	s.expireLocked()
	return nil
}

// neverWritten reports whether a segment file holds no byte but zeros: a
// create whose header never reached the disk. A file with anything else in
// it held records and is never removed for a bad header.
func (s *Store) neverWritten(path string) bool {
	f, err := s.fs.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		for _, b := range buf[:n] {
			if b != 0 {
				return false
			}
		}
		off += int64(n)
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

func asCorrupt(err error) *segment.CorruptError {
	var ce *segment.CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	return &segment.CorruptError{Reason: err.Error()}
}

// baseAfter returns the base of the segment after segment index i: the
// next open one, or for the newest the base of a segment after it that
// recovery removed because its header never reached the disk (cutBase).
// ok is false when there is none.
func (s *Store) baseAfter(i int) (uint64, bool) {
	if i+1 < len(s.segs) {
		return s.segs[i+1].seg.Base(), true
	}
	return s.cutBase, s.cutBase > s.segs[i].seg.Base()
}

// scanFrom replays records of segment index i (from offset off of the first)
// onward into the index.
func (s *Store) scanFrom(segIdx int, lastSeq uint64) error {
	if segIdx >= len(s.segs) {
		return nil
	}
	off := s.ckptOff
	if off == 0 {
		off = segment.HeaderSize
	}
	var lostFrom uint64 // > 0: sequences from here to the next good one are lost
	for i := segIdx; i < len(s.segs); i++ {
		e := s.segs[i]
		newest := i == len(s.segs)-1
		from := int64(segment.HeaderSize)
		if i == segIdx {
			from = off
		}
		if base := e.seg.Base(); s.last > 0 && base > s.last+1 && lostFrom == 0 {
			// Segments follow each other without gaps (each starts one
			// past the last sequence handed out before it) and only the
			// oldest are ever removed whole, so a gap between two is a
			// loss: a segment file deleted or set aside.
			s.report.Corrupt = append(s.report.Corrupt, &segment.CorruptError{File: e.seg.Path(), Offset: 0,
				Reason: fmt.Sprintf("sequences %d-%d missing before this segment: no segment file holds them", s.last+1, base-1)})
			s.noteLost(s.last+1, base-1)
			s.last = base - 1
		}
		s.report.Scanned++
		onDamage := func(d segment.Damage) {
			if newest && d.Resync < 0 {
				return // a torn tail: truncated below, nothing acknowledged lost
			}
			if lostFrom == 0 {
				lostFrom = s.last + 1
			}
		}
		res, err := e.seg.ScanDamage(from, lastSeq, func(o int64, r *segment.Record) error {
			s.report.Records++
			if r.Tombstone() {
				s.applyTombLocked(r.Seq, r.TombstoneCount())
				return nil
			}
			if r.Seq <= s.last && s.last > 0 {
				return nil // not after what we have: never reuse a sequence
			}
			if lostFrom > 0 && r.Seq > lostFrom {
				s.noteLost(lostFrom, r.Seq-1)
			}
			lostFrom = 0
			switch {
			case r.Flags&segment.FlagBatchOpen == 0:
				s.batch.openSeq = 0 // batch.go
			case s.batch.openSeq == 0:
				s.batch.openSeq = r.Seq
			}
			s.last, s.lastTS = r.Seq, max(s.lastTS, r.Time)
			lastSeq = r.Seq
			if r.Flags&segment.FlagErased != 0 {
				return nil
			}
			s.idx.AddBytes(r.Seq, index.Loc{Seg: e.id, Off: uint32(o)}, r.Subject)
			s.msgs++
			s.bytes += store.FileRecordSizeLen(len(r.Subject), len(r.Header), len(r.Data))
			return nil
		}, onDamage)
		// Scanned once, not read again soon: keep the pages out of the
		// resident set (a full rescan would otherwise leave the whole
		// store resident, and a kill -9 restart what it rescanned).
		e.seg.CoolRange(from, e.seg.Mapped()-from)
		if next, ok := s.baseAfter(i); err != nil && e.seg.Compressed() && errors.Is(err, store.ErrCorrupt) && ok {
			// A compressed body that does not decode: every message in it
			// is lost, the other segments are still served. (Without the
			// base of a segment after it, nothing says how far its
			// sequences went, and the store is refused rather than hand
			// out acknowledged sequences again.)
			s.report.Corrupt = append(s.report.Corrupt, asCorrupt(err))
			if next > s.last+1 {
				s.noteLost(s.last+1, next-1)
				s.last = next - 1
			}
			lostFrom = 0
			continue
		}
		if err != nil {
			return err
		}
		for _, d := range res.Damage {
			if newest && d.Resync < 0 {
				s.report.TornTail = d.Err
				s.report.TruncatedFrom = res.End
				continue
			}
			s.report.Corrupt = append(s.report.Corrupt, d.Err)
		}
		if lostFrom > 0 && !newest {
			if next := s.segs[i+1].seg.Base(); next > lostFrom {
				s.noteLost(lostFrom, next-1)
				s.last = max(s.last, next-1)
				lostFrom = 0
			}
		}
		if newest && !e.seg.Sealed() {
			if err := e.seg.SetEnd(res.End); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) noteLost(from, to uint64) {
	if s.lost == nil {
		s.lost = &store.LostData{}
	}
	for q := from; q <= to && len(s.lost.Msgs) < maxLostList; q++ {
		s.lost.Msgs = append(s.lost.Msgs, q)
	}
}

func (s *Store) applyTombLocked(first, count uint64) {
	end := first + count // exclusive
	p := s.newPruner()
	for q, ok := s.idx.Seqs.Next(first); ok && q < end; q, ok = s.idx.Seqs.Next(q + 1) {
		p.removeLocked(q)
	}
	p.finishLocked()
	if end-1 > s.last {
		s.last = end - 1
	}
}

// Checkpoint trailer layout (part of the on-disk format), little endian:
// version u8 | last u64 | msgs u64 | bytes u64 | lastTS i64 |
// nsegs u32 { base u64, id u32 } | coveredSegIndex u32 | coveredOff u64 |
// nlost u32 { seq u64 }.
//
// Version 2 counts bytes as nats-server's file store does
// (store.FileRecordSize); version 1, identical otherwise, counted them as
// subject + header + payload + 16. A version 1 checkpoint is still used,
// its byte total recounted from the records (recountBytesLocked).
const (
	trailerVersion   = 2
	trailerVersionV1 = 1
)

// loadCheckpoint installs the checkpointed index if it matches the segments
// on disk. It returns the segment index and offset to scan from.
func (s *Store) loadCheckpoint() (int, uint64, bool) {
	path := filepath.Join(s.dir, checkpointFile)
	fi, err := s.fs.Stat(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.report.CheckpointErr = err
		}
		return 0, 0, false
	}
	idx, t, m, err := decodeCheckpointFile(s.fs, path, fi.Size, s.key)
	if m != nil {
		s.ckptMap = m // Close unmaps it, after dropping the index
	}
	if err != nil {
		s.report.CheckpointErr = err
		return 0, 0, false
	}
	bad := func(why string) (int, uint64, bool) {
		s.report.CheckpointErr = fmt.Errorf("wal: checkpoint %s: %s", path, why)
		return 0, 0, false
	}
	r := trailerReader{b: t}
	version := r.u8()
	if version != trailerVersion && version != trailerVersionV1 {
		return bad(fmt.Sprintf("unknown trailer version %d", version))
	}
	last, msgs, bytes, lastTS := r.u64(), r.u64(), r.u64(), int64(r.u64())
	if !r.err {
		// The checkpoint's checksum held: whatever else disqualifies it,
		// its last sequence was handed out and durable when it was taken.
		s.ckptFloor = last
	}
	n := int(r.u32())
	if r.err || n == 0 || n > 1<<24 {
		return bad("truncated trailer")
	}
	bases, segIDs := make([]uint64, n), make([]uint32, n)
	for i := range n {
		bases[i], segIDs[i] = r.u64(), r.u32()
	}
	covered := int(r.u32())
	off := r.u64()
	nl := int(r.u32())
	var lost []uint64
	for i := 0; i < nl && !r.err; i++ {
		lost = append(lost, r.u64())
	}
	if r.err || covered != n-1 {
		return bad("truncated trailer")
	}
	// A sound checkpoint, whether or not it matches the directory: what it
	// knew is evidence for checkHeadLocked.
	s.ckpt = &ckptInfo{idx: idx, bases: bases, off: int64(off)}
	if n > len(s.segs) {
		return bad("segment list does not match the directory")
	}
	ids := make(map[uint32]index.SegID, n)
	for i := range n {
		if s.segs[i].seg.Base() != bases[i] {
			return bad("segment list does not match the directory")
		}
		ids[segIDs[i]] = s.segs[i].id
	}
	if seg := s.segs[covered].seg; int64(off) < segment.HeaderSize || int64(off) > seg.End() {
		// The segment is shorter than what the checkpoint covered: it was
		// cut (damage, not a crash: covered bytes were synced). Rescan.
		return bad(fmt.Sprintf("covers %s up to offset %d, beyond its %d bytes", seg.Path(), off, seg.End()))
	}
	if !idx.Seqs.RemapSegs(func(old index.SegID) (index.SegID, bool) {
		id, ok := ids[uint32(old)]
		return id, ok
	}) {
		return bad("index names a segment not in its list")
	}
	s.idx = idx
	s.last, s.msgs, s.bytes, s.lastTS = last, msgs, bytes, lastTS
	if len(lost) > 0 {
		s.lost = &store.LostData{Msgs: lost}
	}
	s.ckptOff = int64(off)
	s.recount = version == trailerVersionV1
	s.report.UsedCheckpoint = true
	return covered, last, true
}

// recountBytesLocked sets the byte total from the records the index holds,
// after a checkpoint whose total was counted another way (version 1). It
// reads every record once; the next checkpoint stores the new total. A
// record that cannot be read counts nothing, as removeLocked counts it.
func (s *Store) recountBytesLocked() {
	var total uint64
	for q, ok := s.idx.Seqs.Next(0); ok; q, ok = s.idx.Seqs.Next(q + 1) {
		loc, ok := s.idx.Seqs.Lookup(q)
		if !ok {
			continue
		}
		if r, err := s.recordAnyLocked(loc); err == nil {
			total += store.FileRecordSizeLen(len(r.Subject), len(r.Header), len(r.Data))
		}
	}
	s.bytes = total
	s.recount = false
	s.dirty = true
}

type trailerReader struct {
	b   []byte
	p   int
	err bool
}

func (r *trailerReader) take(n int) []byte {
	if r.err || r.p+n > len(r.b) {
		r.err = true
		return make([]byte, n)
	}
	v := r.b[r.p : r.p+n]
	r.p += n
	return v
}
func (r *trailerReader) u8() byte    { return r.take(1)[0] }
func (r *trailerReader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *trailerReader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }

// quarantineSuffix marks a segment file set aside by recovery: kept for
// inspection, never opened again.
const quarantineSuffix = ".corrupt"

// openDamaged handles a segment file whose header is damaged (flipped,
// zeroed, cut short) or that is no segment at all. If it still holds valid
// records (each proven by its checksum) whose sequences fit the base in its
// name, the header is rewritten from the name and the segment is used:
// nothing is lost. Otherwise the file is renamed aside (quarantineSuffix)
// and the rest of the stream loads; the sequences it held show as lost
// (the gap before the next segment, or maxSeq for the newest). Either way
// the damage is reported; only an I/O error refuses the stream.
func (s *Store) openDamaged(f segFile, writable bool, cause error) (*segment.Segment, uint64, error) {
	s.report.Corrupt = append(s.report.Corrupt, asCorrupt(cause))
	var found segment.SalvageResult
	if !f.compressed {
		var err error
		if found, err = segment.SalvageKey(s.fs, f.path, f.base, s.key); err != nil {
			return nil, 0, err
		}
		if found.Records > 0 && (found.Msgs == 0 || found.MinSeq >= f.base) {
			if err := segment.RepairHeaderKey(s.fs, f.path, f.base, s.key != nil); err != nil {
				return nil, 0, err
			}
			s.report.Repaired = append(s.report.Repaired, f.path)
			seg, err := segment.OpenKey(s.fs, f.path, writable, s.key)
			return seg, 0, err
		}
	}
	to := f.path + quarantineSuffix
	if err := s.fs.Rename(f.path, to); err != nil {
		return nil, 0, fmt.Errorf("wal: set aside damaged segment %s: %w", f.path, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return nil, 0, fmt.Errorf("wal: sync %s: %w", s.dir, err)
	}
	s.report.SetAside = append(s.report.SetAside, to)
	return nil, found.MaxSeq, nil
}

// ckptInfo is what a checksummed checkpoint recorded, kept for recovery
// even when the checkpoint does not match the directory.
type ckptInfo struct {
	idx   *index.Index
	bases []uint64 // its segment list
	off   int64    // how far it covered the last segment
}

// checkHeadLocked reports messages missing at the head of the stream: live
// in the last checkpoint, below the first segment on disk, when nothing was
// written since that checkpoint. Only the oldest segments are removed
// whole, after tombstones recorded why; but those tombstones may sit in
// segments removed since, so a missing head is only provably a loss when
// the store did not change after the checkpoint (its last segment ends
// where the checkpoint covered it) and no limit evicts on its own.
func (s *Store) checkHeadLocked() {
	c := s.ckpt
	s.ckpt = nil
	if c == nil || s.report.UsedCheckpoint || len(s.segs) == 0 {
		return
	}
	l := s.limits
	if l.MaxMsgs > 0 || l.MaxBytes > 0 || l.MaxAge > 0 || l.MaxMsgsPerSubject > 0 {
		return
	}
	newest := s.segs[len(s.segs)-1].seg
	if newest.Base() != c.bases[len(c.bases)-1] || newest.End() != c.off {
		return // written since: a removal may explain the head
	}
	first := s.segs[0].seg.Base()
	var from, to uint64
	report := func() {
		if from == 0 {
			return
		}
		s.report.Corrupt = append(s.report.Corrupt, &segment.CorruptError{File: s.segs[0].seg.Path(), Offset: 0,
			Reason: fmt.Sprintf("sequences %d-%d missing before the first segment: the last checkpoint had them and no segment file holds them", from, to)})
		s.noteLost(from, to)
		from = 0
	}
	for q, ok := c.idx.Seqs.Next(1); ok && q < first; q, ok = c.idx.Seqs.Next(q + 1) {
		if from != 0 && q != to+1 {
			report()
		}
		if from == 0 {
			from = q
		}
		to = q
	}
	report()
}
