package segment

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/vfs"
)

// ErrFull is returned by Append when the record does not fit.
var ErrFull = errors.New("segment: full")

// ErrSealed is returned when writing to a sealed segment.
var ErrSealed = errors.New("segment: sealed")

// Segment is one segment file. It is not safe for concurrent mutation; the
// owner (package wal) serialises writers and keeps readers out of Close.
// ReadAt may run concurrently with other ReadAt calls.
type Segment struct {
	fs   vfs.FS
	path string
	f    *fileHandle // released while unused (handle.go); nil once closed
	hdr  segHeader

	m        vfs.Mapping // nil for compressed segments
	data     []byte      // mapped or decoded bytes; valid in [0, end)
	capacity int64       // bytes reserved for the file
	end      int64       // bytes written to the file (header included)
	wbuf     []byte      // encoded records not yet written, at end + the write in flight
	inflight *bgWrite    // records being written in the background, at file offset end
	spare    []byte      // a settled background write's buffer, for the next swap

	sealed     bool
	compressed bool

	// Zero-ahead (zeroahead.go): on, and the file offset below which the
	// reserved space is known written.
	zeroAhead bool
	zeroed    int64

	// key opens (and seals) the records of an encrypted segment; nil for
	// a plain one, or an encrypted one opened to check its structure. ov
	// is the sealing overhead of its records (0 when plain), set from the
	// header. sess seals this segment's appends and erases (seal.go).
	key  *crypt.DataKey
	ov   int
	sess *crypt.Session

	// nameUnsynced is set on a segment made from a Spare until a sync of
	// its file has also synced its directory entry (syncName).
	nameUnsynced atomic.Bool

	decodeMu  sync.Mutex // guards lazy decoding of a compressed body
	decodeErr error
}

// Create makes a new segment for sequences from base, reserving capacity
// bytes on disk. The directory entry is synced before Create returns.
func Create(fs vfs.FS, dir string, base uint64, created int64, capacity int64) (*Segment, error) {
	return CreateKey(fs, dir, base, created, capacity, nil)
}

// CreateKey is Create for a segment whose records key seals (an encrypted
// segment); a nil key makes a plain one.
func CreateKey(fs vfs.FS, dir string, base uint64, created int64, capacity int64, key *crypt.DataKey) (*Segment, error) {
	path := filepath.Join(dir, FileName(base, false))
	f, m, err := prepareFile(fs, dir, path, capacity, encodeHeader(base, created, keyFlags(key)))
	if err != nil {
		return nil, err
	}
	return newWritable(fs, path, f, false, m, base, created, capacity, key), nil
}

// keyFlags is the header flags of a new segment sealed by key (nil: plain).
func keyFlags(key *crypt.DataKey) byte {
	if key != nil {
		return SegFlagEncrypted
	}
	return 0
}

// newWritable is an empty segment on a prepared file whose header holds
// base, created and the flags of key; dirty says the file holds writes not
// synced yet.
func newWritable(fs vfs.FS, path string, f vfs.File, dirty bool, m vfs.Mapping, base uint64, created, capacity int64, key *crypt.DataKey) *Segment {
	s := &Segment{fs: fs, path: path, f: newHandle(fs, path, f, false, dirty), hdr: segHeader{base: base, created: created, flags: keyFlags(key)}, capacity: capacity,
		end: HeaderSize, m: m, data: m.Bytes(), key: key}
	if key != nil {
		s.ov = crypt.Overhead
	}
	return s
}

// prepareFile creates path with capacity bytes reserved on disk, writes hdr
// (if any) at its start, syncs the file and its directory entry, and maps
// it. On an error nothing is left behind.
func prepareFile(fs vfs.FS, dir, path string, capacity int64, hdr []byte) (vfs.File, vfs.Mapping, error) {
	if capacity < HeaderSize+RecordMinSize {
		return nil, nil, fmt.Errorf("segment: capacity %d too small", capacity)
	}
	f, err := fs.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("segment: create %s: %w", path, err)
	}
	fail := func(err error) (vfs.File, vfs.Mapping, error) {
		f.Close()
		fs.Remove(path)
		return nil, nil, err
	}
	if err := f.Allocate(0, capacity); err != nil {
		if !errors.Is(err, vfs.ErrAllocUnsupported) {
			return fail(fmt.Errorf("segment: preallocate %s: %w", path, err))
		}
		// No preallocation here: grow the file sparsely. Writes go through
		// pwrite, so a full disk is an ENOSPC error, not a SIGBUS.
		if err := f.Truncate(capacity); err != nil {
			return fail(fmt.Errorf("segment: size %s: %w", path, err))
		}
	}
	if hdr != nil {
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return fail(fmt.Errorf("segment: write header %s: %w", path, err))
		}
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("segment: sync %s: %w", path, err))
	}
	if err := fs.SyncDir(dir); err != nil {
		return fail(fmt.Errorf("segment: sync dir %s: %w", dir, err))
	}
	m, err := f.Map(int(capacity))
	if err != nil {
		return fail(fmt.Errorf("segment: map %s: %w", path, err))
	}
	return f, m, nil
}

