package wal

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

func memStore(t *testing.T, o Options) (*Store, *vfs.ErrorFS) {
	t.Helper()
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	o.FS = efs
	s, err := Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, efs
}

// A failed fsync is sticky: the append that waited for it fails, later
// appends are refused, reads keep working, and a reopen recovers.
func TestFailedSyncIsSticky(t *testing.T) {
	s, efs := memStore(t, Options{Sync: SyncAlways})
	if _, _, err := s.Append("a", nil, []byte("one")); err != nil {
		t.Fatal(err)
	}
	efs.Inject(vfs.Fault{Op: vfs.OpSync, Path: ".seg", Err: syscall.EIO, Times: 1})
	_, _, err := s.Append("a", nil, []byte("two"))
	if !errors.Is(err, store.ErrWriteFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append after failed fsync: %v", err)
	}
	if _, _, err := s.Append("a", nil, []byte("three")); !errors.Is(err, store.ErrWriteFailed) {
		t.Fatalf("error not sticky: %v", err)
	}
	var m store.Msg
	if err := s.Load(1, &m); err != nil || string(m.Data) != "one" {
		t.Fatalf("read after failure: %v %q", err, m.Data)
	}
	if st := s.State(); st.LastSeq != 1 || st.Msgs != 1 {
		t.Fatalf("failed append is visible: %+v", st)
	}
}

// A full disk gives an error wrapping ENOSPC, stored data stays readable,
// and after reopening with space available appends work again.
func TestDiskFull(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	o := Options{FS: efs, Sync: SyncAlways, SegmentSize: 8 << 10}
	s, err := Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, _, err := s.Append("a", nil, make([]byte, 200)); err != nil {
			t.Fatal(err)
		}
	}
	efs.Inject(vfs.Fault{Op: vfs.OpAllocate, Err: syscall.ENOSPC})
	efs.Inject(vfs.Fault{Op: vfs.OpWrite, Path: ".seg", Err: syscall.ENOSPC})
	var failed error
	for i := 0; i < 100 && failed == nil; i++ {
		_, _, failed = s.Append("a", nil, make([]byte, 200))
	}
	if !errors.Is(failed, syscall.ENOSPC) {
		t.Fatalf("want ENOSPC, got %v", failed)
	}
	st := s.State()
	var m store.Msg
	for q := st.FirstSeq; q <= st.LastSeq; q++ {
		if err := s.Load(q, &m); err != nil {
			t.Fatalf("load %d after ENOSPC: %v", q, err)
		}
	}
	s.Close()
	efs.Clear()
	s, err = Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.State(); got.Msgs < 100 || got.LastSeq < st.LastSeq {
		t.Fatalf("stored data damaged by disk full: %+v, before %+v", got, st)
	}
	if seq, _, err := s.Append("a", nil, []byte("again")); err != nil || seq <= st.LastSeq {
		t.Fatalf("append after space returned: %d %v", seq, err)
	}
}

// A short write leaves a torn record; the store refuses further appends and
// recovery truncates the torn tail without losing acknowledged data.
func TestShortWrite(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	o := Options{FS: efs, Sync: SyncAlways}
	s, err := Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		s.Append("a", nil, []byte("ok"))
	}
	efs.Inject(vfs.Fault{Op: vfs.OpWrite, Path: ".seg", Err: syscall.EIO, Short: true, Times: 1})
	if _, _, err := s.Append("a", nil, make([]byte, 1000)); err == nil {
		t.Fatal("short write not reported")
	}
	s.Close()
	s, err = Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.State(); st.Msgs != 10 {
		t.Fatalf("after torn write: %+v", st)
	}
	if s.Recovery().TornTail == nil {
		t.Fatalf("torn tail not reported: %+v", s.Recovery())
	}
}

