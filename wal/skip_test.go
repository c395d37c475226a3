package wal

import (
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// TestSkipKeepsSequencesAcrossReopen: after SkipTo the next append gets the
// skipped-to sequence, the hole counts as deleted, and a reopen (clean and
// after a crash) agrees.
func TestSkipKeepsSequencesAcrossReopen(t *testing.T) {
	for _, crash := range []bool{false, true} {
		fs := vfs.NewMemFS()
		open := func(fs vfs.FS) *Store {
			t.Helper()
			s, err := Open("/s", Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		s := open(fs)
		if err := s.SkipTo(5); err != nil { // empty store: starts at 5
			t.Fatal(err)
		}
		if st := s.State(); st.FirstSeq != 5 || st.LastSeq != 4 || st.Msgs != 0 {
			t.Fatalf("empty after skip: %+v", st)
		}
		for want := uint64(5); want <= 6; want++ {
			if seq, _, err := s.Append("a", nil, []byte("x")); err != nil || seq != want {
				t.Fatalf("append: %d %v, want %d", seq, err, want)
			}
		}
		if err := s.SkipTo(3); err != nil { // below last: nothing
			t.Fatal(err)
		}
		if err := s.SkipTo(10); err != nil {
			t.Fatal(err)
		}
		if seq, _, err := s.Append("b", nil, []byte("y")); err != nil || seq != 10 {
			t.Fatalf("append after skip: %d %v", seq, err)
		}
		check := func(s *Store) {
			t.Helper()
			st := s.StateWithDeleted()
			if st.FirstSeq != 5 || st.LastSeq != 10 || st.Msgs != 3 || st.NumDeleted != 3 {
				t.Fatalf("crash=%v state %+v", crash, st)
			}
		}
		check(s)
		if crash {
			// Everything was answered, so it was fsynced (SyncAlways):
			// a crash now keeps it all.
			clone := fs.CrashClone()
			s.Close()
			fs = clone
		} else if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(fs)
		check(s)
		if seq, _, err := s.Append("c", nil, nil); err != nil || seq != 11 {
			t.Fatalf("append after reopen: %d %v", seq, err)
		}
		if err := s.SkipTo(0); err == nil {
			t.Fatal("skip to 0 accepted")
		}
		s.Close()
	}
}