// Open opens an existing segment file. Records are not validated; call Scan.
// A plain segment opened with writable set continues to accept appends after
// the end that Scan found (see SetEnd); otherwise it is sealed.
func Open(fs vfs.FS, path string, writable bool) (*Segment, error) {
	return OpenKey(fs, path, writable, nil)
}

// OpenKey is Open with the data key of an encrypted segment: its records
// are opened (decrypted and authenticated) as they are read. An encrypted
// segment opened without a key can be scanned for structure (checksums)
// only: its records come back Sealed, and it takes no appends. A key
// given for a plain segment is not used; the caller checks Encrypted
// against what it expects (package wal refuses a mix).
func OpenKey(fs vfs.FS, path string, writable bool, key *crypt.DataKey) (*Segment, error) {
	// Plain segments open read-write even when sealed, so Erase can
	// overwrite a record in place; compressed ones are read-only.
	f, err := fs.OpenRW(path)
	readOnly := false
	if err != nil && strings.HasSuffix(path, SuffixCompressed) {
		f, err = fs.Open(path)
		readOnly = true
	}
	if err != nil {
		return nil, fmt.Errorf("segment: open %s: %w", path, err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("segment: stat %s: %w", path, err)
	}
	h := make([]byte, HeaderSize)
	if size >= HeaderSize {
		if _, err := f.ReadAt(h, 0); err != nil {
			f.Close()
			return nil, fmt.Errorf("segment: read header %s: %w", path, err)
		}
	} else {
		h = h[:size]
		if size > 0 {
			f.ReadAt(h, 0)
		}
	}
	hdr, err := decodeHeader(path, h)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &Segment{fs: fs, path: path, f: newHandle(fs, path, f, readOnly, false), hdr: hdr, capacity: size, end: size}
	if hdr.flags&SegFlagEncrypted != 0 {
		s.ov, s.key = crypt.Overhead, key
		if key == nil {
			writable = false
		}
	}
	if hdr.flags&SegFlagCompressed != 0 {
		s.compressed, s.sealed = true, true
		return s, nil
	}
	m, err := s.f.Map(int(size))
	if err != nil {
		s.f.Close()
		return nil, fmt.Errorf("segment: map %s: %w", path, err)
	}
	s.m, s.data = m, m.Bytes()
	if !writable {
		s.sealed = true
	}
	return s, nil
}

// Path is the segment's file path.
func (s *Segment) Path() string { return s.path }

// Base is the first sequence the segment may hold.
func (s *Segment) Base() uint64 { return s.hdr.base }

// Created is the segment's creation time in unix nanoseconds.
func (s *Segment) Created() int64 { return s.hdr.created }

// Sealed reports whether the segment accepts no more appends.
func (s *Segment) Sealed() bool { return s.sealed }

// Compressed reports whether the segment is a compressed sealed segment.
func (s *Segment) Compressed() bool { return s.compressed }

// End is the offset after the last record, including buffered ones and
// those being written in the background.
func (s *Segment) End() int64 {
	if s.inflight != nil {
		return s.end + int64(len(s.inflight.buf)) + int64(len(s.wbuf))
	}
	return s.end + int64(len(s.wbuf))
}

// Flushed is the offset up to which records have been written to the file.
func (s *Segment) Flushed() int64 {
	if s.compressed {
		// Everything is flushed; offsets are into the decoded body, whose
		// length is known once it is decoded (the file size is not it).
		// A body that does not decode: reads report the decode error.
		if b, err := s.bytes(); err == nil {
			return int64(len(b))
		}
		return math.MaxInt64
	}
	return s.end
}

// Buffered is the number of encoded bytes waiting for Flush or StartFlush
// (not counting a write in flight).
func (s *Segment) Buffered() int { return len(s.wbuf) }

// Cool lets the OS take the segment's mapped pages out of the process's
// resident set (see vfs.Mapping.Cool); reads fault them back in. Package
// wal cools a sealed segment after verifying it, so a background pass over
// the whole store leaves memory as it found it.
func (s *Segment) Cool() {
	if s.m != nil {
		s.m.Cool()
	}
}

// CoolRange is Cool for the pages holding bytes [off, off+n) of the file:
// package wal cools what it verified piece by piece, so a verification
// keeps at most a piece of a segment resident, not the whole segment.
func (s *Segment) CoolRange(off, n int64) {
	if s.m != nil && off >= 0 && n > 0 {
		s.m.CoolRange(int(off), int(n))
	}
}

// Mapped returns the bytes of the file mapped into memory (0 for a
// compressed segment, whose body is decoded on the heap, or a closed one).
func (s *Segment) Mapped() int64 {
	if s.m == nil {
		return 0
	}
	return int64(len(s.m.Bytes()))
}

// Capacity returns the bytes reserved for the file.
func (s *Segment) Capacity() int64 { return s.capacity }

// Room reports whether a record of n encoded bytes fits.
func (s *Segment) Room(n int) bool {
	return !s.sealed && s.End()+int64(n) <= s.capacity
}

// SetEnd sets the end of valid data after recovery scanned a reopened segment.
// Bytes after end are zeroed in the file so a later scan stops there.
func (s *Segment) SetEnd(end int64) error {
	if end < HeaderSize || end > s.capacity {
		return fmt.Errorf("segment: %s: end %d out of range", s.path, end)
	}
	if s.compressed {
		return ErrSealed
	}
	if end < s.capacity && !s.zeroFrom(s.data, end, min(s.capacity, end+4096)) {
		// Torn tail: zero it so the next scan ends at end. Zero in chunks.
		zero := make([]byte, 64<<10)
		for off := end; off < s.capacity; {
			n := min(int64(len(zero)), s.capacity-off)
			if s.zeroFrom(s.data, off, off+n) {
				off += n
				continue
			}
			if _, err := s.f.WriteAt(zero[:n], off); err != nil {
				return fmt.Errorf("segment: %s: zero torn tail at %d: %w", s.path, off, err)
			}
			off += n
		}
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("segment: %s: sync: %w", s.path, err)
		}
	}
	s.end = end
	return nil
}

