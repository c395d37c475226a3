package raftstore

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLogRoundTrip stores raft.Logs with every field set and reads them back
// before and after a reopen.
func TestLogRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "raft")
	s := open(t, dir)
	at := time.Date(2026, 12, 3, 8, 0, 0, 123456789, time.UTC)
	logs := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("conf"), AppendedAt: at},
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: []byte("cmd"), Extensions: []byte("ext"), AppendedAt: at.Add(time.Second)},
		{Index: 3, Term: 2, Type: raft.LogNoop},
		{Index: 4, Term: 2, Type: raft.LogBarrier, Extensions: []byte{0, 1, 2}},
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(&raft.Log{Index: 5, Term: 3, Type: raft.LogCommand, Data: []byte("five")}); err != nil {
		t.Fatal(err)
	}
	logs = append(logs, &raft.Log{Index: 5, Term: 3, Type: raft.LogCommand, Data: []byte("five")})
	for round := 0; round < 2; round++ {
		for _, want := range logs {
			var got raft.Log
			if err := s.GetLog(want.Index, &got); err != nil {
				t.Fatal(err)
			}
			if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type ||
				!bytes.Equal(got.Data, want.Data) || !bytes.Equal(got.Extensions, want.Extensions) ||
				!got.AppendedAt.Equal(want.AppendedAt) || got.AppendedAt.IsZero() != want.AppendedAt.IsZero() {
				t.Fatalf("round %d: GetLog(%d) = %+v, want %+v", round, want.Index, got, *want)
			}
		}
		if err := s.GetLog(6, new(raft.Log)); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(6): %v, want raft.ErrLogNotFound", err)
		}
		s.Close()
		s = open(t, dir)
	}
	// Raft's own calls: compaction, then a conflicting tail, then gap refusal.
	if err := s.DeleteRange(1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(5, 5); err != nil {
		t.Fatal(err)
	}
	if f, l := mustIdx(t, s); f != 3 || l != 4 {
		t.Fatalf("range [%d, %d], want [3, 4]", f, l)
	}
	if err := s.StoreLog(&raft.Log{Index: 7, Term: 4}); err == nil {
		t.Fatal("StoreLog with a gap: no error")
	}
	if !s.IsMonotonic() {
		t.Fatal("IsMonotonic false")
	}
	s.Close()
}

func mustIdx(t *testing.T, s *Store) (uint64, uint64) {
	t.Helper()
	f, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return f, l
}

// TestStable covers raft's StableStore contract: missing keys read as empty
// and 0 without an error, values survive a reopen.
func TestStable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "raft")
	s := open(t, dir)
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || len(v) != 0 {
		t.Fatalf("Get(missing) = %q, %v", v, err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 0 {
		t.Fatalf("GetUint64(missing) = %d, %v", v, err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir)
	defer s.Close()
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 42 {
		t.Fatalf("CurrentTerm = %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "n2" {
		t.Fatalf("LastVoteCand = %q, %v", v, err)
	}
}
