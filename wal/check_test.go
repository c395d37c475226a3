package wal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReadsWithoutRepairing: Check reports a clean store as clean and
// a damaged record with its file, offset and sequence, and changes no byte
// (a later Open still finds the damage to report).
func TestCheckReadsWithoutRepairing(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Sync: SyncNever, FirstSegmentSize: 4096, SegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, _, err := s.Append("c.x", nil, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(nil, dir)
	if err != nil || rep.Damaged() {
		t.Fatalf("clean store: %+v, %v", rep, err)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	b, _ := os.ReadFile(segs[0])
	b[200] ^= 0x10
	os.WriteFile(segs[0], b, 0o640)
	rep, err = Check(nil, dir)
	if err != nil || !rep.Damaged() {
		t.Fatalf("damaged store reported clean: %+v, %v", rep, err)
	}
	var text string
	for _, f := range rep.Findings {
		if f.Kind == Damage {
			text = f.Text
		}
	}
	if !strings.Contains(text, segs[0]) || !strings.Contains(text, "offset") || !strings.Contains(text, "sequences") {
		t.Fatalf("damage finding %q does not name file, offset and sequences", text)
	}
	after, _ := os.ReadFile(segs[0])
	if string(after) != string(b) {
		t.Fatal("Check changed the segment")
	}
}
