package wal

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// gateFS holds the trim of one segment file (the first step of finishing a
// seal) until the gate opens.
type gateFS struct {
	vfs.FS
	name string
	gate chan struct{}
	hit  chan struct{} // closed when the held trim starts
	once sync.Once
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, g.name) {
		return f, err
	}
	return &gateFile{File: f, g: g}, nil
}

type gateFile struct {
	vfs.File
	g *gateFS
}

func (f *gateFile) Truncate(size int64) error {
	f.g.once.Do(func() { close(f.g.hit) })
	<-f.g.gate
	return f.File.Truncate(size)
}

// A roll under SyncAlways seals the full segment outside the store lock:
// while the seal's trim and fsync are held, appends into the new segment
// and reads go on, and no append is acknowledged until the sealed segment
// is durable. (Before, the appending goroutine trimmed and fsynced the old
// segment under the lock, and every append and read waited for it.)
func TestRollSealsOutsideTheLock(t *testing.T) {
	g := &gateFS{FS: vfs.NewMemFS(), name: segment.FileName(1, false), gate: make(chan struct{}), hit: make(chan struct{})}
	s, err := Open("/s", Options{FS: g, Sync: SyncAlways, SegmentSize: 16 << 10, FirstSegmentSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var opened sync.Once
	t.Cleanup(func() { opened.Do(func() { close(g.gate) }) }) // runs before Close

	payload := bytes.Repeat([]byte("x"), 1024)
	if _, _, err := s.Append("a", nil, payload); err != nil {
		t.Fatal(err)
	}
	const n = 40 // about three segments of 16 KiB
	acks := make(chan error, n)
	appended := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if err := s.AppendAsync("a", nil, payload, func(_ uint64, _ int64, err error) { acks <- err }); err != nil {
				appended <- err
				return
			}
		}
		appended <- nil
	}()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("appends blocked while the first segment's seal was held: the seal runs under the store lock")
	}
	select {
	case <-g.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("the first segment was never sealed")
	}
	var m store.Msg
	if err := s.Load(1, &m); err != nil || !bytes.Equal(m.Data, payload) {
		t.Fatalf("read while the seal is held: %v", err)
	}
	// The messages in the later segments are not acknowledged before the
	// first segment is durable: the commit that covers them finishes the
	// seal first.
	if got := len(acks); got == n {
		t.Fatalf("all %d appends acknowledged while the first segment's seal was held", n)
	}
	opened.Do(func() { close(g.gate) })
	for i := 0; i < n; i++ {
		select {
		case err := <-acks:
			if err != nil {
				t.Fatalf("ack %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d acknowledged after the seal finished", i, n)
		}
	}
	if st := s.State(); st.Msgs != n+1 || st.LastSeq != n+1 {
		t.Fatalf("state %+v, want %d messages", st, n+1)
	}
	fi, err := g.Stat("/s/" + segment.FileName(1, false))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size >= 16<<10 {
		t.Fatalf("sealed segment not trimmed: %d bytes", fi.Size)
	}
}
