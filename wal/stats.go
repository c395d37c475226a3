package wal

import "time"

// Stats is a snapshot of one store's files, for monitoring.
type Stats struct {
	Segments     int   // segment files
	SegmentBytes int64 // bytes written to them (header and records; compressed size for compressed ones)
	MappedBytes  int64 // bytes of those files mapped into memory for reading
	// LastCheckpoint is when the index checkpoint was last written, or
	// when the store opened if it has written none since.
	LastCheckpoint time.Time
	// Dirty says the index changed since that checkpoint: a crash now
	// would scan the segments written since.
	Dirty bool
	// Recovery is how long opening the store took to recover it.
	Recovery time.Duration
	// CorruptRecords counts the damaged records found, by the recovery, by
	// reads and by Verify (see RecoveryReport.Corrupt).
	CorruptRecords int
}

// Stats returns a snapshot of the store's files.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{
		Segments:       len(s.segs),
		LastCheckpoint: s.lastCkpt,
		Dirty:          s.dirty,
		Recovery:       s.report.Took,
		CorruptRecords: len(s.report.Corrupt),
	}
	for _, e := range s.segs {
		st.SegmentBytes += e.seg.End()
		st.MappedBytes += e.seg.Mapped()
	}
	return st
}

// syncedTo records that an fsync of the active segment made every message
// up to seq durable: one commit of seq-synced messages for Metrics.
// Caller holds mu.
func (s *Store) syncedTo(seq uint64) {
	if seq > s.synced {
		s.opts.Metrics.committed(seq - s.synced)
		s.synced = seq
	}
}