// corruption cases: damage a sealed (older) segment or the newest one and
// check what recovery serves and reports.
func TestCorruptionTable(t *testing.T) {
	cases := []struct {
		name    string
		newest  bool
		corrupt func(b []byte) []byte
		lost    bool // messages reported lost (corruption), else a torn tail
	}{
		{"old-bitflip", false, func(b []byte) []byte { b[len(b)/2] ^= 0x04; return b }, true},
		{"old-zero-sector", false, func(b []byte) []byte {
			for i := len(b) / 3; i < len(b)/3+512; i++ {
				b[i] = 0
			}
			return b
		}, true},
		{"old-truncated", false, func(b []byte) []byte { return b[:len(b)-100] }, true},
		{"newest-torn", true, func(b []byte) []byte { return b }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Sync: SyncNever, SegmentSize: 16 << 10}
			s, err := Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 300; i++ {
				s.Append("a.b", nil, make([]byte, 100))
			}
			s.Close()
			os.Remove(filepath.Join(dir, checkpointFile))
			names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
			target := names[0]
			if tc.newest {
				target = names[len(names)-1]
				// A torn append: garbage after the last record.
				f, _ := os.OpenFile(target, os.O_RDWR, 0)
				st, _ := f.Stat()
				_ = st
				s2, _ := Open(dir, o)
				end := s2.active.seg.End()
				s2.Close()
				os.Remove(filepath.Join(dir, checkpointFile))
				f.WriteAt([]byte{200, 0, 0, 0, 1, 2, 3}, end)
				f.Close()
			} else {
				b, _ := os.ReadFile(target)
				os.WriteFile(target, tc.corrupt(b), 0o640)
			}
			s, err = Open(dir, o)
			if err != nil {
				t.Fatalf("open after damage: %v", err)
			}
			defer s.Close()
			rep := s.Recovery()
			st := s.State()
			if tc.lost {
				if len(rep.Corrupt) == 0 || st.Lost == nil || len(st.Lost.Msgs) == 0 {
					t.Fatalf("damage not reported: %+v lost %+v", rep, st.Lost)
				}
				if !errors.Is(rep.Corrupt[0], store.ErrCorrupt) || rep.Corrupt[0].File != target {
					t.Fatalf("report %v", rep.Corrupt[0])
				}
				if st.Msgs+uint64(len(st.Lost.Msgs)) != 300 {
					t.Fatalf("msgs %d + lost %d != 300", st.Msgs, len(st.Lost.Msgs))
				}
			} else {
				if rep.TornTail == nil || len(rep.Corrupt) != 0 || st.Msgs != 300 {
					t.Fatalf("torn tail: %+v msgs %d", rep, st.Msgs)
				}
			}
			// Every message served is intact; walking never errors.
			var m store.Msg
			n := uint64(0)
			for q := uint64(1); ; q = m.Seq + 1 {
				err := s.LoadNext("", q, &m)
				if errors.Is(err, store.ErrEOF) {
					break
				}
				if err != nil {
					t.Fatalf("LoadNext %d: %v", q, err)
				}
				if len(m.Data) != 100 || m.Subject != "a.b" {
					t.Fatalf("bad message %d", m.Seq)
				}
				n++
			}
			if n != st.Msgs {
				t.Fatalf("walked %d, state %d", n, st.Msgs)
			}
		})
	}
}

// Bit rot under a checkpoint: recovery does not rescan old segments, so the
// damage is found by the read (or Verify); the message is reported lost and
// readers move past it.
func TestBitRotAfterCheckpoint(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 10}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		s.Append("a.b", nil, make([]byte, 100))
	}
	s.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	b, _ := os.ReadFile(names[0])
	b[2000] ^= 0x01
	os.WriteFile(names[0], b, 0o640)
	for _, verify := range []bool{false, true} {
		s, err = Open(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Recovery().UsedCheckpoint {
			t.Fatal("checkpoint not used")
		}
		if verify {
			if d := s.Verify(); len(d) != 1 || d[0].File != names[0] {
				t.Fatalf("verify: %v", d)
			}
		}
		var m store.Msg
		n := 0
		for q := uint64(1); ; q = m.Seq + 1 {
			err := s.LoadNext("a.b", q, &m)
			if errors.Is(err, store.ErrEOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		st := s.State()
		if n != 299 || st.Msgs != 299 || st.Lost == nil || len(st.Lost.Msgs) != 1 {
			t.Fatalf("verify=%v: walked %d, state %+v", verify, n, st)
		}
		lost := st.Lost.Msgs[0]
		if err := s.Load(lost, &m); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("load of lost message %d: %v", lost, err)
		}
		s.Close() // the closing checkpoint keeps the loss on record
	}
}

// When the disk is too full for a new segment, appends fail with ENOSPC
// without making the store fail: reads keep working, a purge succeeds (its
// tombstone goes into the reserve of the active segment) and drops the
// sealed segments, and once space returns appends work again without a
// reopen. Nothing stored is lost across a restart.
func TestDiskFullRecoversAfterPurge(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			efs := vfs.NewErrorFS(vfs.NewMemFS())
			o := Options{FS: efs, Sync: mode, SegmentSize: 8 << 10}
			s, err := Open("/s", o)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				if _, _, err := s.Append("a", nil, make([]byte, 200)); err != nil {
					t.Fatal(err)
				}
			}
			efs.Inject(vfs.Fault{Op: vfs.OpAllocate, Err: syscall.ENOSPC})
			var failed error
			for i := 0; i < 100 && failed == nil; i++ {
				_, _, failed = s.Append("a", nil, make([]byte, 200))
			}
			if !errors.Is(failed, syscall.ENOSPC) || errors.Is(failed, store.ErrWriteFailed) {
				t.Fatalf("want a non-sticky ENOSPC, got %v", failed)
			}
			// Still full: the next append fails the same way, reads work.
			if _, _, err := s.Append("a", nil, make([]byte, 200)); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("second append on a full disk: %v", err)
			}
			st := s.State()
			var m store.Msg
			for q := st.FirstSeq; q <= st.LastSeq; q++ {
				if err := s.Load(q, &m); err != nil {
					t.Fatalf("load %d on a full disk: %v", q, err)
				}
			}
			n, err := s.Purge("", 0, 0)
			if err != nil || n != st.Msgs {
				t.Fatalf("purge on a full disk = %d, %v; want %d", n, err, st.Msgs)
			}
			efs.Clear() // the purge freed space
			seq, _, err := s.Append("a", nil, []byte("again"))
			if err != nil || seq != st.LastSeq+1 {
				t.Fatalf("append after space returned = %d, %v; want seq %d", seq, err, st.LastSeq+1)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open("/s", o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.State(); got.Msgs != 1 || got.LastSeq != seq {
				t.Fatalf("after reopen %+v, want one message at %d", got, seq)
			}
			if err := s.Load(seq, &m); err != nil || string(m.Data) != "again" {
				t.Fatalf("load %d after reopen: %v %q", seq, err, m.Data)
			}
		})
	}
}
