package consumerstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openFilesUnder counts this process's descriptors open on files below dir.
func openFilesUnder(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting open files: %v", err)
	}
	n := 0
	for _, e := range ents {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(p, dir+"/") {
			n++
		}
	}
	return n
}

// TestLogCacheCapsOpenLogs: with MaxOpenLogs 4, twenty consumers written
// to in turn (appends to their logs, and compactions that replace a log
// the cache had closed) never hold more than four logs open, at any time
// and after a restart; every consumer's state survives the restart; and
// each log a compaction replaced is gone from the directory.
func TestLogCacheCapsOpenLogs(t *testing.T) {
	const consumers, maxLogs = 20, 4
	dir := filepath.Join(t.TempDir(), "obs")
	opts := Options{MaxOpenLogs: maxLogs, CompactBytes: 4096}
	s := openStore(t, nil, dir, opts)
	cs := make([]*Consumer, consumers)
	for i := range cs {
		c, err := s.Create(fmt.Sprintf("c%d", i), []byte(testCfg))
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	peak := 0
	for round := 1; round <= 60; round++ {
		for i, c := range cs {
			mustUpdate(t, c, func(st *State) {
				for q := StreamSeq(round*10 - 9); q <= StreamSeq(round*10); q++ {
					if _, err := st.Deliver(q, 1, int64(q)); err != nil {
						t.Fatal(err)
					}
					if i%2 == 0 || q%5 != 0 {
						st.Ack(q)
					}
				}
			})
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			peak = max(peak, openFilesUnder(t, dir))
		}
	}
	if peak > maxLogs+1 { // +1: the catalogue
		t.Fatalf("%d files open under %s at the peak, want at most %d logs and the catalogue", peak, dir, maxLogs)
	}
	want := make([]State, consumers)
	for i, c := range cs {
		want[i] = c.Snapshot()
		c.fmu.Lock()
		gen := c.fmu.gen
		c.fmu.Unlock()
		if gen < 2 {
			t.Fatalf("consumer %d compacted %d times: the test does not replace logs the cache closed", i, gen-1)
		}
		logs, err := filepath.Glob(filepath.Join(c.Dir(), "state-*.log"))
		if err != nil || len(logs) != 1 {
			t.Fatalf("consumer %d has logs %v (%v), want one", i, logs, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openFilesUnder(t, dir); n != 0 {
		t.Fatalf("%d files still open after Close", n)
	}
	s = openStore(t, nil, dir, opts)
	defer s.Close()
	for i := range cs {
		c, err := s.Load(fmt.Sprintf("c%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Snapshot(); !got.Equal(&want[i]) {
			t.Fatalf("consumer %d after restart differs", i)
		}
	}
	if n := openFilesUnder(t, dir); n > maxLogs+1 {
		t.Fatalf("%d files open after loading %d consumers, want at most %d logs and the catalogue", n, consumers, maxLogs)
	}
}
