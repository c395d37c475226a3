package wal

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/jetwal/jetwal/index"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// oldRecordSize is how stores before trailer version 2 counted a message.
func oldRecordSize(subj string, hdr, data []byte) uint64 {
	return uint64(len(subj) + len(hdr) + len(data) + 16)
}

// downgradeCheckpoint rewrites the checkpoint in dir as version 1 wrote it:
// same layout, version byte 1, byte total counted the old way.
func downgradeCheckpoint(t *testing.T, dir string, oldBytes uint64) {
	t.Helper()
	path := filepath.Join(dir, checkpointFile)
	f, err := vfs.Default.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	size, err := f.Size()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	idx, tr, err := index.Decode(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if tr[0] != trailerVersion {
		t.Fatalf("checkpoint trailer version %d, want %d", tr[0], trailerVersion)
	}
	tr = append([]byte(nil), tr...)
	tr[0] = trailerVersionV1
	binary.LittleEndian.PutUint64(tr[1+8+8:], oldBytes) // version | last | msgs | bytes
	w, err := vfs.Default.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(index.Encode(idx, tr), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBytesFromVersion1Checkpoint: a store whose checkpoint counted bytes
// the old way (subject + header + payload + 16) reopens with the total
// nats-server's file store would report, from the checkpoint, and the next
// checkpoint stores that total.
func TestBytesFromVersion1Checkpoint(t *testing.T) {
	t.Run("OneSegment", func(t *testing.T) { testBytesFromVersion1(t, Options{}, 0) })
	// Many small segments, the sealed ones compressed: the recount reads
	// records from every kind of segment.
	t.Run("CompressedSegments", func(t *testing.T) {
		testBytesFromVersion1(t, Options{SegmentSize: 4096, FirstSegmentSize: 4096, Compress: true}, 400)
	})
}

func testBytesFromVersion1(t *testing.T, opts Options, fill int) {
	dir := t.TempDir()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte("NATS/1.0\r\nK: v\r\n\r\n")
	type part struct {
		subj      string
		hdr, data []byte
	}
	parts := []part{
		{"orders.1", nil, []byte("one")},
		{"orders.2", hdr, []byte("two")},
		{"orders.3", hdr, nil},
		{"o", nil, nil},
		{"orders.gone", hdr, []byte("deleted below")},
	}
	for _, p := range parts {
		if _, _, err := s.Append(p.subj, p.hdr, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(5, false); err != nil {
		t.Fatal(err)
	}
	var want, old uint64
	for _, p := range parts[:4] {
		want += store.FileRecordSize(p.subj, p.hdr, p.data)
		old += oldRecordSize(p.subj, p.hdr, p.data)
	}
	// 8+3+30, 8+3+30+18+4, 8+30+18+4, 1+30.
	if want != 41+63+60+31 {
		t.Fatalf("file record sizes sum to %d, want %d", want, 41+63+60+31)
	}
	for i := range fill {
		p := part{"fill.x", nil, []byte("some compressible payload, some compressible payload")}
		if i%3 == 0 {
			p.hdr = hdr
		}
		if _, _, err := s.Append(p.subj, p.hdr, p.data); err != nil {
			t.Fatal(err)
		}
		want += store.FileRecordSize(p.subj, p.hdr, p.data)
		old += oldRecordSize(p.subj, p.hdr, p.data)
	}
	if got := s.State().Bytes; got != want {
		t.Fatalf("state bytes %d, want %d", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	downgradeCheckpoint(t, dir, old)

	r, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.Recovery(); !rep.UsedCheckpoint || rep.CheckpointErr != nil {
		t.Fatalf("version 1 checkpoint not used: %+v", rep)
	}
	if fill > 0 {
		compressed := 0
		for _, e := range r.segs {
			if e.seg.Compressed() {
				compressed++
			}
		}
		if len(r.segs) < 3 || compressed == 0 {
			t.Fatalf("want several segments, some compressed: %d segments, %d compressed", len(r.segs), compressed)
		}
	}
	if got := r.State().Bytes; got != want {
		t.Fatalf("after reopening a version 1 checkpoint: state bytes %d, want %d (it held %d)", got, want, old)
	}
	// Appended after the recount, and removed: still counted the new way.
	if _, _, err := r.Append("orders.4", hdr, []byte("four")); err != nil {
		t.Fatal(err)
	}
	want += store.FileRecordSize("orders.4", hdr, []byte("four"))
	if err := r.Delete(1, false); err != nil {
		t.Fatal(err)
	}
	want -= store.FileRecordSize("orders.1", nil, []byte("one"))
	if got := r.State().Bytes; got != want {
		t.Fatalf("after append and delete: state bytes %d, want %d", got, want)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := ReadCheckpoint(nil, dir)
	if err != nil || sum == nil {
		t.Fatalf("ReadCheckpoint: %v, %v", sum, err)
	}

	again, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if rep := again.Recovery(); !rep.UsedCheckpoint || again.recount {
		t.Fatalf("second reopen: used checkpoint %v, recount %v", rep.UsedCheckpoint, again.recount)
	}
	if got := again.State().Bytes; got != want {
		t.Fatalf("second reopen: state bytes %d, want %d", got, want)
	}
}

// TestBytesWithoutCheckpoint: a full scan counts the same total.
func TestBytesWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte("NATS/1.0\r\nK: v\r\n\r\n")
	s.Append("a.b", hdr, []byte("xyz"))
	s.Append("a.c", nil, []byte("xyz"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := vfs.Default.Remove(filepath.Join(dir, checkpointFile)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := store.FileRecordSize("a.b", hdr, []byte("xyz")) + store.FileRecordSize("a.c", nil, []byte("xyz"))
	if r.Recovery().UsedCheckpoint {
		t.Fatal("checkpoint used after it was removed")
	}
	if got := r.State().Bytes; got != want || want != 3+3+30+18+4+3+3+30 {
		t.Fatalf("state bytes %d, want %d", got, want)
	}
}
