// Package raftlog is a log store and stable store for a raft consensus
// module, built on jetwal's segment and vfs layers. It knows nothing of any
// raft library: package raftstore adapts it to
// github.com/hashicorp/raft's LogStore, StableStore and MonotonicLogStore.
//
// # Raft's access pattern, and the design that follows from it
//
// Raft appends batches of entries at consecutive indexes and needs each batch
// durable before it is acknowledged; it deletes a prefix after a snapshot and,
// rarely, a suffix after a leader change. It never writes a gap and never
// deletes from the middle. So:
//
//   - Indexes are dense. Each segment keeps a slice of record offsets: the
//     entry at index i of a segment with base b is at offs[i-b]. GetEntry is a
//     binary search over segments (usually the newest, checked first) and one
//     slice lookup: no map, no tree.
//   - StoreEntries encodes a batch into one buffer, writes it with one pwrite
//     and syncs it with one fdatasync. Raft calls it from one goroutine, so
//     there is no group commit; concurrent callers are serialised.
//   - A prefix deletion rewrites the meta file (the first index) atomically,
//     then removes whole segments below it. Records below the first index in
//     the oldest remaining segment are hidden, not rewritten.
//   - A suffix deletion seals the active segment, removes the segments wholly
//     above the new last index (newest first, so a crash part-way leaves a
//     prefix of the old log), cuts the segment holding the new last index
//     after its record with ftruncate and fsync (a crash leaves it whole or
//     cut), and starts a new segment at the new last index + 1 where appends
//     go on. Deleted records are gone from the files, not hidden behind a
//     marker that a later deletion could lift, so recovery never resurrects
//     a deleted tail: the truncation record is the file's length.
//
// # Files
//
//	raftlog.meta                   the marker of a store, and the first index
//	raftlog.stable                 StableStore keys and values
//	raftlog.lock                   flocked while open (not with Options.OuterLock)
//	key.jwk                        an encrypted log's wrapped data key
//	00000000000000000001.seg       a segment: entries from index 1
//	00000000000000000001.idx       its offset index, written when it is sealed
//	00000000000000004097.seg       the newest (active) segment
//
// # Segments and records
//
// Segments use package segment's header and record framing (see its doc):
// the record's sequence is the raft index, its timestamp AppendedAt, its
// subject empty, its payload the entry's Data, and its header block:
//
//	offset size field
//	0      8    term
//	8      1    type (raft.LogType)
//	9      1    time kind: 0 zero time (timestamp 0), 1 timestamp is unix
//	            nanoseconds, 2 timestamp is unix seconds and 4 bytes of
//	            nanoseconds follow (instants UnixNano cannot hold)
//	10     4    nanoseconds, time kind 2 only
//	10/14  ...  extensions
//
// Every record's xxhash64 covers all of its bytes. Record i of a segment must
// hold index base+i; a record holding another index is corruption.
//
// Segments grow: the first reserves MinSegmentSize (1 MiB), each next one
// twice the used size of the one before, up to MaxSegmentSize (64 MiB). A
// sealed segment is trimmed to its used length and synced before the next is
// created, so only the newest segment can have a torn tail.
//
// # Meta, stable and index files
//
// The meta file (the first index, 8 bytes) and the stable file (every key
// and value, format in format.go) are slot files (slotfile.go): two
// checksummed, generation-numbered copies of the value; an update overwrites
// the older copy in place with one write and one fdatasync. A crash tears at
// most the copy being written and recovery takes the newest copy that
// checks, so a value is always the old one or the new one, never a mix, and
// once the call returns the new one is durable. A value outgrowing its slot
// moves the file to bigger slots by writing a new file, syncing it, renaming
// it over the old one and syncing the directory. The assumption, as with
// every store here: data an fdatasync confirmed stays readable. Bit rot of
// the newest copy would make recovery take the copy before it; Check notes
// a damaged copy either way.
//
// Why a file and not records in the log: raft writes the stable store only
// on elections (current term, vote), and a separate file keeps the term and
// vote out of the log's prefix and suffix deletions, which would otherwise
// have to carry them forward. Why slots and not a rename per update: one
// sync instead of three (file, rename, directory) for raft's compactions and
// votes.
//
// Offset index files are caches: written when a segment is sealed, not
// synced, and checked on open against the segment (base, file size, count,
// checksum). A missing or stale one is rebuilt by scanning its segment.
//
// # Recovery
//
// Open reads the meta and stable files, the index file of every sealed
// segment (4 bytes per entry; no record is read) and scans the newest
// segment. In the newest segment a torn tail (damage with no valid record
// after it) is a crash mid-write and is cut off; damage followed by valid
// records, damage in any other segment, or a segment that ends before the
// next one's base (a hole) is corruption: Open fails with an error wrapping
// ErrCorrupt that names the file and byte offset. Sealed segments' records
// are checked on every GetEntry, which returns such an error instead of
// damaged bytes. Segments wholly below the first index (a prefix deletion cut
// short) are removed. The visible range is [max(meta first, oldest base),
// last record of the newest segment, or its base-1 when it is empty].
//
// After any crash the store reopens to a prefix of what it acknowledged plus
// possibly part of the call in flight, never to a hole or a torn entry.
//
// After a failed write or sync the store refuses further writes until it is
// reopened (the sticky error): what reached the disk is then unknown.
//
// Check reports all of the above without changing anything; `jetwal verify`
// calls it on a directory holding raftlog.meta.
//
// # Encryption
//
// With Options.Encryption set, a new log draws a random data key and
// writes it to key.jwk wrapped by the configured key (package crypt's key
// file: authenticated, checksummed, replaced atomically). Its segments are
// created and opened with the data key (package segment's encrypted
// segments: header flag bit 1), so every record's subject, header block and
// payload are sealed (XChaCha20-Poly1305 or AES-256-GCM). For a raft entry
// that is all of it but the index and AppendedAt: Data, Extensions, term,
// type and the time kind are ciphertext. The associated data binds each
// record to its clear fields and its segment's base, so a record moved to
// another index or segment does not open.
//
// What stays clear, and why:
//
//   - in each record, its length, flags, index (the record's sequence) and
//     AppendedAt (the record's timestamp): recovery, Check and torn-tail
//     detection read them without the key, and they say nothing of what
//     was replicated;
//   - the meta file (the first index) and the offset index files (record
//     offsets): positions only;
//   - the stable file: hashicorp/raft keeps only its current term, the term
//     and address of its last vote there (raftstore), which every peer
//     learns from the RPCs anyway; nothing of the replicated data. It is
//     not sealed, so the term and vote survive a key problem and Check
//     reads them without the key.
//
// Nonces: package segment seals in a crypt.Session started per segment
// per open (a fresh random 128-bit salt and a counter), so after a crash
// recovery cuts a torn tail and new entries are written at the same
// offsets under new nonces. A suffix deletion's cut segment is reopened
// sealed and never written again; the entries after it go to a new
// segment in a new session.
//
// A record whose tag does not open is damage, handled as a checksum
// failure: GetEntry returns an error wrapping ErrCorrupt naming the file
// and offset, a sealed segment holding one refuses Open, and Check reports
// it. One difference in the newest segment: a record whose checksum holds
// but whose tag fails is never a torn write (the checksum covers every
// stored byte), so it is not cut off as one; Open refuses it as
// corruption. A damaged checksum at the tail is a torn write as before.
// Cutting would otherwise destroy entries that a swapped key file only
// hides.
//
// The key file is handled as wal's (encrypt.go): opened with the key or
// prev_key (and then rewrapped with the key, atomically); a key file that
// neither opens, or one with no key configured, refuses Open with an error
// naming the directory and wrapping ErrKeyMismatch, before anything is
// read or changed. A log written in the clear before a key was configured
// stays in the clear (PlainWithKey). A segment whose encrypted flag
// disagrees with the key file refuses Open. Check needs no key: it checks
// the key file's structure and every record's checksum and index;
// CheckKey also opens every record.
package raftlog
