package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// TestLoadUniformRecordsAfterDeletes: records of one size (sealed into the
// index's stride form) large enough for the pread path, whose size comes
// from LookupSpan's next offset, with one odd-sized and one small record in
// the run, a gap (SkipTo), and deletes at segment (block) edges and inside
// runs, load with exactly their own payload, before and after a restart
// from the checkpoint, and after more deletes on the decoded index.
func TestLoadUniformRecordsAfterDeletes(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 1 << 20, FirstSegmentSize: 1 << 20}
	payload := func(q uint64) []byte {
		size := 9000
		switch q {
		case 300:
			size = 9100 // one record of another size mid-run
		case 500:
			size = 100 // and a small one
		}
		b := bytes.Repeat([]byte{byte(q)}, size)
		binary.LittleEndian.PutUint64(b, q)
		return b
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n, gapTo, m = 1200, 1300, 40
	for q := uint64(1); q <= n; q++ {
		if err := s.AppendAsync("u.x", nil, payload(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SkipTo(gapTo); err != nil {
		t.Fatal(err)
	}
	for q := uint64(gapTo); q < gapTo+m; q++ {
		if err := s.AppendAsync("u.x", nil, payload(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	live := map[uint64]bool{}
	for q := uint64(1); q <= n; q++ {
		live[q] = true
	}
	for q := uint64(gapTo); q < gapTo+m; q++ {
		live[q] = true
	}
	del := func(s *Store, qs ...uint64) {
		t.Helper()
		for _, q := range qs {
			if err := s.Delete(q, false); err != nil {
				t.Fatalf("delete %d: %v", q, err)
			}
			delete(live, q)
		}
	}
	// Each segment's first and last message, found from the index.
	var edges []uint64
	s.mu.Lock()
	prev, _ := s.idx.Seqs.First()
	prevLoc, _ := s.idx.Seqs.Lookup(prev)
	for q, ok := s.idx.Seqs.Next(prev + 1); ok; q, ok = s.idx.Seqs.Next(q + 1) {
		loc, _ := s.idx.Seqs.Lookup(q)
		if loc.Seg != prevLoc.Seg {
			edges = append(edges, prev, q)
		}
		prev, prevLoc = q, loc
	}
	s.mu.Unlock()
	if len(edges) < 10 {
		t.Fatalf("only %d segment edges: the run did not span segments", len(edges)/2)
	}
	del(s, 1, 299, 301, 499, n, gapTo)
	for i, q := range edges {
		if i%3 != 2 {
			del(s, q)
		}
	}
	for q := uint64(600); q < 700; q += 3 {
		del(s, q)
	}
	check := func(s *Store, what string) {
		t.Helper()
		var msg store.Msg
		for q := uint64(0); q <= gapTo+m; q++ {
			err := s.Load(q, &msg)
			if !live[q] {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s: load of removed %d: %v", what, q, err)
				}
				continue
			}
			if err != nil || msg.Seq != q || !bytes.Equal(msg.Data, payload(q)) {
				t.Fatalf("%s: load %d: %v (seq %d, %d bytes)", what, q, err, msg.Seq, len(msg.Data))
			}
		}
	}
	check(s, "live")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rep := s.Recovery(); !rep.UsedCheckpoint {
		t.Fatalf("reopen did not use the checkpoint: %v", rep.CheckpointErr)
	}
	check(s, "reopened")
	for i, q := range edges {
		if i%3 == 2 && live[q] {
			del(s, q)
		}
	}
	del(s, 2, n-1, gapTo+m-1)
	check(s, "reopened, more deletes")
}
