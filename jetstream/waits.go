package jetstream

import "time"

// waits are the fixed timeouts of the snapshot, restore and atomic-batch
// paths. Config carries them unexported: the zero value of each means the
// default below, and only this package's tests shorten them, per JetStream
// (no package variable that a test overwrites for every server at once).
type waits struct {
	// snapAck is how long a snapshot waits for the receiver's next
	// flow-control ack before it gives up ("408 No Flow Response").
	snapAck time.Duration
	// restoreIdle is how long a restore waits for the client's next chunk
	// before it gives up and removes what it built.
	restoreIdle time.Duration
	// batchIdle is how long an atomic batch may go without a message
	// before it is abandoned.
	batchIdle time.Duration
}

// The defaults of waits.
const (
	defaultSnapAckTimeout = 5 * time.Second
	defaultRestoreIdle    = 30 * time.Second
	defaultBatchIdle      = 10 * time.Second
)

func (w waits) withDefaults() waits {
	if w.snapAck <= 0 {
		w.snapAck = defaultSnapAckTimeout
	}
	if w.restoreIdle <= 0 {
		w.restoreIdle = defaultRestoreIdle
	}
	if w.batchIdle <= 0 {
		w.batchIdle = defaultBatchIdle
	}
	return w
}

// stagedBounds bound the bytes uncommitted atomic batches hold in memory:
// per stream and in the process (every JetStream of it). Config carries
// them unexported: zero means the default (batch.go), and only this
// package's tests lower them.
//
// It also carries the bounds of open fast batches (fastbatch.go), which
// hold no bytes: how many per stream and in the process.
type stagedBounds struct {
	perStream, total         int64
	fastPerStream, fastTotal int
}

func (b stagedBounds) withDefaults() stagedBounds {
	if b.perStream <= 0 {
		b.perStream = maxStagedBytesPerStream
	}
	if b.total <= 0 {
		b.total = maxStagedBytesTotal
	}
	if b.fastPerStream <= 0 {
		b.fastPerStream = maxFastBatchPerStream
	}
	if b.fastTotal <= 0 {
		b.fastTotal = maxFastBatchTotal
	}
	return b
}
