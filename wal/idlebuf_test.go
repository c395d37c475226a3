package wal

import (
	"bytes"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestIdleStreamReleasesBuffers: a stream that took a burst keeps its write
// buffers while it appends; once a whole checkpoint tick passes without an
// append, the tick releases them, and appends after that work and read back.
func TestIdleStreamReleasesBuffers(t *testing.T) {
	s, err := Open("/s", Options{FS: vfs.NewMemFS(), Sync: SyncNever, CheckpointEvery: -1, FirstSegmentSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	data := bytes.Repeat([]byte("b"), 1000)
	// Past flushThreshold: the appender hands its buffer to a background
	// write, and a settled one is kept for the next swap.
	if err := appendMany(s, "burst", data, 2*flushThreshold/len(data)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	held := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.active.seg.BufferBytes()
	}
	if held() == 0 {
		t.Fatal("no write buffer held after the burst")
	}
	s.releaseIdleBuffers() // appends since the last tick: kept
	if held() == 0 {
		t.Fatal("the first tick after appends released the buffers")
	}
	if err := appendMany(s, "more", data, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.releaseIdleBuffers()
	if held() == 0 {
		t.Fatal("a tick after more appends released the buffers")
	}
	s.releaseIdleBuffers() // a whole tick without an append
	if n := held(); n != 0 {
		t.Fatalf("an idle stream holds %d bytes of write buffers, want 0", n)
	}
	seq, _, err := s.Append("after", nil, data)
	if err != nil {
		t.Fatal(err)
	}
	var m store.Msg
	if err := s.Load(seq, &m); err != nil || m.Subject != "after" || !bytes.Equal(m.Data, data) {
		t.Fatalf("load %d after the release: %q %d bytes, %v", seq, m.Subject, len(m.Data), err)
	}
	if err := s.Load(1, &m); err != nil || m.Subject != "burst" {
		t.Fatalf("load 1 after the release: %q, %v", m.Subject, err)
	}
}
