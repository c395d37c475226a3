package raftstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/internal/diskgrep"
)

// TestEncryptedLog passes Options.Encryption through to the log: raft's
// entries are on disk sealed only, a wrong key refuses the store, and the
// right key reads them back.
func TestEncryptedLog(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Encryption: snapKey})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Encrypted() || s.PlainWithKey() {
		t.Fatalf("Encrypted %v, PlainWithKey %v", s.Encrypted(), s.PlainWithKey())
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 50; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("log-secret-value-%d", i))})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if hits := diskgrep.Find(t, dir, "log-secret-value"); len(hits) > 0 {
		t.Fatalf("plain text on disk: %v", hits)
	}
	if _, err := Open(dir, Options{Encryption: crypt.Config{Key: "wrong"}}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("no key: %v", err)
	}
	s, err = Open(dir, Options{Encryption: snapKey})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var l raft.Log
	if err := s.GetLog(50, &l); err != nil || string(l.Data) != "log-secret-value-50" {
		t.Fatalf("GetLog: %q, %v", l.Data, err)
	}
}
