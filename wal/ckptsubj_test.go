package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestCheckpointSubjectSectionRefused: a checkpoint whose subject section
// is damaged behind a valid checksum (a subject renamed to a name no
// message can have, or to another subject's name) is refused with
// ErrCorrupt naming the subject, and the store rebuilds its index from the
// segments: every subject's summary and filtered walk are as before.
func TestCheckpointSubjectSectionRefused(t *testing.T) {
	for _, c := range []struct{ from, to string }{
		{"sub.3", "sub 3"}, // not a subject
		{"sub.3", "sub.4"}, // a duplicate
	} {
		mem := vfs.NewMemFS()
		o := Options{FS: mem, Sync: SyncNever, SegmentSize: 64 << 10}
		s, err := Open("/s", o)
		if err != nil {
			t.Fatal(err)
		}
		const n = 2000
		for i := 1; i <= n; i++ {
			if _, _, err := s.Append(fmt.Sprintf("sub.%d", i%5), nil, []byte(fmt.Sprintf("msg-%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		for q := uint64(3); q <= n; q += 11 {
			if err := s.Delete(q, false); err != nil {
				t.Fatal(err)
			}
		}
		want := s.SubjectsState(">")
		var wantSeqs []uint64
		var m store.Msg
		for q := uint64(0); s.LoadNext("sub.3", q, &m) == nil; q = m.Seq + 1 {
			wantSeqs = append(wantSeqs, m.Seq)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("/s", checkpointFile)
		f, err := mem.OpenRW(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := mem.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, fi.Size)
		if _, err := f.ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(b, []byte(c.from))
		if at < 0 || bytes.Count(b, []byte(c.from)) != 1 {
			t.Fatalf("%q is not once in the checkpoint", c.from)
		}
		copy(b[at:], c.to)
		end := len(b) - 8
		binary.LittleEndian.PutUint64(b[end:], xxhash.Sum64(b[:end]))
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()

		s, err = Open("/s", o)
		if err != nil {
			t.Fatalf("%s: open: %v", c.to, err)
		}
		rep := s.Recovery()
		if rep.UsedCheckpoint || !errors.Is(rep.CheckpointErr, store.ErrCorrupt) || !strings.Contains(rep.CheckpointErr.Error(), c.to) {
			t.Fatalf("%s: used checkpoint %v, err %v", c.to, rep.UsedCheckpoint, rep.CheckpointErr)
		}
		if got := s.SubjectsState(">"); !maps.Equal(got, want) {
			t.Fatalf("%s: subjects %v after the rebuild, want %v", c.to, got, want)
		}
		var got []uint64
		for q := uint64(0); s.LoadNext("sub.3", q, &m) == nil; q = m.Seq + 1 {
			if m.Subject != "sub.3" {
				t.Fatalf("%s: LoadNext(sub.3) gave %d of %s", c.to, m.Seq, m.Subject)
			}
			got = append(got, m.Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantSeqs) {
			t.Fatalf("%s: sub.3 holds %d messages after the rebuild, want %d", c.to, len(got), len(wantSeqs))
		}
		s.Close()
	}
}
