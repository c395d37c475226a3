package wal

import (
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

// TestMetricsCount: two stores sharing a Metrics add up their appends,
// fsyncs (each timed into the histogram) and messages per fsync; Stats
// describes each store's files.
func TestMetricsCount(t *testing.T) {
	var m Metrics
	a, err := Open(t.TempDir(), Options{Sync: SyncAlways, SegmentSize: 1 << 16, Metrics: &m})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(t.TempDir(), Options{Sync: SyncInterval, SyncInterval: time.Hour, FirstSegmentSize: 1 << 16, Metrics: &m})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	payload := make([]byte, 1000)
	for range 100 { // one at a time: one fsync each under sync always
		if _, _, err := a.Append("a.x", nil, payload); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		if _, _, err := b.Append("b.x", nil, payload); err != nil {
			t.Fatal(err)
		}
	}
	snap := m.Snapshot()
	if snap.Appends != 110 {
		t.Errorf("appends %d, want 110", snap.Appends)
	}
	if want := 110 * store.FileRecordSize("a.x", nil, payload); snap.AppendBytes != want {
		t.Errorf("append bytes %d, want %d", snap.AppendBytes, want)
	}
	// Store a: 100 group commits, plus the seals of the segments it filled.
	if snap.Fsyncs < 100 || snap.Commits != 100 || snap.CommitMsgs != 100 {
		t.Errorf("sync always: %d fsyncs, %d commits of %d msgs; want >= 100, 100 of 100", snap.Fsyncs, snap.Commits, snap.CommitMsgs)
	}
	// Store b has not fsynced yet: its interval is an hour. Sync covers
	// its 10 messages in one fsync.
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	after := m.Snapshot()
	if after.Commits != snap.Commits+1 || after.CommitMsgs != snap.CommitMsgs+10 || after.Fsyncs != snap.Fsyncs+1 {
		t.Errorf("Sync of 10 interval messages: commits %d -> %d, msgs %d -> %d, fsyncs %d -> %d",
			snap.Commits, after.Commits, snap.CommitMsgs, after.CommitMsgs, snap.Fsyncs, after.Fsyncs)
	}
	last := after.FsyncBuckets[len(after.FsyncBuckets)-1]
	if last.UpperBound != 1 || last.Count > after.Fsyncs || after.FsyncSeconds <= 0 {
		t.Errorf("fsync histogram: last bucket %+v, %d fsyncs, %v s", last, after.Fsyncs, after.FsyncSeconds)
	}
	for i := 1; i < len(after.CommitBuckets); i++ {
		if after.CommitBuckets[i].Count < after.CommitBuckets[i-1].Count {
			t.Fatalf("commit buckets not cumulative: %+v", after.CommitBuckets)
		}
	}
	if c := after.CommitBuckets[0]; c.UpperBound != 1 || c.Count < 100 {
		t.Errorf("single-message commits %+v, want >= 100", c)
	}

	st := a.Stats()
	if st.Segments < 2 || st.SegmentBytes < 100*1000 || st.MappedBytes <= 0 || st.CorruptRecords != 0 {
		t.Errorf("stats %+v: 100 KB in 64 KiB segments", st)
	}
	if time.Since(st.LastCheckpoint) > time.Minute || st.Recovery <= 0 {
		t.Errorf("stats %+v: checkpoint or recovery time", st)
	}
	if a.Recovery().Took != st.Recovery {
		t.Errorf("recovery report %v, stats %v", a.Recovery().Took, st.Recovery)
	}
}

// TestMetricsNil: a store without Metrics counts nothing and works.
func TestMetricsNil(t *testing.T) {
	var m *Metrics
	if s := m.Snapshot(); s.Fsyncs != 0 || s.FsyncBuckets != nil {
		t.Fatalf("nil snapshot %+v", s)
	}
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Append("x", nil, []byte("y")); err != nil {
		t.Fatal(err)
	}
}
