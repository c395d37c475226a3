// Package stream replicates a JetStream stream with hashicorp/raft: FSM is
// the raft.FSM every replica runs, applying the stream's log to a wal.Store
// of its own, so that all replicas agree on every message, sequence and
// timestamp. The leader proposes entries (entry.go: append, a batch of
// appends, delete, purge, compact); raft orders and commits them; each
// replica applies them.
//
// # Batches
//
// An OpAppendBatch entry carries several messages (a count, then each
// message's time, subject, header and data; entry.go draws the bytes):
// the proposer's group commit, one raft entry, one log record and one
// AppendEntries item for many publishes. The FSM applies its messages as
// appends in order and answers a BatchResult, one Result (sequence, time,
// error) per message; a refused message takes no sequence and the ones
// after it are applied. Single-message OpAppend entries are still applied
// (logs written before batches).
//
// # Durability
//
// The raft log (package raftstore, fsynced before an entry commits) is the
// durable record. The replica's store is written without fsync, and made
// durable at marks: the file <dir>/applied records, atomically, the last
// raft index applied, how many messages of the next entry are applied
// too (a batch marked in its middle), the store's last sequence and the
// largest timestamp at that point (applied.go draws it). A mark is written
//
//   - before and after every entry that is not an append,
//   - after an append the store refused (a limit, a bad subject), inside
//     a batch at the refused message's position,
//   - when raft takes a snapshot (before it may compact its log),
//   - on Close.
//
// So after a crash the messages past the mark are appends that the store
// took (or one non-append, which applied twice in a row changes nothing),
// and raft replays them: the messages of a marked batch up to the mark's
// position are skipped, an append whose sequence the store already holds
// is recognised and skipped, the rest are applied. Raft must be configured
// with NoSnapshotRestoreOnStart, since the store survives restarts.
//
// A crash can leave the store counting sequences whose messages it never
// wrote (a new segment created, the messages before it not yet written:
// a wal store's sequences never go backwards). Open finds the store's last
// sequence beyond its last message and past the mark, and rebuilds the
// store from its own messages up to there (through <dir>/repair, in the
// snapshot format, so a crash midway resumes from that file); the replay
// then appends the lost messages again, at their sequences.
//
// # Timestamps
//
// An append carries the leader's clock; the FSM stamps it with the larger
// of that and the largest timestamp applied so far, a value every replica
// computes alike, so the stores agree on times as well (the store's own
// never-backwards rule then never fires differently on one replica).
// Expiry by max_age runs on each replica's own timer, as in nats-server.
//
// # Snapshots
//
// An FSM opened with a fetcher (Options.Fetch; package cluster gives one)
// snapshots the stream's state, not its messages: version 2 (state.go),
// read from the store when raft asks, a few dozen bytes plus the
// interior deletes. Without a fetcher, or when the interior deletes would
// not fit (more than 65,536 ranges, or more than store.MaxDeletedList
// deleted sequences), the snapshot is version 1 (snapshot.go), every
// message, read from the store while raft goes on applying (removals
// applied meanwhile are replayed from the log after its index). Both are
// read back; little endian:
//
//	version 1  "JWRS" | 1 u32 | index u64 | first u64 | last u64 | last time i64
//	           then per message: seq u64 (> 0) | time i64 | uvarint len | subject | uvarint len | header | uvarint len | data
//	           then 0 u64 | xxhash64 of everything before it
//	version 2  "JWRS" | 2 u32 | index u64 | first u64 | last u64 | last time i64
//	           | count u32 | count × (first seq u64 | length u64) | xxhash64 of everything before it
//
// In version 1 the holes between messages (and after the last one up to
// last) are the deleted sequences; in version 2 the ranges list them, in
// ascending order, apart, inside [first, last], at most 65,536.
//
// Restore of version 1 rebuilds the store from the snapshot's messages,
// holes included (wal.Store.SkipTo). Restore of version 2 reconciles the
// replica's own store with the state (catchup.go):
//
//  1. the snapshot's state is written to <dir>/restore (atomically,
//     synced) before the store is touched;
//  2. messages below first are removed (wal Compact), and those the
//     snapshot lists as deleted, where the store holds them; a store that
//     failed or runs past last is emptied first and all of it fetched;
//  3. the sequences after the store's last up to the snapshot's last are
//     fetched from the group (Fetcher: cluster asks the leader, then any
//     member when no leader answers) in bounded answers and stored at
//     their sequences and times; the sequences an answer covers without a
//     message are deleted at the member that answered and stored as a gap
//     (SkipTo), so sequences stay aligned; each answer is synced before
//     the next question. A fetch that fails (no leader, a leader behind or
//     unreachable, a bad answer) is retried with backoff (20 ms to 2 s)
//     until one answers or the FSM stops (Stop, Close: ErrStopped, and
//     Restore fails; raft installs the snapshot again later);
//  4. only then is the snapshot's index marked applied (the mark), and
//     <dir>/restore removed.
//
// A crash anywhere in between leaves the old mark and <dir>/restore. Raft
// has the snapshot stored (it stores an installed snapshot before it
// calls Restore) and counts its index applied, so Open takes the restore
// file up as pending (Pending), and the next ApplyBatch or Snapshot
// completes it before anything else: every step is idempotent and
// resumes from the store as it is (what was fetched and synced is not
// asked for again; the store's tail repair of Durability applies, with
// only the store's own messages counting). Raft installing the snapshot
// again does the same. A crash after raft stored the snapshot and before
// <dir>/restore was written leaves no trace here: the owner gives raft's
// latest snapshot to Adopt before raft starts, when it is newer than the
// mark (cluster does). While a restore is pending the store must not be
// served (cluster hands the group's leadership over).
//
// A restored follower fetches only what it lacks: one 1,000 messages
// behind on a stream of 100,000 (128-byte bodies) restored a 52-byte
// snapshot and fetched 1,000 messages (137 KB) in 1.3 ms, where the
// version 1 snapshot was 15.7 MB, all rewritten on the follower, in
// 116 ms (in memory; each periodic snapshot of the leader writes those
// 52 bytes instead of the 15.7 MB).
//
// # Speed
//
// BenchmarkReplicatedAppend (three replicas, loopback TCP, real disk, 128 B)
// measured 132k appends/s with 256 proposals in flight and 5.9k/s with
// one at a time (each then waits for two fsyncs and a round trip), on the
// 2-core development machine. Raft must be configured with BatchApplyCh:
// without it the leader takes proposals one by one and the windowed figure
// falls to 8.8k/s.
//
// # Layout
//
//	<dir>/applied   the applied mark
//	<dir>/repair    only while a store is rebuilt after a crash (see Durability)
//	<dir>/restore   only while a version 2 snapshot is being restored (see Snapshots)
//	<dir>/store/    the replica's wal store
package stream
