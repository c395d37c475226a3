package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestCheckpointLoadPaths reopens a store whose index is in a checkpoint:
// through the mapping, through a plain read when mapping fails, and with a
// damaged checkpoint, which must be refused and the segments scanned. Each
// time every message must come back with its own subject and payload.
func TestCheckpointLoadPaths(t *testing.T) {
	mem := vfs.NewMemFS()
	efs := vfs.NewErrorFS(mem)
	o := Options{FS: efs, Sync: SyncNever, SegmentSize: 64 << 10}
	s, err := Open("/s", o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := 1; i <= n; i++ {
		if _, _, err := s.Append(fmt.Sprintf("sub.%d", i%7), nil, []byte(fmt.Sprintf("msg-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for q := uint64(5); q <= n; q += 97 {
		if err := s.Delete(q, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(what string, wantCkpt bool) {
		t.Helper()
		s, err := Open("/s", o)
		if err != nil {
			t.Fatalf("%s: open: %v", what, err)
		}
		defer s.Close()
		rep := s.Recovery()
		if rep.UsedCheckpoint != wantCkpt {
			t.Fatalf("%s: used checkpoint %v (err %v), want %v", what, rep.UsedCheckpoint, rep.CheckpointErr, wantCkpt)
		}
		var m store.Msg
		for i := 1; i <= n; i++ {
			err := s.Load(uint64(i), &m)
			if i >= 5 && (i-5)%97 == 0 {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s: removed seq %d: %v", what, i, err)
				}
				continue
			}
			if err != nil || m.Subject != fmt.Sprintf("sub.%d", i%7) || string(m.Data) != fmt.Sprintf("msg-%d", i) {
				t.Fatalf("%s: seq %d: %v %q %q", what, i, err, m.Subject, m.Data)
			}
		}
	}
	check("mapped", true)
	efs.Inject(vfs.Fault{Op: vfs.OpMap, Path: checkpointFile, Err: syscall.ENOMEM, Times: 1})
	check("map failed", true)
	if efs.Injected() == 0 {
		t.Fatal("the checkpoint was not mapped")
	}
	efs.Clear()
	path := filepath.Join("/s", checkpointFile)
	f, err := mem.OpenRW(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xee}, 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	check("damaged", false)
}
