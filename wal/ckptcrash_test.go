package wal

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// TestCheckpointWriteCrash crashes a store at every write, sync, rename and
// directory sync of the Close that writes its checkpoint, which is streamed
// in pieces (index.EncodeTo): a kill -9 keeping everything written and a
// power cut keeping only what was synced. Every reopened store must hold
// exactly the messages acknowledged before Close (sync always), whether it
// loaded the new checkpoint, an older one, or scanned the segments.
func TestCheckpointWriteCrash(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/db", 0o755); err != nil {
		t.Fatal(err)
	}
	mem.SyncDir("/")
	type point struct {
		what        string
		kill, power *vfs.MemFS
	}
	var (
		mu      sync.Mutex
		points  []point
		capture bool
	)
	hook := &vfs.HookFS{Inner: mem, Hook: func(op, path string, mutating bool) {
		mu.Lock()
		defer mu.Unlock()
		if capture && mutating {
			points = append(points, point{what: op + " " + path, kill: mem.ProcessCrashClone(), power: mem.CrashClone()})
		}
	}}
	opts := Options{FS: hook, Sync: SyncAlways, SegmentSize: 256 << 10, CheckpointEvery: -1}
	s, err := Open("/db/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	// Enough messages for a checkpoint of several 64 KiB pieces; the
	// segments roll often, so older checkpoints exist too.
	const n = 40_000
	for i := 1; i <= n; i++ {
		if err := s.AppendAsync(fmt.Sprintf("s.%d", i%5), nil, []byte(fmt.Sprint(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for q := uint64(3); q <= n; q += 101 {
		if err := s.Delete(q, false); err != nil {
			t.Fatal(err)
		}
	}
	want := contents(t, s)
	mu.Lock()
	capture = true
	mu.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	capture = false
	mu.Unlock()
	pieces := 0
	for _, p := range points {
		if p.what == "write /db/s/"+checkpointFile+".tmp" {
			pieces++
		}
	}
	if pieces < 3 {
		t.Fatalf("the checkpoint was written in %d pieces, want >= 3 (points: %d)", pieces, len(points))
	}
	t.Logf("%d crash points, %d checkpoint pieces", len(points), pieces)
	check := func(what string, fs *vfs.MemFS) {
		o := opts
		o.FS = fs
		s, err := Open("/db/s", o)
		if err != nil {
			t.Fatalf("%s: reopen: %v", what, err)
		}
		defer s.Close()
		if got := contents(t, s); got != want {
			t.Fatalf("%s: store differs after the crash (checkpoint used %v, err %v): %d lines, want %d",
				what, s.Recovery().UsedCheckpoint, s.Recovery().CheckpointErr, strings.Count(got, "\n"), strings.Count(want, "\n"))
		}
	}
	for i, p := range points {
		check(fmt.Sprintf("point %d (%s), kill -9", i, p.what), p.kill)
		check(fmt.Sprintf("point %d (%s), power cut", i, p.what), p.power)
	}
	check("after Close", mem)
}
