package raftlog

import (
	"fmt"

	"github.com/jetwal/jetwal/crypt"
)

// Options configures a Store. The zero value means the defaults.
type Options struct {
	// MinSegmentSize is the space reserved for the first segment, and after
	// a suffix truncation. Default 1 MiB.
	MinSegmentSize int64
	// MaxSegmentSize caps the doubling of segment sizes: each new segment
	// reserves twice the size of the one it follows, up to this. Default
	// 64 MiB. A single entry larger than it gets a segment of its own size.
	MaxSegmentSize int64
	// Encryption seals every entry written (encrypt.go). The zero value
	// writes in the clear, in the unchanged format. A store is encrypted
	// or not from its creation: the key file in its directory decides,
	// not this field (a plain store opened with a key stays plain and
	// PlainWithKey says so; an encrypted one opened without the key is
	// refused).
	Encryption crypt.Config
	// OuterLock says the caller holds a lock that keeps other processes
	// out of a tree dir is in (the JetStream server's store lock): the
	// store then takes an in-process claim on dir (vfs.Claim) instead of
	// flocking LockFile, and holds no descriptor for it. A server with a
	// thousand replicated streams holds a thousand logs.
	OuterLock bool
}

const (
	defaultMinSegment = 1 << 20
	defaultMaxSegment = 64 << 20
	// maxSegmentLimit keeps record offsets within the uint32 index.
	maxSegmentLimit = 1 << 31
)

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.MinSegmentSize < 0 || o.MaxSegmentSize < 0 {
		return fmt.Errorf("raftlog: negative segment size")
	}
	if o.MaxSegmentSize > maxSegmentLimit || o.MinSegmentSize > maxSegmentLimit {
		return fmt.Errorf("raftlog: segment size above %d", maxSegmentLimit)
	}
	if o.MinSegmentSize != 0 && o.MaxSegmentSize != 0 && o.MinSegmentSize > o.MaxSegmentSize {
		return fmt.Errorf("raftlog: MinSegmentSize %d above MaxSegmentSize %d", o.MinSegmentSize, o.MaxSegmentSize)
	}
	if err := o.Encryption.Validate(); err != nil {
		return fmt.Errorf("raftlog: %w", err)
	}
	return nil
}

// withDefaults returns a copy with zero fields filled in.
func (o Options) withDefaults() Options {
	if o.MinSegmentSize == 0 {
		o.MinSegmentSize = defaultMinSegment
	}
	if o.MaxSegmentSize == 0 {
		o.MaxSegmentSize = max(defaultMaxSegment, o.MinSegmentSize)
	}
	o.MinSegmentSize = max(o.MinSegmentSize, 4096)
	o.MaxSegmentSize = max(o.MaxSegmentSize, o.MinSegmentSize)
	return o
}
