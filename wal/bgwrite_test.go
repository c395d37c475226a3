package wal

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestAppendsDuringSegmentWrite: while a write of the active segment's
// buffer is in flight (held here), appends go on into the buffer and reads
// of what was written before are served: the write runs without the store
// lock. The appends made meanwhile are acknowledged only once their bytes
// are written, and every one reads back after.
func TestAppendsDuringSegmentWrite(t *testing.T) {
	var armed atomic.Bool
	reached := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	fs := &vfs.HookFS{Inner: vfs.NewMemFS(), Hook: func(op, path string, _ bool) {
		if op == "write" && strings.HasSuffix(path, ".seg") && armed.CompareAndSwap(true, false) {
			reached <- struct{}{}
			<-release
		}
	}}
	// One segment for all: a roll would wait for the held write (the
	// segment it seals must be written whole).
	s, err := Open("/s", Options{FS: fs, Sync: SyncNever, NoReservation: true, FirstSegmentSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	data := bytes.Repeat([]byte("d"), 1000)
	if err := appendMany(s, "before", data, 10); err != nil {
		t.Fatal(err)
	}

	armed.Store(true)
	var acked atomic.Int32
	acks := make(chan error, 1000)
	ack := func(_ uint64, _ int64, err error) {
		acked.Add(1)
		acks <- err
	}
	if err := s.AppendAsync("during", nil, data, ack); err != nil {
		t.Fatal(err)
	}
	<-reached // the commit's write of it, held
	// 600 KB more: past flushThreshold (the appender hands the buffer to
	// a write of its own), below maxBuffered (it does not wait for the
	// held one).
	n := 600
	within(t, "appends waited for the segment write in flight", func() error {
		for range n {
			if err := s.AppendAsync("during", nil, data, ack); err != nil {
				return err
			}
		}
		return nil
	})
	within(t, "a read waited for the segment write in flight", func() error {
		var m store.Msg
		if err := s.Load(5, &m); err != nil {
			return err
		}
		if m.Subject != "before" || !bytes.Equal(m.Data, data) {
			t.Errorf("message 5 read back as %q", m.Subject)
		}
		return nil
	})
	if a := acked.Load(); a != 0 {
		t.Fatalf("%d appends acknowledged while the write holding them is held", a)
	}
	once.Do(func() { close(release) })
	for range n + 1 {
		if err := <-acks; err != nil {
			t.Fatal(err)
		}
	}
	var m store.Msg
	for seq := uint64(1); seq <= uint64(10+n+1); seq++ {
		if err := s.Load(seq, &m); err != nil || m.Seq != seq || !bytes.Equal(m.Data, data) {
			t.Fatalf("message %d: %v (seq %d)", seq, err, m.Seq)
		}
	}
}
