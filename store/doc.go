// Package store defines the stream store contract that jetwal's JetStream
// layer plugs into: the StreamStore interface, its message and state types,
// and its sentinel errors.
//
// Two implementations exist: package wal (the file store, on segments) and
// package memstore (memory streams). The shared conformance suite in
// store/storetest runs every behavioural test against both.
//
// Sequences are uint64 stream sequences starting at 1. They only grow: no
// operation (delete, purge, compact, truncate, crash recovery) ever makes a
// store hand out a sequence it handed out before.
package store
