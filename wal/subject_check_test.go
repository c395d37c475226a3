package wal

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// TestAppendRefusesInvalidSubjects: AppendAsync skips the subject check for
// the subject appended last; every other subject is still checked, and a
// refused one changes nothing, whatever was appended before it.
func TestAppendRefusesInvalidSubjects(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bad := []string{"", "a b", "a..b", ".a", "a.", "a\tb", "a\x00b", strings.Repeat("x", 1<<16)}
	for _, prev := range []string{"", "a.b", "a"} {
		if prev != "" {
			if _, _, err := s.Append(prev, nil, []byte("ok")); err != nil {
				t.Fatal(err)
			}
		}
		for _, subj := range bad {
			for range 2 { // twice: the second follows a refused attempt
				if _, _, err := s.Append(subj, nil, []byte("no")); !errors.Is(err, store.ErrInvalidSubject) {
					t.Fatalf("after %q: %q: %v, want ErrInvalidSubject", prev, subj, err)
				}
			}
		}
	}
	if st := s.State(); st.Msgs != 2 || st.LastSeq != 2 {
		t.Fatalf("state %+v: want the 2 valid messages only", st)
	}
}
