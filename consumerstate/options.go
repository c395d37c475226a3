package consumerstate

import (
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

// SyncMode says when consumer state reaches the disk.
type SyncMode uint8

const (
	// ModeInterval writes and fsyncs dirty consumers at most Interval after
	// they become dirty. It is the zero value.
	ModeInterval SyncMode = iota
	// ModeAlways is ModeInterval plus the promise the JetStream layer
	// keeps: an ack the client asked to have confirmed is confirmed only
	// after Consumer.Flush returned.
	ModeAlways
	// ModeNever writes dirty consumers Interval after they become dirty but
	// never fsyncs them, except for snapshots, Consumer.Flush, Store.Flush
	// and Store.Close. A process crash loses nothing written; a machine
	// crash can lose or refuse (ErrCorrupt) the newest log records.
	ModeNever
)

func (m SyncMode) String() string {
	switch m {
	case ModeInterval:
		return "interval"
	case ModeAlways:
		return "always"
	case ModeNever:
		return "never"
	}
	return fmt.Sprintf("SyncMode(%d)", uint8(m))
}

// SyncPolicy follows the stream's sync policy. The zero value is
// SyncInterval(DefaultSyncInterval).
type SyncPolicy struct {
	Mode SyncMode
	// Interval is the longest a dirty consumer waits for its background
	// flush. Zero means DefaultSyncInterval.
	Interval time.Duration
}

// DefaultSyncInterval is the background flush delay when a policy sets none.
const DefaultSyncInterval = time.Second

// SyncAlways is the policy for streams with sync "always": confirmed acks
// flush synchronously; other changes flush within DefaultSyncInterval.
func SyncAlways() SyncPolicy { return SyncPolicy{Mode: ModeAlways} }

// SyncInterval flushes dirty consumers (write and fsync) within d.
func SyncInterval(d time.Duration) SyncPolicy { return SyncPolicy{Mode: ModeInterval, Interval: d} }

// SyncNever writes dirty consumers within DefaultSyncInterval and leaves
// fsync to the operating system.
func SyncNever() SyncPolicy { return SyncPolicy{Mode: ModeNever} }

func (p SyncPolicy) String() string { return fmt.Sprintf("%s/%s", p.Mode, p.interval()) }

func (p SyncPolicy) interval() time.Duration {
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
	if o.FlushParallelism == 0 {
		o.FlushParallelism = DefaultFlushParallelism
	}
	o.Sync.Interval = o.Sync.interval()
	return o
}