// Grow enlarges an unsealed segment's reserved space to capacity bytes
// (preallocated like Create) and remaps it. The old mapping is released, so
// the owner must call it where no reader holds a record view (package wal:
// under its exclusive lock). It is how a record larger than the space left
// goes into a segment that must keep its name (see wal's appendLocked).
func (s *Segment) Grow(capacity int64) error {
	if s.sealed {
		return ErrSealed
	}
	if capacity <= s.capacity {
		return nil
	}
	if err := s.f.Allocate(s.capacity, capacity-s.capacity); err != nil {
		if !errors.Is(err, vfs.ErrAllocUnsupported) {
			return fmt.Errorf("segment: preallocate %s to %d: %w", s.path, capacity, err)
		}
		if err := s.f.Truncate(capacity); err != nil {
			return fmt.Errorf("segment: size %s to %d: %w", s.path, capacity, err)
		}
	}
	m, err := s.f.Map(int(capacity))
	if err != nil {
		return fmt.Errorf("segment: map %s: %w", s.path, err)
	}
	old := s.m
	s.m, s.data, s.capacity = m, m.Bytes(), capacity
	if old != nil {
		old.Unmap()
	}
	return nil
}

// Append encodes a record into the write buffer and returns its offset.
func (s *Segment) Append(flags uint16, seq uint64, ts int64, subject string, hdr, data []byte) (int64, error) {
	if s.sealed {
		return 0, ErrSealed
	}
	n := s.RecordSize(len(subject), len(hdr), len(data))
	if s.End()+int64(n) > s.capacity {
		return 0, ErrFull
	}
	off := s.End()
	if s.wbuf == nil {
		s.wbuf = getBuffer()
	}
	if s.ov > 0 {
		var err error
		s.wbuf, err = s.appendSealed(s.wbuf, flags, seq, ts, subject, hdr, data)
		return off, err
	}
	s.wbuf = AppendRecord(s.wbuf, flags, seq, ts, subject, hdr, data)
	return off, nil
}

