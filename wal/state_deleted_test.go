package wal

import (
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestStateWithDeletedHugeGap: a gap of 2^40 sequences (SkipTo, as a
// mirror or a restored snapshot makes) is counted in full but listed only
// up to store.MaxDeletedList, lowest first, and promptly: the list used to
// take one entry per skipped sequence, which for one stream info request
// with deleted details meant terabytes and hours. Both shapes: the gap
// between two messages, and a gap after the last message.
func TestStateWithDeletedHugeGap(t *testing.T) {
	const gap = uint64(1) << 40
	for _, trailing := range []bool{false, true} {
		s, err := Open("/s", Options{FS: vfs.NewMemFS()})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Append("a", nil, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := s.SkipTo(gap); err != nil {
			t.Fatal(err)
		}
		lastSeq, msgs := gap-1, uint64(1)
		if !trailing {
			if seq, _, err := s.Append("a", nil, []byte("y")); err != nil || seq != gap {
				t.Fatalf("append after skip: %d %v", seq, err)
			}
			lastSeq, msgs = gap, 2
		}
		done := make(chan store.State, 1)
		go func() { done <- s.StateWithDeleted() }()
		var st store.State
		select {
		case st = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("trailing %v: StateWithDeleted still listing after 30 s", trailing)
		}
		if st.FirstSeq != 1 || st.LastSeq != lastSeq || st.Msgs != msgs || uint64(st.NumDeleted) != lastSeq-msgs {
			t.Fatalf("trailing %v: state %+v (deleted listed %d)", trailing, st, len(st.Deleted))
		}
		if len(st.Deleted) != store.MaxDeletedList || st.Deleted[0] != 2 || st.Deleted[len(st.Deleted)-1] != store.MaxDeletedList+1 {
			t.Fatalf("trailing %v: %d deleted listed, from %d to %d; want the lowest %d from 2", trailing,
				len(st.Deleted), st.Deleted[0], st.Deleted[len(st.Deleted)-1], store.MaxDeletedList)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
