package wal

import (
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/store/storetest"
)

// pruneFill appends n messages over seven subjects and deletes every
// 997th, so that the subjects' lists have holes.
func pruneFill(t *testing.T, s *Store, n int) {
	t.Helper()
	data := make([]byte, 16)
	for i := 0; i < n; i++ {
		if err := s.AppendAsync(fmt.Sprintf("p.%d", i%7), nil, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for q := uint64(500); q <= uint64(n); q += 997 {
		if err := s.Delete(q, false); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLongRemovalsYield: a compaction or purge of more than pruneChunk
// messages releases the lock between chunks. At each release the store is
// whole (storetest.CheckConsistent: counters, subjects and loads agree)
// and appends go in; the removal ends as one taken at once would, and a
// restart keeps it.
//
// The compaction and the purge below a sequence keep more than pruneChunk
// messages: fewer survivors than removed messages are read and the index
// rebuilt from them instead (survivors.go, TestRemovalRebuildsFromSurvivors).
func TestLongRemovalsYield(t *testing.T) {
	const n = 5*pruneChunk + 700
	const cut = 3*pruneChunk + 500
	for _, c := range []struct {
		name   string
		remove func(s *Store) (uint64, error)
		check  func(t *testing.T, s *Store)
	}{
		{"compact", func(s *Store) (uint64, error) { return s.Compact(cut) }, func(t *testing.T, s *Store) {
			if st := s.State(); st.FirstSeq != cut {
				t.Fatalf("first sequence %d after compacting to %d", st.FirstSeq, cut)
			}
		}},
		{"purge-filter-keep", func(s *Store) (uint64, error) { return s.Purge("p.*", 0, 10) }, func(t *testing.T, s *Store) {
			if st := s.SubjectsState("p.*"); len(st) != 7 {
				t.Fatalf("subjects after a purge keeping 10: %v", st)
			}
			var kept uint64
			for _, st := range s.SubjectsState("p.*") {
				kept += st.Msgs
			}
			if kept != 10 {
				t.Fatalf("%d messages of p.* after a purge keeping 10", kept)
			}
		}},
		{"purge-below", func(s *Store) (uint64, error) { return s.Purge("", cut+50, 0) }, func(t *testing.T, s *Store) {
			if st := s.State(); st.FirstSeq != cut+50 {
				t.Fatalf("first sequence %d after purging below %d", st.FirstSeq, cut+50)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: SyncAlways})
			if err != nil {
				t.Fatal(err)
			}
			pruneFill(t, s, n)
			yields := 0
			var late []uint64
			s.testRebuilt = func(int) { t.Fatal("a removal keeping more than pruneChunk messages rebuilt the index") }
			s.testYield = func() {
				yields++
				storetest.CheckConsistent(t, s)
				seq, _, err := s.Append("late", nil, []byte("during"))
				if err != nil {
					t.Fatalf("append during a removal: %v", err)
				}
				late = append(late, seq)
			}
			removed, err := c.remove(s)
			if err != nil {
				t.Fatal(err)
			}
			s.testYield = nil
			if yields < 3 {
				t.Fatalf("removed %d messages with %d yields", removed, yields)
			}
			c.check(t, s)
			storetest.CheckConsistent(t, s)
			var m store.Msg
			for _, q := range late {
				if err := s.Load(q, &m); err != nil || string(m.Data) != "during" {
					t.Fatalf("the append made during the removal, %d: %v", q, err)
				}
			}
			before := s.StateWithDeleted()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, Options{Sync: SyncAlways})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if after := s.StateWithDeleted(); after.Msgs != before.Msgs || after.FirstSeq != before.FirstSeq || after.LastSeq != before.LastSeq || after.Bytes != before.Bytes {
				t.Fatalf("after a restart %+v, before %+v", after, before)
			}
			storetest.CheckConsistent(t, s)
		})
	}
}
