package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestAckMeansWritten: under every sync policy, an append's done fires only
// once its bytes are in the file (the operating system's, so a process
// crash keeps them), and the store hands out no sequence that a reopen
// after that point would not know.
func TestAckMeansWritten(t *testing.T) {
	for _, mode := range []SyncMode{SyncAlways, SyncInterval, SyncNever} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: mode, SyncInterval: time.Hour, SegmentSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 50 {
				payload := bytes.Repeat([]byte{byte('a' + i%26)}, 40)
				payload = append(payload, []byte(time.Now().String())...)
				acked := make(chan uint64, 1)
				if err := s.AppendAsync("w.x", nil, payload, func(seq uint64, _ int64, err error) {
					if err != nil {
						t.Error(err)
					}
					acked <- seq
				}); err != nil {
					t.Fatal(err)
				}
				seq := <-acked
				if seq != uint64(i+1) {
					t.Fatalf("ack %d for append %d", seq, i+1)
				}
				if !fileHolds(t, dir, payload) {
					t.Fatalf("append %d acknowledged before its bytes reached the file", seq)
				}
			}
		})
	}
}

// fileHolds reports whether a segment file in dir contains b.
func fileHolds(t *testing.T, dir string, b []byte) bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, b) {
			return true
		}
	}
	return false
}
