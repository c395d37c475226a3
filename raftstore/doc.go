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
// # Why a nested module
//
// This package is its own Go module (github.com/jetwal/jetwal/raftstore)
// so that the jetwal engine's go.mod never gains hashicorp/raft and its
// dependencies (go-hclog, go-metrics, go-msgpack, ...): a program that uses
// jetwal's stream store does not download or build raft, and raftlog itself
// knows nothing of any raft library. Only programs that import raftstore pay
// for raft. The engine is required through a replace directive pointing at
// the parent directory, so the two are always built from one tree.
//
// The conversions between raft.Log and raftlog.Entry are field copies.
package raftstore
