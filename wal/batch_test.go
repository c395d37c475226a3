package wal

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/jetwal/jetwal/store"
)

func batchOf(n int) []store.Msg {
	msgs := make([]store.Msg, n)
	for i := range msgs {
		msgs[i] = store.Msg{Subject: fmt.Sprintf("batch.%d", i%3), Data: []byte(fmt.Sprintf("payload %d", i))}
	}
	return msgs
}

func TestAppendBatch(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncNever} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: mode})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Append("before", nil, []byte("x")); err != nil {
				t.Fatal(err)
			}
			msgs := batchOf(100)
			n, err := s.AppendBatch(msgs)
			if err != nil || n != 100 {
				t.Fatalf("AppendBatch = %d, %v", n, err)
			}
			for i, m := range msgs {
				if m.Seq != uint64(i+2) || m.Time == 0 {
					t.Fatalf("msg %d: seq %d time %d", i, m.Seq, m.Time)
				}
			}
			if st := s.State(); st.Msgs != 101 || st.LastSeq != 101 {
				t.Fatalf("state %+v", st)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, Options{Sync: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, m := range msgs {
				var got store.Msg
				err := s.Load(m.Seq, &got)
				if err != nil || got.Subject != m.Subject || !bytes.Equal(got.Data, m.Data) {
					t.Fatalf("Load(%d) = %+v, %v; want %+v", m.Seq, got, err, m)
				}
			}
		})
	}
}

func TestAppendBatchStopsAtLimit(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Limits: store.Limits{MaxMsgs: 5, Discard: store.DiscardNew}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs := batchOf(8)
	n, err := s.AppendBatch(msgs)
	if n != 5 || !errors.Is(err, store.ErrMaxMsgs) {
		t.Fatalf("AppendBatch = %d, %v; want 5, ErrMaxMsgs", n, err)
	}
	if msgs[5].Seq != 0 || msgs[4].Seq != 5 {
		t.Fatalf("seqs %d %d", msgs[4].Seq, msgs[5].Seq)
	}
	if st := s.State(); st.Msgs != 5 {
		t.Fatalf("state %+v", st)
	}
	// Bad input anywhere refuses the whole batch before anything is stored.
	bad := batchOf(3)
	bad[2].Subject = "a..b"
	if n, err := s.AppendBatch(bad); n != 0 || !errors.Is(err, store.ErrInvalidSubject) {
		t.Fatalf("bad batch = %d, %v", n, err)
	}
}
