package consumerstate

import (
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/vfs"
)

// SyncMode says when consumer state reaches the disk: the one policy type
// of package durable. Under every mode dirty consumers are written and
// (except under ModeNever) fsynced at most Interval after they became
// dirty; the modes differ in what the JetStream layer waits for before it
// confirms an ack the client asked to have confirmed:
type SyncMode = durable.Mode

const (
	// ModeAlways: Consumer.Flush (written and fsynced). The zero value.
	ModeAlways = durable.Always
	// ModeInterval: Consumer.Write (written to the OS).
	ModeInterval = durable.Interval
	// ModeNever: Consumer.Write; background flushes never fsync, except
	// for snapshots, Consumer.Flush, Store.Flush and Store.Close. A process
	// crash loses nothing written; a machine crash can lose or refuse
	// (ErrCorrupt) the newest log records.
	ModeNever = durable.Never
)

// SyncPolicy follows the stream's sync policy (durable.Policy). A zero
// Interval means DefaultSyncInterval.
type SyncPolicy = durable.Policy

// DefaultSyncInterval is the background flush delay when a policy sets none.
const DefaultSyncInterval = time.Second

// SyncAlways is the policy for streams with sync "always".
func SyncAlways() SyncPolicy { return SyncPolicy{Mode: ModeAlways} }

// SyncInterval flushes dirty consumers (write and fsync) within d.
func SyncInterval(d time.Duration) SyncPolicy { return SyncPolicy{Mode: ModeInterval, Interval: d} }

// SyncNever writes dirty consumers within DefaultSyncInterval and leaves
// fsync to the operating system.
func SyncNever() SyncPolicy { return SyncPolicy{Mode: ModeNever} }

// flushInterval is p's background flush delay.
func flushInterval(p SyncPolicy) time.Duration {
	if p.Interval == 0 {
		return DefaultSyncInterval
	}
	return p.Interval
}

// Defaults used when Options fields are zero.
const (
	// DefaultCompactBytes is the smallest log that is compacted into a
	// snapshot. A log is compacted once it exceeds
	// max(CompactBytes, 2 × the last snapshot's size), so log and
	// snapshot together stay within a constant factor of the pending set.
	DefaultCompactBytes = 64 << 10
	// DefaultFlushParallelism is how many consumers a batch flush writes
	// and fsyncs at once.
	DefaultFlushParallelism = 8
	// DefaultMaxOpenLogs is how many consumers' log files a store keeps
	// open (logcache.go). Past it, a consumer's write may open its log
	// again: a few microseconds, against the fsync that follows it.
	DefaultMaxOpenLogs = 64
)

// Options configure a Store. The zero value means the defaults; Open never
// changes the caller's copy.
type Options struct {
	// FS is the filesystem; nil means vfs.Default.
	FS vfs.FS
	// Sync is the stream's sync policy.
	Sync SyncPolicy
	// CompactBytes sets the log compaction threshold (see
	// DefaultCompactBytes). Zero means the default. A negative value
	// disables the log: every flush writes a full snapshot (write temp,
	// fsync, rename, fsync directory).
	CompactBytes int64
	// FlushParallelism is how many consumers a batch flush handles at
	// once. Zero means DefaultFlushParallelism.
	FlushParallelism int
	// MaxOpenLogs caps the consumer log files the store keeps open, the
	// ones used last (logcache.go). Zero means DefaultMaxOpenLogs.
	MaxOpenLogs int
	// Key, when set, is the data key the store seals everything it writes
	// with (the stream's: doc.go, "Encryption"), and every file it reads
	// must be sealed with it. nil: plain files, the format unchanged.
	Key *crypt.DataKey

	// catalogBytes overrides the size of a new catalogue (tests force
	// compactions with a small one). Zero: catalogBytes.
	catalogBytes int64
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.Sync.Mode > ModeNever:
		return fmt.Errorf("consumerstate: options: unknown sync mode %d", o.Sync.Mode)
	case o.Sync.Interval < 0:
		return errors.New("consumerstate: options: negative sync interval")
	case o.FlushParallelism < 0:
		return errors.New("consumerstate: options: negative flush parallelism")
	case o.MaxOpenLogs < 0:
		return errors.New("consumerstate: options: negative open log cap")
	}
	return nil
}

// withDefaults returns o with zero fields replaced by defaults.
func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.CompactBytes == 0 {
		o.CompactBytes = DefaultCompactBytes
	}
	if o.MaxOpenLogs == 0 {
		o.MaxOpenLogs = DefaultMaxOpenLogs
	}
	if o.FlushParallelism == 0 {
		o.FlushParallelism = DefaultFlushParallelism
	}
	o.Sync.Interval = flushInterval(o.Sync)
	return o
}
