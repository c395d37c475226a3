// Package segment implements jetwal's append-only segment files: the bottom
// layer of the stream store.
//
// A stream's messages live in a directory of segment files, each named by the
// first sequence it may hold, zero-padded so names sort in sequence order:
//
//	00000000000000000001.seg      active or sealed, plain
//	00000000000001048577.seg.s2   sealed and S2-compressed
//
// # Segment header (32 bytes, little endian)
//
//	offset size field
//	0      4    magic "JWS1"
//	4      1    format version (1)
//	5      1    flags (bit 0: body is S2 compressed; bit 1: records are
//	            sealed, see "Encrypted segments")
//	6      2    reserved, zero
//	8      8    base sequence: the first sequence this segment may hold
//	16     8    creation time, unix nanoseconds
//	24     8    xxhash64 of bytes [0, 24)
//
// # Record (variable length, little endian), directly after the header
//
//	offset   size field
//	0        4    total length L of the record, these 4 bytes and the checksum included
//	4        2    flags (bit 0: tombstone, bit 1: erased, bit 2: batch open)
//	6        2    subject length S
//	8        8    sequence
//	16       8    timestamp, unix nanoseconds
//	24       4    header length H
//	28       S    subject
//	28+S     H    NATS header block
//	28+S+H   P    payload, P = L - 36 - S - H
//	L-8      8    xxhash64 of bytes [0, L-8) of the record
//
// The checksum covers every byte of the record, its lengths included, so a
// torn or bit-flipped record is always detected. A zero length marks the end
// of the written data in a preallocated (zero-filled) segment.
//
// A tombstone record (flag bit 0) deletes the sequences [sequence,
// sequence+count) where count is its 8-byte payload; its subject and header
// are empty. Tombstones are how deletes, filtered purges and truncates survive
// a restart; they refer to sequences at or below the segment's own messages.
// A record with flag bit 2 (batch open) is a message of an atomic batch
// that more messages of the same batch follow; the batch's last message has
// the bit clear. The messages of a batch are written contiguously in one
// segment, so a run of batch-open records that ends the newest segment is
// a batch a crash cut short: recovery drops it (package wal).
// An erased record (flag bit 1) is a message whose subject, header and payload
// bytes were overwritten with zeros on request, checksum rewritten.
//
// # Encrypted segments
//
// A segment with header flag bit 1 belongs to an encrypted stream (package
// crypt; the data key is in the stream's key file, package wal). Its
// records have the layout above with the body sealed:
//
//	offset        size  field
//	0             28    the clear fields above: length L, flags, subject
//	                    length S, sequence, timestamp, header length H
//	28            24    nonce (crypt: session salt || counter)
//	52            S+H+P ciphertext of subject || header block || payload
//	52+S+H+P      16    AEAD tag
//	L-8           8     xxhash64 of bytes [0, L-8)
//
// with P = L - 76 - S - H. The associated data of the seal is bytes
// [0, 28) of the record followed by the segment's base sequence (8 bytes,
// little endian), so a record's sequence, timestamp, flags (tombstone,
// erased, batch open) and lengths are authenticated with its contents,
// and a record copied to another offset keeps opening only in its own
// segment under its own sequence. Tombstones are sealed too (their count
// is the payload).
//
// What stays clear, and why: the lengths, so that the checksum, torn-tail
// detection, resync (findNext) and jetwal verify work without the key;
// the sequence and timestamp, which recovery, the index and the scans of
// damaged segments read before anything is opened; the flags. Subjects,
// headers and payloads are never on disk in the clear; their lengths are.
// The checksum covers the stored (sealed) bytes, so a structure check needs
// no key; a checksum that holds and a tag that fails is damage all the
// same (CorruptError, reason "record authentication failed"), handled as a
// checksum failure: reported with file and offset, resynced past by Scan,
// never returned. An erase seals zeros again under a new nonce.
//
// Reads of an encrypted segment cannot be views of the mapping: ReadInto
// and ReadAtBuf open the record into a new buffer (ReadIntoBuf and
// ReadAtBufInto reuse the caller's), ReadAtCopy opens it in place in its
// copy, and Scan opens each record into one buffer reused for the next.
// Opened without a key (OpenKey with nil) an encrypted segment can be
// scanned for structure only: its records come back Sealed.
//
// # Sealed compressed segments
//
// A sealed segment may be rewritten as header (flag bit 0 set) followed by one
// S2 block (github.com/klauspost/compress/s2) holding every record byte after
// the header. It is decoded into memory when first read. Compressed segments
// are read-only: erasing a record in one only writes a tombstone. An
// encrypted segment is compressed as it is stored (the S2 block holds the
// sealed records; the header keeps bit 1): compression after encryption
// finds little but the clear fields to save, and compressing before
// sealing would let a record's stored length reveal how compressible its
// payload is. It keeps one decode path and the offsets of the plain layout.
//
// # Writing, reading and the lifetime of read slices
//
// Appends are encoded into an in-memory write buffer and written with one
// pwrite per flush (WriteAt) into a file preallocated with fallocate, so a full
// disk surfaces as ENOSPC from a system call rather than SIGBUS from a store
// into a mapping; where preallocation is unsupported the file is grown with
// ftruncate and the same pwrite path reports ENOSPC. Reads go through a
// read-only shared mapping (mmap-go), which sees pwritten bytes immediately.
// A segment whose every write is synced (a raft log, a SyncAlways store)
// turns on zero-ahead (zeroahead.go): zeros written in 1 MiB chunks just
// past the records, so that a record's fdatasync need not also commit the
// extent changes of fallocated space.
//
// The mapping stays valid without the file's descriptor, so a segment keeps
// its descriptor only while it is used (handle.go): one unused for
// IdleClose with everything written through it synced is closed, and the
// next write, sync, trim or pread opens the file again. A server holding
// thousands of streams, most of them idle, holds descriptors for the few
// it writes, not one per segment.
//
// A flush may run in the background (StartFlush): the buffer is handed to a
// pwrite on a goroutine of its own and a second buffer takes the appends,
// at file offsets after it. At most one such write is in flight; its
// records are readable from its buffer (ReadBuffered) and count as flushed
// (Flushed) once the owner settles it under its lock (Flush, WaitFlush,
// SettleWrite, the next StartFlush). Flush, Erase, Freeze and Close wait for
// it first. The goroutine reads only its buffer and the file, so no
// segment field changes outside the owner's lock. A settled write's buffer
// is kept for the next swap; Freeze lets both buffers go, and so does
// ReleaseBuffers, which the owner calls for a stream gone idle. Let-go
// buffers wait in a sync.Pool for the next segment to take (a stream that
// rolls to a new segment keeps its buffers), and the garbage collector
// empties the pool when nobody does.
//
// A file can be made ahead of need (Spare, named spare.seg.tmp: created,
// preallocated, synced with its directory entry, mapped) and turned into a
// segment later by writing the header and renaming it. Such a segment syncs
// its directory after its file on its first sync, so its name is durable no
// later than its first record.
//
// Why pwrite and not stores into a writable mapping: BenchmarkWritePath
// measures both for 128-byte records into fresh preallocated 64 MiB files.
// Here (2 cores) pwrite took 102-118 ns/record against 137-345 ns/record for
// the mapping, whose first touch of every page is a page fault; pwrite also
// keeps a full disk an error instead of a signal.
//
// Large records (CopyReadMin and up) are better read with ReadAtCopy, one
// pread into the caller's buffer: through the mapping, every page a reader
// touches for the first time is a page fault, which on the benchmark VM made
// a 256 KiB read cost about 135 µs against 30 µs with pread. ReadAtCopy
// verifies the checksum on its copy, as ReadAt does on the mapping.
//
// Record views returned by ReadAt and Scan alias the mapping: they are valid
// until the segment is closed or removed. Package wal guarantees that by
// copying out under a read lock and unmapping only under its write lock; any
// other caller must give the same guarantee.
//
// All constants in format.go are part of the on-disk format.
package segment
