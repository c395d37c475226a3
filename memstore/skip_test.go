package memstore

import (
	"errors"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// TestSkipTo: a skip over held messages leaves the skipped sequences
// deleted and the next append at the target; a skip of an empty store
// moves its first sequence; a skip backwards changes nothing; a gap too
// long after held messages is refused and changes nothing.
func TestSkipTo(t *testing.T) {
	s, err := New(store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		if _, _, err := s.Append("a", nil, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SkipTo(10); err != nil {
		t.Fatal(err)
	}
	if err := s.SkipTo(5); err != nil { // backwards: nothing
		t.Fatal(err)
	}
	if st := s.State(); st.FirstSeq != 1 || st.LastSeq != 9 || st.Msgs != 3 {
		t.Fatalf("after the skip: %+v", st)
	}
	seq, _, err := s.Append("b", nil, []byte("y"))
	if err != nil || seq != 10 {
		t.Fatalf("append after the skip: seq %d %v", seq, err)
	}
	st := s.State()
	if st.FirstSeq != 1 || st.LastSeq != 10 || st.Msgs != 4 || st.NumDeleted != 6 {
		t.Fatalf("state %+v", st)
	}
	var m store.Msg
	if err := s.LoadNext("", 4, &m); err != nil || m.Seq != 10 || m.Subject != "b" {
		t.Fatalf("next from 4: %d %q %v", m.Seq, m.Subject, err)
	}
	if err := s.Load(5, &m); err == nil {
		t.Fatalf("a skipped sequence loads: %v", err)
	}
	if err := s.SkipTo(10 + maxSkipHeld + 2); !errors.Is(err, store.ErrInvalidSequence) {
		t.Fatalf("a gap past the bound: %v", err)
	}
	if st := s.State(); st.LastSeq != 10 {
		t.Fatalf("a refused skip moved LastSeq to %d", st.LastSeq)
	}

	// Empty: the first sequence moves, at no cost.
	if _, err := s.Purge("", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.SkipTo(1 << 40); err != nil {
		t.Fatal(err)
	}
	seq, _, err = s.Append("c", nil, nil)
	if st := s.State(); err != nil || seq != 1<<40 || st.FirstSeq != 1<<40 || st.Msgs != 1 {
		t.Fatalf("append after skipping an empty store: seq %d %v state %+v", seq, err, st)
	}
	if err := s.SkipTo(0); !errors.Is(err, store.ErrInvalidSequence) {
		t.Fatalf("skip to 0: %v", err)
	}
}
