package verify

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetwal/jetwal/crypt"
	"github.com/jetwal/jetwal/raftlog"
	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/vfs"
)

// TestVerifyRaftStore: Dir recognises a raft log store by its meta file,
// passes a clean one and names the file and offset of a damaged record.
func TestVerifyRaftStore(t *testing.T) {
	dir := t.TempDir()
	s, err := raftlog.Open(nil, dir, raftlog.Options{MinSegmentSize: 4096, MaxSegmentSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 200; i += 20 {
		batch := make([]raftlog.Entry, 20)
		for j := range batch {
			batch[j] = raftlog.Entry{Index: i + uint64(j), Term: 1, Data: bytes.Repeat([]byte{byte(j)}, 100)}
		}
		if err := s.StoreEntries(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Dir(vfs.Default, dir, crypt.Config{}, &out); err != nil {
		t.Fatalf("clean store: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "raft log store") || !strings.Contains(out.String(), "indexes 1-200: 0 damaged") {
		t.Fatalf("clean store output:\n%s", out.String())
	}

	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[segment.HeaderSize+50] ^= 0xff
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Dir(vfs.Default, dir, crypt.Config{}, &out); !errors.Is(err, ErrDamaged) {
		t.Fatalf("damaged store: %v, want ErrDamaged\n%s", err, out.String())
	}
	want := "DAMAGED " + segs[0] + ": offset " + "32"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("damaged store output lacks %q:\n%s", want, out.String())
	}
}
