package wal

import (
	"fmt"
	"time"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/durable"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// SyncMode is when appended bytes are made durable: the one policy type of
// package durable (wal/doc.go says what each mode promises here).
type SyncMode = durable.Mode

// The modes, under the names wal has always used.
const (
	// SyncAlways acknowledges an append only once its bytes are on disk.
	// Concurrent appends share fsyncs (group commit). The default.
	SyncAlways = durable.Always
	// SyncInterval acknowledges an append once written to the OS and
	// fsyncs at most SyncInterval after a write.
	SyncInterval = durable.Interval
	// SyncNever acknowledges an append once written to the OS and leaves
	// fsync to it.
	SyncNever = durable.Never
)

// Defaults.
const (
	// DefaultSegmentSize is the largest (preallocated) segment size. 64 MiB keeps
	// a million 128-byte messages in three segments (few files, few blocks
	// in the index, rare rolls) while limits and purges that drop whole
	// segments still free space in steps small next to a default stream.
	// BenchmarkAppendSegmentSize measures 4/16/64/256 MiB: 4 MiB appends
	// were slower (a roll and a checkpoint every 25k messages), 16 and 64 MiB
	// alike, 256 MiB no faster and coarser for head drops.
	DefaultSegmentSize = 64 << 20
	// DefaultFirstSegmentSize is the size of a stream's first segment. Each
	// roll doubles the size of the next segment up to SegmentSize, so a
	// stream of one message reserves 8 KiB, not 64 MiB, while a large
	// stream reaches full-size segments after a dozen rolls.
	DefaultFirstSegmentSize = 8 << 10
	DefaultSyncInterval     = 200 * time.Millisecond
	// DefaultCheckpointEvery is how often a dirty index is checkpointed in
	// the background, bounding how much a crash recovery must scan.
	DefaultCheckpointEvery = 30 * time.Second
	// checkpointRolls is how many segment rolls may pass without a
	// checkpoint.
	checkpointRolls = 8
	// flushThreshold is the write-buffer size at which appends hand the
	// buffer to a background write (segment.StartFlush) even before a
	// commit is due.
	flushThreshold = 256 << 10
	// maxBuffered is the write-buffer size at which an append waits for
	// the segment's background write (segment.StartFlush) instead of
	// buffering on while it runs.
	maxBuffered = 4 * flushThreshold

	// tombReserve is the space a message append leaves free in its
	// segment for tombstones (32 of them), so removals never need a new
	// segment on a full disk (Store.tombReserve adds the sealing overhead
	// of an encrypted store).
	tombReserve = 32 * (segment.RecordHeader + 8 + segment.ChecksumSize)

	// gatherMax bounds how long a group commit waits for the writers the
	// previous one released (see Store.gather).
	gatherMax = 50 * time.Microsecond
)

// Options configures a Store. The zero value means the defaults; Open never
// modifies the caller's copy.
type Options struct {
	FS           vfs.FS // default vfs.Default
	Sync         SyncMode
	SyncInterval time.Duration // for SyncInterval; default 200ms
	Limits       store.Limits
	SegmentSize  int64 // largest segment; default DefaultSegmentSize
	// FirstSegmentSize is the size of the first segment; later ones double
	// up to SegmentSize. Default: DefaultFirstSegmentSize, or SegmentSize
	// when that is smaller.
	FirstSegmentSize int64
	Compress         bool          // S2-compress sealed segments
	CheckpointEvery  time.Duration // default DefaultCheckpointEvery; <0 disables
	// Now returns the time assigned to appends; default: the wall clock.
	Now func() time.Time
	// BootID returns an id that changes when the machine reboots (see
	// reserve.go); default: the kernel's boot id. Tests set it to simulate
	// a power loss.
	BootID func() string
	// NoReservation turns the sequence reservation off (reserve.go). Only
	// for a caller that owns the sequences itself: a raft replica, whose log
	// replays whatever a power loss took, must get the same sequences as
	// every other replica, never ones skipped after a reboot.
	NoReservation bool
	// Metrics, when set, counts appends, fsyncs and checkpoints (shared by
	// many stores; see Metrics). nil counts nothing.
	Metrics *Metrics
	// OuterLock says the caller holds a lock that keeps other processes
	// out of dir (the JetStream server holds one on its whole store). The
	// store then takes no LOCK file of its own, only an in-process claim
	// on dir (vfs.Claim), and so holds one file descriptor less: a server
	// of thousands of streams would otherwise hold thousands of locks.
	OuterLock bool
	// Encryption is the configured key (nats-server's `jetstream { key,
	// cipher, prev_key }`); the zero value stores in the clear, exactly as
	// without this field. See encrypt.go for what is encrypted, the key
	// file, rotation, and what happens to a store written without a key.
	Encryption crypt.Config
}

// Validate reports a configuration error.
func (o Options) Validate() error {
	if o.Sync < SyncAlways || o.Sync > SyncNever {
		return fmt.Errorf("wal: invalid sync mode %d", o.Sync)
	}
	if o.SegmentSize != 0 && o.SegmentSize < 4096 {
		return fmt.Errorf("wal: segment size %d below 4096", o.SegmentSize)
	}
	if o.SegmentSize > 1<<32-1 {
		return fmt.Errorf("wal: segment size %d above 4 GiB", o.SegmentSize)
	}
	if o.SyncInterval < 0 {
		return fmt.Errorf("wal: negative sync interval")
	}
	if o.FirstSegmentSize != 0 && (o.FirstSegmentSize < 4096 || o.FirstSegmentSize > 1<<32-1) {
		return fmt.Errorf("wal: first segment size %d outside [4096, 4 GiB)", o.FirstSegmentSize)
	}
	if err := o.Encryption.Validate(); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = DefaultSegmentSize
	}
	if o.FirstSegmentSize == 0 {
		o.FirstSegmentSize = DefaultFirstSegmentSize
	}
	o.FirstSegmentSize = min(o.FirstSegmentSize, o.SegmentSize)
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	return o
}

// SetCompress turns S2 compression (Options.Compress) on or off for the
// segments sealed from now on; segments already sealed keep their form,
// and both forms are read alike.
func (s *Store) SetCompress(on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.opts.Compress = on
	return nil
}