// Flush writes buffered records to the file (not necessarily to disk),
// after waiting for a background write in flight (StartFlush).
func (s *Segment) Flush() error {
	if err := s.WaitFlush(); err != nil {
		return err
	}
	if len(s.wbuf) == 0 {
		return nil
	}
	n, err := s.f.WriteAt(s.wbuf, s.end)
	if err == nil && n != len(s.wbuf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(s.wbuf))
	}
	if err != nil {
		return fmt.Errorf("segment: write %s at offset %d: %w", s.path, s.end, err)
	}
	s.end += int64(n)
	if from, to := s.planZero(s.end); to > from {
		if writeZeros(s.f, s.path, from, to) != nil {
			s.zeroAhead = false
		}
	}
	if cap(s.wbuf) > maxSpare {
		s.wbuf = nil
	} else {
		s.wbuf = s.wbuf[:0]
	}
	return nil
}

// Sync flushes and makes the file's contents durable.
func (s *Segment) Sync() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("segment: sync %s: %w", s.path, err)
	}
	return s.syncName()
}

// syncName syncs the directory after the file, once, for a segment whose
// name a Spare's rename has not yet made durable.
func (s *Segment) syncName() error {
	if !s.nameUnsynced.Load() {
		return nil
	}
	if err := s.fs.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("segment: sync dir of %s: %w", s.path, err)
	}
	s.nameUnsynced.Store(false)
	return nil
}

// bytes returns the readable record bytes [0, end).
func (s *Segment) bytes() ([]byte, error) {
	if !s.compressed {
		return s.data[:s.end], nil
	}
	s.decodeMu.Lock()
	defer s.decodeMu.Unlock()
	if s.data == nil && s.decodeErr == nil {
		s.data, s.decodeErr = decodeCompressed(s.f, s.path, s.capacity)
		if s.decodeErr == nil {
			s.end = int64(len(s.data))
		}
	}
	return s.data, s.decodeErr
}

// ReadAt decodes the record at off. The record aliases the segment's bytes
// (see the package doc for how long that is valid). The caller must have
// flushed the record first (off < Flushed()).
func (s *Segment) ReadAt(off int64) (Record, int, error) {
	var r Record
	n, err := s.ReadInto(off, &r)
	return r, n, err
}

// ReadInto is ReadAt decoding into r, for the read paths that pass the
// record down by address; it returns the record's encoded length.
//
// A record of an encrypted segment is opened into a new buffer (ReadIntoBuf
// reuses one); its views alias that buffer instead of the segment.
func (s *Segment) ReadInto(off int64, r *Record) (int, error) {
	n, err := s.readStructure(off, r)
	if err != nil || r.raw == nil || s.key == nil {
		return n, err
	}
	_, err = s.unseal(r, make([]byte, 0, len(r.Data)), off)
	return n, err
}

// readStructure decodes the record at off, checking its checksum; a
// sealed record is left sealed (seal.go opens it).
func (s *Segment) readStructure(off int64, r *Record) (int, error) {
	b, err := s.bytes()
	if err != nil {
		return 0, err
	}
	if off < HeaderSize || off >= int64(len(b)) {
		return 0, fmt.Errorf("segment: %s: offset %d outside written data [%d, %d): %w",
			s.path, off, HeaderSize, len(b), ErrCorrupt)
	}
	n, st, reason, want, got := decodeRecord(b[off:], r, s.ov)
	if st != decodeOK {
		if st == decodeEnd {
			reason = "zero length where a record was expected"
		}
		return 0, &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}
	}
	return n, nil
}

// Erase overwrites the subject, header and payload of the record at off with
// zeros, sets FlagErased and rewrites its checksum.
func (s *Segment) Erase(off int64) error {
	if s.compressed {
		return ErrSealed
	}
	if err := s.WaitFlush(); err != nil { // its buffer is not ours to change
		return err
	}
	var rec []byte
	if off >= s.end {
		i := off - s.end
		if i >= int64(len(s.wbuf)) {
			return fmt.Errorf("segment: %s: erase offset %d past end", s.path, off)
		}
		rec = s.wbuf[i:]
	} else {
		rec = s.data[off:s.end]
	}
	var r Record
	n, err := s.ReadAtBuf(rec, off, &r)
	if err != nil {
		return err
	}
	var nb []byte
	if s.ov > 0 {
		if s.key == nil {
			return fmt.Errorf("segment: %s: erase at offset %d: encrypted segment opened without its key", s.path, off)
		}
		// Sealed again, zeros under a fresh nonce of this segment's
		// session, with the erased flag in the associated data.
		nb, err = s.appendSealed(make([]byte, 0, n), r.Flags|FlagErased, r.Seq, r.Time,
			string(make([]byte, len(r.Subject))), make([]byte, len(r.Header)), make([]byte, len(r.Data)))
		if err != nil {
			return err
		}
	} else {
		nb = AppendRecord(make([]byte, 0, n), r.Flags|FlagErased, r.Seq, r.Time,
			string(make([]byte, len(r.Subject))), make([]byte, len(r.Header)), make([]byte, len(r.Data)))
	}
	if off >= s.end {
		copy(rec, nb)
		return nil
	}
	if _, err := s.f.WriteAt(nb, off); err != nil {
		return fmt.Errorf("segment: erase %s at offset %d: %w", s.path, off, err)
	}
	return nil
}

