// Package consumerstate keeps the delivery and acknowledgement state of
// durable JetStream consumers, crash-safe and checksummed, apart from the
// stream's segments.
//
// # State machine
//
// State holds Delivered and AckFloor (each a consumer sequence and a stream
// sequence), the pending messages (stream sequence → consumer sequence of
// the first delivery, time of the last delivery, nak mark) and the
// redelivery counts. Its methods are the consumer's transitions:
//
//	Deliver(sseq, dcount, ts)  first delivery (dcount 1) or redelivery
//	DeliverNoAck(sseq)         AckNone: delivered and acknowledged at once
//	Ack(sseq), Term(sseq)      remove one pending message
//	AckAll(sseq)               remove every pending message <= sseq
//	Nak(sseq, at)              ask for redelivery at time at
//	Reset(start)               forget pending, restart at stream seq start
//
// The ack floor moves only when the lowest pending message leaves: to just
// below the next pending message, or to Delivered when none is left. So it
// passes over every message acknowledged, terminated or skipped (a filtered
// consumer skips stream sequences) in one step, and never passes a pending
// one. Verify checks the invariants listed on State.
//
// # Files
//
// Each consumer of a stream has a directory under the stream's obs
// directory, and the obs directory has one catalogue:
//
//	obs/catalog.log                     the catalogue: creates and deletes whose directories may not be durable yet
//	obs/<name>/meta.inf                 config JSON, verbatim
//	obs/<name>/meta.sum                 16 lowercase hex digits: xxhash64 of meta.inf (big-endian)
//	obs/<name>/state.dat                snapshot: an encoded State (below), stamped with generation G
//	obs/<name>/state-<G as %016x>.log   operations applied since snapshot G
//
// A store keeps at most Options.MaxOpenLogs of the state logs open, the
// ones used last (logcache.go); a log whose changes are all durable is
// closed to make room and opened again at its next write.
//
// A consumer exists if it has a directory and the catalogue does not hold
// a delete record for it, or if the catalogue holds a create record for it
// not followed by a delete record (see "Catalogue" below).
//
// Transient names, each removed or completed when the store or consumer is
// next opened: obs/.tmp-<name>/ (a consumer directory being written;
// directories appear by renaming it into place), obs/.tmp-catalog.log (a
// catalogue compaction in progress), obs/.del-<name>/ (a Delete in
// progress: the directory is renamed away, the rename synced, then
// removed), state.dat.tmp (a snapshot being written), meta.inf.new and
// meta.sum.new (a config update: both are written and synced, the
// directory synced, then each renamed over its old name; on open a .new
// pair whose checksum matches is rolled forward, anything else is removed).
//
// # Catalogue (catalog.log)
//
// Creating a directory durably costs two fsync rounds (the files and the
// temporary directory, then the obs directory after the rename). Create
// instead appends one record to the catalogue and fdatasyncs it: the
// catalogue is created zero-filled (32 KiB, or larger for a record that
// would not fit), so an append overwrites allocated bytes and its
// fdatasync writes no file metadata.
//
//	offset  size  field
//	0       4     magic "JWCK"
//	4       1     version, 1
//	5       3     reserved, zero
//	8       8     generation C
//	16      8     xxhash64 of bytes [0, 16)
//	24      ...   records, framed as the state log's (magic "JWCR", length,
//	              xxhash64 salted with C and the offset), then zeros
//
// Record payloads:
//
//	1 create  uvarint name length, name, config JSON (the rest of the payload)
//	2 delete  uvarint name length, name
//	3 update  uvarint name length, name, new config JSON
//
// A create of a name the catalogue holds live, a delete or update of one
// it does not, an unknown operation or an invalid name or config is
// corruption. Each record is fsynced before the next is written (under
// every sync policy), so records reach the disk in order: a damaged record
// with nothing good after it is a torn tail, an append a crash interrupted
// and never acknowledged, and is ignored; a damaged record followed by a
// good one, or a damaged header, is corruption: Open and Check fail with
// an error wrapping ErrCorrupt that names catalog.log and the offset. Such
// damage is bit rot, not a crash; the repair is to restore the file or
// remove it (consumers that have directories survive; consumers without
// one are lost, deleted ones whose directory remained come back).
//
// Materialization: a consumer created through the catalogue has no
// directory while its state is unchanged: the catalogue's records (config,
// empty state) are the consumer, and Load opens it from there. Its
// directory (newest config, current state as the snapshot of generation 1,
// empty log 1) is written by the flush that writes its first change (a
// Flush or Write, the background flush, Checkpoint, Close):
// obs/.tmp-<name>/ written, its files and that directory synced together,
// renamed into place, obs synced. That flush returns only after the sync,
// so no state is acknowledged before the directory is durable; a crash
// before it leaves the catalogue's consumer with an empty state.
// UpdateConfig of a consumer without a directory appends an update record
// (fsynced) instead, excluding materialization meanwhile.
//
// Delete of a consumer the catalogue holds appends a delete record (and
// fsyncs it) before removing the directory, if any, as above. A failed
// catalogue write or fsync is sticky: later Create, Delete and catalogue
// UpdateConfig calls return ErrWriteFailed until the store is reopened.
//
// Open reconciles: a live catalogue consumer with a directory is the
// directory's (written after its last record); one without stays in the
// catalogue; every directory of a consumer whose last record is a delete
// is removed, and obs synced. If the catalogue holds more records than
// live consumers without a directory, or a torn tail, it is then
// compacted. Compaction (also when an append would not fit) replaces the
// catalogue with one of generation C+1 holding only a create record (with
// the newest config) for each consumer still without a durable directory,
// zero-filled to max(32 KiB, twice those records plus the record to
// append): .tmp-catalog.log written and fsynced, renamed over
// catalog.log, obs synced. A crash before that rename leaves the old
// catalogue, which still describes every consumer; after it, every
// consumer the new one leaves out has a durable directory or was deleted
// durably.
//
// # Snapshot encoding (Encode, state.dat)
//
// All fixed-width integers are little-endian. uvarint and varint are
// encoding/binary's (varint is zigzag).
//
//	offset  size  field
//	0       4     magic "JWCS"
//	4       1     version, 1
//	5       3     reserved, zero
//	8       8     generation (0 from Encode; the snapshot's G in state.dat)
//	16      4     body length N
//	20      N     body
//	20+N    8     xxhash64 of bytes [0, 20+N)
//
// Body:
//
//	uvarint  Delivered.Consumer
//	uvarint  Delivered.Stream
//	uvarint  AckFloor.Consumer
//	uvarint  AckFloor.Stream
//	uvarint  P, the number of pending entries
//	P entries in ascending stream sequence:
//	  uvarint  stream seq - previous entry's (first: - AckFloor.Stream), >= 1
//	  uvarint  consumer seq - previous entry's (first: - AckFloor.Consumer), >= 1
//	  varint   timestamp - previous entry's (first: - 0), wrapping int64
//	  byte     flags: bit 0 redelivered, bit 1 nak; other bits zero
//	  uvarint  redelivery count (delivery count - 1), >= 1   if bit 0
//	  varint   nak time - timestamp, nak time != 0           if bit 1
//
// The body must end exactly after the last entry, and decode to a state
// that passes Verify; anything else is ErrCorrupt.
//
// # Log encoding (state-<G>.log)
//
//	offset  size  field
//	0       4     magic "JWCL"
//	4       1     version, 1
//	5       3     reserved, zero
//	8       8     generation G (must match the file name and state.dat)
//	16      8     xxhash64 of bytes [0, 16)
//	24      ...   records
//
// Record at file offset O:
//
//	O+0     4     magic "JWCR"
//	O+4     4     payload length L
//	O+8     8     xxhash64 of: G (8 bytes LE) ‖ O (8 bytes LE) ‖ bytes [O, O+8) ‖ payload
//	O+16    L     payload: operations
//
// A log that is empty, all zeros, or a strict prefix of its header was
// created but never synced, so it never held a durable record: it reads as
// empty. Any other damage to the header is corruption.
//
// Salting the checksum with G and O means a record is only good in the log
// and at the place it was written. Each flush appends exactly one record,
// so a record is the unit of atomicity: a crash keeps a prefix of the
// records. Operations (timestamps are deltas from the previous timestamp in
// the same record, the first from 0):
//
//	1 deliver        uvarint sseq, uvarint dcount, varint ts delta
//	2 deliver-noack  uvarint sseq
//	3 ack            uvarint sseq
//	4 ack-all        uvarint sseq
//	5 nak            uvarint sseq, varint at delta
//	6 term           uvarint sseq
//	7 reset          uvarint start
//	8 rewind         uvarint start (reset, consumer sequences from 0 too)
//
// Replaying applies them with State's methods; an operation the state
// rejects is ErrCorrupt. Operation 8 came later than the others (with
// CONSUMER.RESET): a jetwal built before it reports a log holding one as
// corrupt, which a downgrade after a consumer reset would meet.
//
// # Encryption (Options.Key)
//
// With Options.Key (the stream's data key, package crypt) every file holds
// its content sealed (AEAD, crypt's XChaCha20-Poly1305 or AES-256-GCM):
//
//	state-<G>.log   header byte 5 = 1 (sealed); each record's payload is
//	                nonce || operations encrypted || tag, associated data
//	                "jetwal consumer log v1" 0 name G O (G, O: 8 bytes LE);
//	                the record checksum covers the sealed payload
//	state.dat       header byte 5 = 1; the body is sealed (body length N
//	                counts nonce and tag), associated data
//	                "jetwal consumer state v1" 0 bytes [0, 20) name; the
//	                trailing checksum covers header and sealed body
//	meta.inf        "JWCM", version 1, three zero bytes, then the config
//	                JSON sealed, associated data "jetwal consumer meta v1"
//	                0 those 8 bytes name; meta.sum checksums the stored bytes
//	catalog.log     header byte 5 = 1; each record's payload (operation,
//	                name, config) sealed, associated data
//	                "jetwal consumer catalog v1" 0 C O
//
// name is the consumer's (its directory's) name, so a sealed file or record
// moved to another consumer, offset, generation or file kind does not open.
// What stays clear: file and directory names (consumer names, as in the
// layout above), the headers (magic, version, generations, lengths),
// checksums, and sizes. Without Options.Key nothing changes: byte 5 is
// zero and every file is as described above.
//
// Nonces never repeat: one crypt.Session per opened Store seals everything
// it writes (a random salt drawn at Open and a counter), so records written
// again at the offsets a torn tail was cut at carry fresh nonces.
//
// A sealed value that does not open is damage, handled as a checksum
// failure: a log record is skipped as damaged (good records after it are
// salvaged) or cut as a torn tail, and never replayed; a snapshot or
// meta.inf that does not open is ErrCorrupt naming the file and offset. A
// catalogue record whose checksum holds but whose seal does not open is
// ErrCorrupt too, never a torn tail: the catalogue's torn tail is dropped
// by the compaction that follows, so another key must not read as one. A
// store opened with a key refuses plain files, and one opened without a
// key refuses sealed files (ErrCorrupt, naming the file). Check, without a
// key, checks sealed files by their headers and checksums only; CheckKey
// opens every sealed value too.
//
// # Flushing and compaction
//
// Changes are journaled in memory as operations. A flush appends them as one
// record and fsyncs the log (except background flushes under ModeNever).
// When the log would grow past max(CompactBytes, 2 × the last snapshot), or
// the in-memory journal grew past that bound, the flush writes a snapshot
// instead: state.dat.tmp written and fsynced, the empty log of generation
// G+1 created (its header is not fsynced: the first synced append makes it
// durable), state.dat.tmp renamed to state.dat, the directory fsynced, the
// old log removed. Two fsyncs per snapshot. A snapshot costs O(pending); the log is
// bounded by a constant factor of the snapshot, so the files do not grow
// with the number of acks, and the journal's memory is bounded the same way.
// Options.CompactBytes < 0 disables the log (a snapshot per flush), which is
// the write-temp-rename design; BenchmarkConfirmedAck compares the two.
//
// Only dirty consumers are flushed. The first change to a clean consumer puts
// it on its store's dirty list and arms one timer for the sync interval;
// when it fires, the whole list is flushed in one batch, FlushParallelism
// consumers at a time. Idle consumers cost no I/O and no timer wake-ups.
// Consumer.Flush flushes one consumer synchronously and durably; concurrent
// callers share the flush that covers their changes.
//
// # Durability
//
// Options.Sync follows the stream's sync policy. Under every mode a
// consumer's changes are written within the policy's interval of its first
// unflushed change; ModeInterval and ModeAlways fsync them, ModeNever does
// not. Under ModeAlways the JetStream layer calls Consumer.Flush before it
// confirms an ack the client asked to have confirmed (a +ACK with a reply
// subject, nats.go's DoubleAck), so a confirmed ack is on disk. Flush,
// Checkpoint, Store.Flush and Store.Close always fsync.
//
// Create and Delete are durable when they return under every mode: Create
// fsyncs its catalogue record (about one fdatasync of an overwrite), Delete
// its catalogue record and the obs directory. Materializing a directory
// always fsyncs, like a snapshot.
//
// # Crash safety and torn tails
//
// After a crash a consumer reopens in a state it actually had at or after
// its last completed Flush: never a newer ack floor than was acknowledged,
// possibly an older one (messages are then redelivered). A damaged record at
// the end of the log, with no good record after it, is a torn tail (the
// unsynced part of the last flush): Load cuts it off and reports it in
// Consumer.Recovery. A damaged record followed by a good one, a damaged
// snapshot, log header, meta.inf or meta.sum is corruption: Load fails with
// an error wrapping ErrCorrupt that names the file and byte offset. Check
// runs the same reading without changing anything.
//
// A failed write or fsync is sticky: the consumer's later flushes return
// ErrWriteFailed until the store is reopened, since the file's contents are
// then unknown.
//
// Under ModeNever a machine crash can also reorder unsynced log writes,
// which then reads as corruption; process crashes lose nothing written.
package consumerstate
