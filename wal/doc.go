// Package wal is jetwal's file store: the store.StreamStore a JetStream
// server plugs in for a stream with file storage. It keeps a stream's
// messages in checksummed append-only segments (package segment), indexes
// them in memory (package index), and checkpoints that index so a restart
// does not rescan everything.
//
// # Directory layout
//
//	<dir>/LOCK                         flock: one process per store (not with Options.OuterLock)
//	<dir>/<base %020d>.seg             a segment whose first sequence is base
//	<dir>/<base %020d>.seg.s2          a sealed segment, S2-compressed (Options.Compress)
//	<dir>/index.ckpt                   the last index checkpoint
//	<dir>/index.ckpt.tmp               a checkpoint being written (removed on open)
//	<dir>/seq.reserve                  sequence reservation (interval and never modes)
//	<dir>/spare.seg.tmp                the next segment, made ahead (removed on open)
//	<dir>/key.jwk                      an encrypted store's wrapped data key (encrypt.go)
//
// Only the newest segment is written; every older one is sealed (trimmed to
// its used length and fsynced). Segment formats are drawn in package
// segment, the checkpoint body in package index; the store's checkpoint
// trailer is in recover.go.
//
// # Encryption
//
// With Options.Encryption set, a new store draws a data key, keeps it in
// key.jwk wrapped by the configured key, and seals every record's subject,
// header and payload (segment/doc.go) and its checkpoints' subject section
// (index/sealsubj.go); encrypt.go says what Open does with a wrong key, a
// rotation (prev_key) and a store written without a key. The store's owner
// seals its own files with the same data key (datakey.go: ReadKey opens
// the key file before the store is opened, DataKey hands out the store's):
// package jetstream's doc.go says why one key per stream.
//
// # Byte accounting
//
// State().Bytes and Limits.MaxBytes count each message as nats-server's
// file store counts it (store.FileRecordSize: its record of 22 + subject +
// payload + 8 bytes, and 4 + header when it has one), not the size of the
// record jetwal writes. A checkpoint written before trailer version 2
// counted 16 + subject + header + payload; opening it recounts the total
// from the records (recountBytesLocked).
//
// # Appending and group commit
//
// An append validates the subject and size, takes the store lock, checks
// discard-new limits, assigns the next sequence and a timestamp that never
// goes backwards, encodes the record into the active segment's write buffer,
// adds it to the index and enforces the discard-old limits. The buffer is
// written with one pwrite per 256 KiB (segment/doc.go says why pwrite and not
// a writable mapping), on a goroutine of its own (segment.StartFlush): the
// appender swaps in a second buffer and goes on, under the lock, while the
// kernel copies the first into the page cache on the other core. It waits
// for that write only if it fills 1 MiB (maxBuffered) meanwhile, or when
// it needs the segment written whole (a roll, a read of a record not yet
// written). A record counts as flushed once its write is settled under the
// lock; the write's goroutine touches nothing but the file. The two buffers
// are kept for reuse (up to 4 MiB each) only by the active segment while
// the stream appends: a frozen segment drops them, and so does the active
// one when a whole checkpoint tick passes without an append (append.go,
// releaseIdleBuffers).
//
// The append then queues a waiter and kicks the background commit goroutine.
// With SyncAlways (the default) it writes the buffer and fsyncs once, both
// outside the lock, and releases every waiter up to the sequence it
// covered. Appends keep going into a second buffer meanwhile, so concurrent
// appenders share fsyncs; before starting the next fsync the goroutine
// waits up to 50 µs for the writers it just released to append again
// (never for a lone writer), which keeps 64 writers in one group instead of
// two alternating ones. A roll freezes the full segment (writes its buffer) under the
// lock; the commit trims and fsyncs it outside the lock before it releases
// the waiters it holds, so no append waits under the lock for that fsync.
// Nor for the new segment's creation: once a store has rolled, a goroutine
// keeps a spare file ready (created, preallocated, mapped, synced, its
// directory entry too; spare.go), and the roll writes its header and
// renames it. The rename becomes durable with the segment's first sync,
// which syncs the directory after the file, before any append in it is
// acknowledged. A stream that never rolls keeps no spare.
//
// With SyncInterval and SyncNever the commit is one pwrite of the buffer,
// waited for outside the lock, and no fsync: the waiters are released once
// their bytes belong to the operating system, and the interval ticker (or
// the OS) fsyncs later. Appends that arrive while a commit runs share the
// next one.
//
// The contract, per mode:
//
//	always     acknowledged = fsynced: survives kill -9 and power loss
//	interval   acknowledged = written: survives kill -9; a power loss may
//	           lose what was written in the last interval
//	never      as interval, with the fsync left to the operating system
//
// In every mode a message becomes visible to readers when it is
// acknowledged, and a process crash never loses an acknowledged message, so
// a restarted store never hands an acknowledged sequence out again.
//
// A power loss in interval or never mode may lose the last written
// messages, and with them the knowledge of how far the sequence got. So
// those modes reserve sequences ahead (reserve.go): no sequence past the
// durable mark in seq.reserve is handed out. The next mark, 65536 further
// on, is written and fsynced by a background goroutine once half of the
// current step is used, one small fsync per 65536 messages that an append
// waits for only if it reaches the mark first. The file has two 32-byte
// slots written alternately:
//
//	+------+-----------+--------------+----------------+-------------+
//	| JWSR | gen  u32  | reserved u64 | boot hash  u64 | xxhash64    |
//	+------+-----------+--------------+----------------+-------------+
//
// the valid slot with the higher gen wins. When Open finds the boot id of
// the machine changed since the mark was written (a reboot, so possibly a
// power loss), the next sequence starts after the mark; a clean Close lowers
// the mark to the last sequence so an orderly reboot skips nothing. Deletes
// and purges are answered under the same rule (their tombstones fsynced, or
// written). Full segments are sealed in the background.
//
// A failed write or fsync is sticky: the store refuses appends until it is
// reopened, and keeps serving reads. A full disk is not: segments are
// preallocated, so it shows when the next segment cannot be created, which
// happens before the old one is sealed and changes nothing. That append is
// refused with an error wrapping ENOSPC and later ones try again. Every
// message leaves a small reserve in its segment for tombstones, so deletes
// and purges still work on a full disk; a purge frees the sealed segments it
// empties, and appends resume without a reopen.
//
// # Reading
//
// A load finds the record through the sequence index and decodes it in
// place: a record under segment.CopyReadMin (8 KiB) through the segment's
// read-only mapping, a larger one with pread into the message's own buffer
// (read.go). A record still in the write buffer is flushed first. A
// sequential reader (LoadNext: consumers, mirrors, scans) reading small
// records in order reads them from read-ahead windows instead: spans of a
// segment read with one pread, 16 KiB at first and doubling up to 128 KiB as
// the reader runs off the end, decoded record by record with checksums
// verified as from the mapping; the store keeps 8 of them (readahead.go).
// Pages a mapping read touches stay in the process's resident set and each
// costs a page fault the first time; a window touches none, so a consumer
// reading a whole stream leaves none of it resident. Reads out of order (a
// sparse filter) go through the mapping. An in-place erase drops the
// windows of its segment.
//
// # Removal
//
// Deletes, filtered purges, truncates and limit evictions are written as
// tombstone records (a range of sequences) in the active segment; evictions
// by limits are batched and written with the next flush, and recovery
// re-applies limits, so a crash that loses an eviction's tombstone only
// redoes the eviction. When the head of the stream is removed, whole segments
// without a live message are deleted. A segment is never unmapped while a
// reader may hold a slice of it: reads copy out under the read lock, and a
// removed segment busy in an fsync outside the lock is closed when that ends.
//
// A removal of many messages (a compaction, a purge, a truncate, a limit
// lowered, a tombstone replayed at recovery) updates the subject index
// once per subject, not once per message (prune.go). A compaction or purge
// longer than pruneChunk messages releases the lock between chunks, so
// appends and reads of the stream go on while it runs; at each release the
// indexes agree with each other.
//
// # Recovery
//
// Open lists the segments, loads index.ckpt if its checksum holds and it
// matches the segments on disk, and scans only the records after the point
// the checkpoint covered; without a usable checkpoint it scans everything.
// A damaged record in the newest segment's tail is a torn write: the tail
// is cut there. A damaged record anywhere else is corruption: scanning
// resyncs past it, the sequences in the damaged span are reported in the
// RecoveryReport and in State().Lost, and a Load of one of them returns an
// error wrapping both store.ErrNotFound and store.ErrCorrupt. A read that
// finds bit rot after recovery marks the message lost the same way; corrupt
// bytes are never returned. Sequences never go backwards: after a crash the
// next sequence is above everything any segment holds.
//
// Checkpoints are written on Close, every CheckpointEvery while dirty, and
// every 8 segment rolls (temp file, fsync, rename, directory fsync). Except
// on Close a checkpoint runs on a goroutine of its own, one at a time, and
// holds the store lock only to sync what came in since a first sync made
// without it and to encode the index into the temp file; its fsync, rename
// and directory fsync run while appends and reads go on (ckptwrite.go). A
// checkpoint holds the index in its packed form (about 1.1 bytes per
// message for small records, a few bytes per block of 8192 for records of
// one size), written through a small buffer
// (index.EncodeTo). Open reads it through a read-only mapping and keeps
// that mapping until Close (ckptload.go): the packed blocks of the sealed
// index are used in place, so they cost page cache, not heap, and the
// mapping is cooled once decoded, so a restarted store is resident only
// for what its readers touch. Each later checkpoint does the same while
// running: once durable and renamed over the old file, it is mapped and the
// packed blocks are checked against it byte for byte, both without the
// store lock (index.Placement.Check); under the lock the blocks are moved
// to it (index.Seqs.Move, pointer swaps), and after it the previous
// mapping, with the old file's disk space, is released. So the sealed
// index never stays on the heap longer than until the next checkpoint.
//
// # Concurrency
//
// A Store is safe for many concurrent appenders and readers. AppendDone
// callbacks run one at a time, in sequence order, never under the store lock.
package wal