// ReadAtBuf decodes the record at the start of b, which sits at offset off of
// this segment (used for error messages), into r, and returns its encoded
// length.
//
// A sealed record is opened into a new buffer (ReadAtBufInto reuses one),
// so b is never changed.
func (s *Segment) ReadAtBuf(b []byte, off int64, r *Record) (int, error) {
	n, st, reason, want, got := decodeRecord(b, r, s.ov)
	if st != decodeOK {
		return 0, &CorruptError{File: s.path, Offset: off, Reason: reason, Expected: want, Actual: got}
	}
	if r.raw != nil && s.key != nil {
		if _, err := s.unseal(r, make([]byte, 0, len(r.Data)), off); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Seal flushes the segment, trims the file to its used length and syncs it.
// No appends are accepted afterwards. It is Freeze followed by Finish.
func (s *Segment) Seal() error {
	if s.sealed {
		return nil
	}
	if err := s.Freeze(); err != nil {
		return err
	}
	return s.Finish()
}

// Freeze flushes the segment and stops appends; Finish must follow to make
// it durable and trim it. It must be called under the owner's lock.
func (s *Segment) Freeze() error {
	if s.sealed {
		return nil
	}
	if err := s.Flush(); err != nil {
		return err
	}
	s.sealed = true
	s.ReleaseBuffers() // no append comes again
	return nil
}

// Finish trims a frozen segment to its used length and fsyncs it. It reads
// only fields Freeze fixed, so it may run outside the owner's lock,
// concurrently with reads (not with Close).
func (s *Segment) Finish() error {
	if err := s.f.Truncate(s.end); err != nil {
		return fmt.Errorf("segment: trim %s to %d: %w", s.path, s.end, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("segment: sync %s: %w", s.path, err)
	}
	return s.syncName()
}

// Close releases the mapping and the file. Record views become invalid. A
// background write still in flight is waited for (its error is dropped:
// whoever needed it flushed has settled it).
func (s *Segment) Close() error {
	if w := s.inflight; w != nil {
		<-w.done
		s.inflight = nil
	}
	var err error
	if s.m != nil {
		err = s.m.Unmap()
		s.m = nil
	}
	s.data = nil
	if s.f != nil {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		s.f = nil
	}
	return err
}

// Remove closes the segment and deletes its file. The caller syncs the
// directory.
func (s *Segment) Remove() error {
	cerr := s.Close()
	if err := s.fs.Remove(s.path); err != nil {
		return fmt.Errorf("segment: remove %s: %w", s.path, err)
	}
	return cerr
}

// SyncFile fsyncs the file without flushing the write buffer. It may run
// concurrently with Append and Flush (group commit syncs outside the
// owner's lock); it must not run concurrently with Close.
func (s *Segment) SyncFile() error {
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("segment: sync %s: %w", s.path, err)
	}
	return s.syncName()
}

// ReadBuffered decodes a record that is still in the write buffer or in a
// background write. The view is valid only until the next Append or Flush.
func (s *Segment) ReadBuffered(off int64) (Record, error) {
	var r Record
	if b, ok := s.inflightRecord(off); ok {
		_, err := s.ReadAtBuf(b, off, &r)
		return r, err
	}
	i := off - s.End() + int64(len(s.wbuf))
	if i < 0 || i >= int64(len(s.wbuf)) {
		return Record{}, fmt.Errorf("segment: %s: offset %d not buffered", s.path, off)
	}
	_, err := s.ReadAtBuf(s.wbuf[i:], off, &r)
	return r, err
}
