package wal

import (
	"bytes"
	"path"
	"slices"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// appendUntilRoll appends 1 KiB messages until the active segment changes
// and returns the sequences acknowledged.
func appendUntilRoll(t *testing.T, s *Store, subj string) []uint64 {
	t.Helper()
	s.mu.Lock()
	before := s.active
	s.mu.Unlock()
	var seqs []uint64
	for {
		seq, _, err := s.Append(subj, nil, bytes.Repeat([]byte{byte(len(seqs))}, 1024))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
		s.mu.Lock()
		rolled := s.active != before
		s.mu.Unlock()
		if rolled {
			return seqs
		}
		if len(seqs) > 1000 {
			t.Fatal("no roll after 1000 appends")
		}
	}
}

func checkLoads(t *testing.T, s *Store, seqs []uint64) {
	t.Helper()
	for _, q := range seqs {
		var m store.Msg
		if err := s.Load(q, &m); err != nil {
			t.Fatalf("load %d: %v", q, err)
		}
		if m.Seq != q || len(m.Data) != 1024 {
			t.Fatalf("load %d: got seq %d, %d bytes", q, m.Seq, len(m.Data))
		}
	}
}

// A store that rolls makes its next segment ahead (a spare), and the roll
// takes it. Every message acknowledged in a segment made from a spare
// survives a power cut (CrashClone keeps only synced bytes and directory
// entries): the rename to the segment's name is synced with the segment,
// before anything in it is acknowledged. A spare the crash leaves behind is
// removed at recovery, and Close removes a spare it did not use.
func TestRollTakesSpare(t *testing.T) {
	fs := vfs.NewMemFS()
	opts := Options{FS: fs, Sync: SyncAlways, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10, CheckpointEvery: -1}
	s, err := Open("/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	acked := appendUntilRoll(t, s, "a") // the first roll creates its segment itself
	s.makeSpare()                       // (what the spare goroutine does after a roll)
	names, _ := fs.ReadDir("/s")
	if !slices.Contains(names, segment.SpareName) {
		t.Fatalf("no spare after a roll: %v", names)
	}
	// A power cut now: the spare is removed, nothing acknowledged is lost.
	func() {
		s2, err := Open("/s", Options{FS: fs.CrashClone(), Sync: SyncAlways, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		names, _ := s2.fs.ReadDir("/s")
		if slices.Contains(names, segment.SpareName) {
			t.Fatalf("recovery left the spare: %v", names)
		}
		checkLoads(t, s2, acked)
	}()

	s.mu.Lock()
	used := s.spare.used
	s.mu.Unlock()
	acked = append(acked, appendUntilRoll(t, s, "b")...) // this roll takes the spare
	s.mu.Lock()
	if s.spare.used != used+1 {
		t.Fatalf("the roll did not take the spare (used %d, was %d; created %d)", s.spare.used, used, s.spare.created)
	}
	base := s.active.seg.Base()
	s.mu.Unlock()
	// Acknowledged appends in the segment made from the spare.
	for i := 0; i < 3; i++ {
		seq, _, err := s.Append("c", nil, bytes.Repeat([]byte{'c'}, 1024))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, seq)
	}
	crashed := fs.CrashClone()
	names, _ = crashed.ReadDir("/s")
	if !slices.Contains(names, segment.FileName(base, false)) {
		t.Fatalf("after a power cut the segment %s made from the spare is gone: %v", segment.FileName(base, false), names)
	}
	s2, err := Open("/s", Options{FS: crashed, Sync: SyncAlways, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	checkLoads(t, s2, acked)
	if st := s2.State(); st.LastSeq < acked[len(acked)-1] {
		t.Fatalf("last sequence %d after recovery, acknowledged %d", st.LastSeq, acked[len(acked)-1])
	}
	s2.Close()

	s.makeSpare()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ = fs.ReadDir("/s")
	if slices.Contains(names, segment.SpareName) {
		t.Fatalf("Close left the spare: %v", names)
	}
}

// A roll whose spare cannot be used (its rename fails) creates the segment
// itself; the append succeeds and the store goes on.
func TestRollSpareFailureFallsBack(t *testing.T) {
	efs := vfs.NewErrorFS(vfs.NewMemFS())
	opts := Options{FS: efs, Sync: SyncAlways, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10, CheckpointEvery: -1}
	s, err := Open("/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acked := appendUntilRoll(t, s, "a")
	s.makeSpare()
	efs.Inject(vfs.Fault{Op: vfs.OpRename, Path: path.Join("/s", segment.SpareName), Times: 1})
	acked = append(acked, appendUntilRoll(t, s, "b")...)
	checkLoads(t, s, acked)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.werr != nil {
		t.Fatalf("the store failed: %v", s.werr)
	}
	if efs.Injected() != 1 || s.spare.created < 2 {
		t.Fatalf("the rename fault fired %d times, rolls that created their segment %d: the fallback was not taken", efs.Injected(), s.spare.created)
	}
}
