// Package bench compares jetwal's raft store (package raftstore) with
// github.com/hashicorp/raft-wal and github.com/hashicorp/raft-boltdb/v2 in
// one `go test -bench` run, so ratios between them are same-run. Every store
// is on the real disk under b.TempDir() and durable: each StoreLogs is synced
// before it returns (jetwal and raft-wal fdatasync, bbolt fsyncs its commit).
//
// It is its own module so that neither the engine's go.mod nor raftstore's
// gains raft-wal, bbolt and their dependencies. `make bench-raft` runs it and
// writes bench/results/raftstore.md with cmd/raftbench-table.
package bench
