package wal

import (
	"sync/atomic"
	"time"
)

// Metrics counts what the stores sharing it do: appends, fsyncs and their
// latency, messages made durable per fsync, checkpoints. One Metrics is
// given to every store of a server (Options.Metrics) and read by its
// monitoring as a Snapshot; the package knows nothing of how it is
// exported. Counting is a few atomic adds per append and per fsync. The
// zero value is ready; a nil *Metrics counts nothing.
type Metrics struct {
	appends, appendBytes atomic.Uint64
	fsyncs, fsyncNanos   atomic.Uint64
	fsyncHist            [len(fsyncBounds)]atomic.Uint64 // per bucket, not cumulative
	commits, commitMsgs  atomic.Uint64
	commitHist           [len(batchBounds)]atomic.Uint64
	checkpoints          atomic.Uint64
}

// fsyncBounds are the upper bounds of the fsync latency buckets: from a
// fast NVMe flush (~50µs) to a stalled disk (1s and more land in +Inf).
var fsyncBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second,
}

// batchBounds are the upper bounds of the messages-per-fsync buckets.
var batchBounds = [...]uint64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096}

// Bucket is one bucket of a histogram: how many observations were at most
// UpperBound (cumulative, as Prometheus counts them).
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// MetricsSnapshot is a copy of Metrics' counters. Histograms list their
// finite buckets; the +Inf bucket is the total count.
type MetricsSnapshot struct {
	// Appends and AppendBytes are the messages appended and their stored
	// size (subject, headers and payload, as stream bytes count).
	Appends, AppendBytes uint64
	// Fsyncs is every fsync of segment data or of a checkpoint;
	// FsyncSeconds their total time, FsyncBuckets by latency in seconds.
	Fsyncs       uint64
	FsyncSeconds float64
	FsyncBuckets []Bucket
	// Commits are the fsyncs (or, without sync always, the writes of the
	// sync interval) that made appended messages durable, CommitMsgs the
	// messages they covered, CommitBuckets their number per commit: the
	// messages that share one fsync.
	Commits, CommitMsgs uint64
	CommitBuckets       []Bucket
	// Checkpoints are the index checkpoints written.
	Checkpoints uint64
}

// Snapshot copies the counters. Counters read one after another while
// stores run may be a few events apart; each one only grows.
func (m *Metrics) Snapshot() MetricsSnapshot {
	if m == nil {
		return MetricsSnapshot{}
	}
	s := MetricsSnapshot{
		Appends: m.appends.Load(), AppendBytes: m.appendBytes.Load(),
		Fsyncs: m.fsyncs.Load(), FsyncSeconds: float64(m.fsyncNanos.Load()) / 1e9,
		Commits: m.commits.Load(), CommitMsgs: m.commitMsgs.Load(),
		Checkpoints: m.checkpoints.Load(),
	}
	var cum uint64
	for i, b := range fsyncBounds {
		cum += m.fsyncHist[i].Load()
		s.FsyncBuckets = append(s.FsyncBuckets, Bucket{UpperBound: b.Seconds(), Count: cum})
	}
	cum = 0
	for i, b := range batchBounds {
		cum += m.commitHist[i].Load()
		s.CommitBuckets = append(s.CommitBuckets, Bucket{UpperBound: float64(b), Count: cum})
	}
	return s
}

func (m *Metrics) appended(size uint64) {
	if m == nil {
		return
	}
	m.appends.Add(1)
	m.appendBytes.Add(size)
}

// fsynced records one fsync that took d.
func (m *Metrics) fsynced(d time.Duration) {
	if m == nil {
		return
	}
	m.fsyncs.Add(1)
	m.fsyncNanos.Add(uint64(max(d, 0)))
	for i, b := range fsyncBounds {
		if d <= b {
			m.fsyncHist[i].Add(1)
			return
		}
	}
}

// committed records a commit that made n appended messages durable.
func (m *Metrics) committed(n uint64) {
	if m == nil || n == 0 {
		return
	}
	m.commits.Add(1)
	m.commitMsgs.Add(n)
	for i, b := range batchBounds {
		if n <= b {
			m.commitHist[i].Add(1)
			return
		}
	}
}

func (m *Metrics) checkpointed() {
	if m != nil {
		m.checkpoints.Add(1)
	}
}

// timeFsync runs one fsync and records its latency.
func (m *Metrics) timeFsync(sync func() error) error {
	if m == nil {
		return sync()
	}
	t := time.Now()
	err := sync()
	m.fsynced(time.Since(t))
	return err
}
