// Package enginepeer compares jetwal's stream store (package wal) with the
// peer's, nats-server v2.15.2's file store, on the same workloads in the
// same run: appends without fsync, random loads by sequence and an ordered
// scan, over the same million 128-byte messages. The engine benchmarks of
// package wal compare the store with a bufio log of the same records, a
// floor; these say how it stands against the store users would otherwise
// run.
//
// nats-server exports no constructor for its file store, so the benchmarks
// reach its unexported newFileStore and the methods of *fileStore through
// go:linkname (natsstore_test.go). That ties them to the pinned version
// (v2.15.2, this module's go.mod): a release that renames or re-signs one of
// those functions fails the build here rather than measuring anything else.
// The package has only tests; it lives in the bench module so that
// nats-server stays out of the engine's module graph for everything but
// these benchmarks.
package enginepeer
