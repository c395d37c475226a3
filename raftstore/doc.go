// Package raftstore adapts jetwal's raft log engine (package raftlog) to
// github.com/hashicorp/raft: a Store is a raft.LogStore, a raft.StableStore
// and a raft.MonotonicLogStore, so one value is passed twice to raft.NewRaft:
//
//	store, err := raftstore.Open(dir, raftstore.Options{})
//	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
//
// Every StoreLogs is durable before it returns (one write and one fdatasync
// per batch), DeleteRange handles raft's prefix deletions after snapshots and
// suffix deletions after leader changes, and Set/SetUint64 replace the
// stable file atomically (see package raftlog's doc for the on-disk format
// and crash guarantees). IsMonotonic returns true: the store keeps dense
// indexes and refuses gaps, so after restoring a snapshot raft deletes the
// whole log instead of leaving a gap.
//
// # Where raft lives
//
// This package is in jetwal's root module: the jetwal binary replicates
// with it, so hashicorp/raft and its dependencies (go-hclog, go-metrics,
// go-msgpack, ...) are the module's requirements. raftlog itself knows
// nothing of any raft library, and internal/lint keeps raft out of every
// engine package, so a program that uses only jetwal's stream store does
// not build raft.
//
// The conversions between raft.Log and raftlog.Entry are field copies.
//
// # Encryption at rest
//
// Options.Encryption seals every entry of the log (raftlog's doc says what
// is sealed and what stays clear: the stable file of terms and votes, the
// indexes, lengths and append times). Snapshots are raft's to store:
// WrapSnapshots wraps a raft.SnapshotStore (raft's FileSnapshotStore) so
// that every snapshot's state stream is sealed in authenticated chunks
// under a data key of the snapshot directory's own (snapshot.go):
//
//	files, err := raft.NewFileSnapshotStore(snapDir, 2, logOutput)
//	snaps, err := raftstore.WrapSnapshots(files, snapDir, raftstore.SnapshotOptions{Encryption: cfg})
//	store, err := raftstore.Open(logDir, raftstore.Options{Encryption: cfg})
//	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
//
// Both refuse a directory whose key file the configured keys do not open
// (ErrKeyMismatch, naming it) without changing it, rewrap the key file
// when it opens with prev_key, and leave a directory written in the clear
// before a key was configured in the clear (PlainWithKey).
package raftstore
