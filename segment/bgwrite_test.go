package segment

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jetwal/jetwal/vfs"
)

// writeGate holds the segment file's writes while armed: each held write
// waits for release.
type writeGate struct {
	armed   atomic.Bool
	writes  atomic.Int32 // background writes (the header's is not counted)
	blocked chan struct{}
	mu      sync.Mutex
	rel     chan struct{} // the held write's, until released
}

// gatedSegment creates a segment on a MemFS whose writes g can hold. On
// the test's end g releases a held write before the segment is closed.
func gatedSegment(t *testing.T) (*Segment, *writeGate) {
	t.Helper()
	g := &writeGate{blocked: make(chan struct{}, 1)}
	fs := &vfs.HookFS{Inner: memDir(t), Hook: func(op, path string, _ bool) {
		if op != "write" || !strings.HasSuffix(path, ".seg") {
			return
		}
		g.writes.Add(1)
		if g.armed.Load() {
			rel := make(chan struct{})
			g.mu.Lock()
			g.rel = rel
			g.mu.Unlock()
			g.blocked <- struct{}{}
			<-rel
		}
	}}
	s, err := Create(fs, "/d", 1, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	g.writes.Store(0)
	t.Cleanup(func() { s.Close() })
	t.Cleanup(func() {
		g.armed.Store(false)
		g.release()
	})
	return s, g
}

// release lets the held write, if any, go on.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rel != nil {
		close(g.rel)
		g.rel = nil
	}
}

// memDir is a MemFS holding the directory /d.
func memDir(t *testing.T) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	return mem
}

func appendN(t *testing.T, s *Segment, from, n int) []int64 {
	t.Helper()
	var offs []int64
	for i := from; i < from+n; i++ {
		off, err := s.Append(0, uint64(i), int64(i), fmt.Sprintf("bg.%d", i), nil, bytes.Repeat([]byte{byte(i)}, 50))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	return offs
}

func checkRecord(t *testing.T, r Record, err error, i int) {
	t.Helper()
	if err != nil {
		t.Fatalf("record %d: %v", i, err)
	}
	if r.Seq != uint64(i) || string(r.Subject) != fmt.Sprintf("bg.%d", i) || len(r.Data) != 50 || r.Data[0] != byte(i) {
		t.Fatalf("record %d read back as seq %d subject %q", i, r.Seq, r.Subject)
	}
}

// TestStartFlush: records handed to a background write stay readable from
// its buffer while it runs, count as flushed only once it is settled, and
// appends go on meanwhile into the write buffer, after them.
func TestStartFlush(t *testing.T) {
	s, g := gatedSegment(t)
	offs := appendN(t, s, 1, 3)
	end := s.End()
	g.armed.Store(true)
	if err := s.StartFlush(0); err != nil {
		t.Fatal(err)
	}
	<-g.blocked // the write is in flight, held
	if s.Flushed() != HeaderSize || s.Buffered() != 0 || s.End() != end {
		t.Fatalf("in flight: flushed %d buffered %d end %d; want %d, 0, %d", s.Flushed(), s.Buffered(), s.End(), HeaderSize, end)
	}
	for i, off := range offs {
		r, err := s.ReadBuffered(off)
		checkRecord(t, r, err, i+1)
	}
	offs = append(offs, appendN(t, s, 4, 2)...)
	if offs[3] != end {
		t.Fatalf("the append after the write in flight is at %d, want %d", offs[3], end)
	}
	for i, off := range offs {
		r, err := s.ReadBuffered(off)
		checkRecord(t, r, err, i+1)
	}
	// Below the limit, with a write in flight: no second write.
	if err := s.StartFlush(1 << 20); err != nil {
		t.Fatal(err)
	}
	if n := g.writes.Load(); n != 1 {
		t.Fatalf("%d writes started, want 1", n)
	}
	g.armed.Store(false)
	g.release()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if s.Flushed() != s.End() || s.Buffered() != 0 || s.InFlight() != nil {
		t.Fatalf("after Flush: flushed %d end %d buffered %d", s.Flushed(), s.End(), s.Buffered())
	}
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		checkRecord(t, r, err, i+1)
	}
}

// TestStartFlushAtLimit: with a write in flight, StartFlush at or above its
// limit waits for it and starts the next; the two land in order.
func TestStartFlushAtLimit(t *testing.T) {
	s, g := gatedSegment(t)
	offs := appendN(t, s, 1, 2)
	g.armed.Store(true)
	if err := s.StartFlush(0); err != nil {
		t.Fatal(err)
	}
	<-g.blocked
	offs = append(offs, appendN(t, s, 3, 2)...)
	started := make(chan error, 1)
	go func() { started <- s.StartFlush(1) }()
	select {
	case err := <-started:
		t.Fatalf("StartFlush at its limit returned (%v) with the write in flight held", err)
	default:
	}
	g.armed.Store(false)
	g.release()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if s.Flushed() != offs[2] {
		t.Fatalf("the first write settled to %d, want %d", s.Flushed(), offs[2])
	}
	<-s.InFlight()
	if err := s.WaitFlush(); err != nil {
		t.Fatal(err)
	}
	if s.Flushed() != s.End() {
		t.Fatalf("flushed %d, end %d", s.Flushed(), s.End())
	}
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		checkRecord(t, r, err, i+1)
	}
}

// TestStartFlushError: a background write that fails reports its error,
// naming the file and offset, to whoever settles it; the records do not
// count as flushed.
func TestStartFlushError(t *testing.T) {
	efs := vfs.NewErrorFS(memDir(t))
	s, err := Create(efs, "/d", 1, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	appendN(t, s, 1, 2)
	efs.Inject(vfs.Fault{Op: vfs.OpWrite, Path: ".seg", Err: syscall.EIO, Times: 1})
	if err := s.StartFlush(0); err != nil {
		t.Fatalf("StartFlush reported %v before its write ran", err)
	}
	err = s.Flush()
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", HeaderSize)) {
		t.Fatalf("Flush after a failed background write: %v", err)
	}
	if s.Flushed() != HeaderSize {
		t.Fatalf("flushed %d after the failed write", s.Flushed())
	}
}

// TestCloseWaitsForBackgroundWrite: Close does not close the file under a
// write in flight.
func TestCloseWaitsForBackgroundWrite(t *testing.T) {
	s, g := gatedSegment(t)
	appendN(t, s, 1, 2)
	if err := waitsForHeldWrite(t, s, g, "Close", s.Close); err != nil {
		t.Fatal(err)
	}
}

// TestEraseWaitsForBackgroundWrite: erasing a record whose bytes are in a
// write in flight waits for the write, then erases it in the file (the
// write's buffer is not changed under it).
func TestEraseWaitsForBackgroundWrite(t *testing.T) {
	s, g := gatedSegment(t)
	offs := appendN(t, s, 1, 2)
	if err := waitsForHeldWrite(t, s, g, "Erase", func() error { return s.Erase(offs[1]) }); err != nil {
		t.Fatal(err)
	}
	r, _, err := s.ReadAt(offs[1])
	if err != nil || r.Flags&FlagErased == 0 || r.Data[0] != 0 {
		t.Fatalf("after erase: %+v %v", r, err)
	}
	r, _, err = s.ReadAt(offs[0])
	checkRecord(t, r, err, 1)
}

// waitsForHeldWrite hands s's buffer to a background write and holds it,
// runs op on a goroutine, fails the test if op returns while the write is
// held (over a thousand yields), then releases the write and returns op's
// error.
func waitsForHeldWrite(t *testing.T, s *Segment, g *writeGate, what string, op func() error) error {
	t.Helper()
	g.armed.Store(true)
	if err := s.StartFlush(0); err != nil {
		t.Fatal(err)
	}
	<-g.blocked
	g.armed.Store(false)
	done := make(chan error, 1)
	go func() { done <- op() }()
	for range 1000 {
		select {
		case err := <-done:
			t.Fatalf("%s returned (%v) with a write in flight", what, err)
		default:
			runtime.Gosched()
		}
	}
	g.release()
	return <-done
}

// TestBeginFlush: the write BeginFlush returns is in flight until its
// caller runs it: the records stay unflushed, and whoever waits for the
// segment's write waits for the run.
func TestBeginFlush(t *testing.T) {
	s, _ := gatedSegment(t)
	if run, err := s.BeginFlush(); run != nil || err != nil {
		t.Fatalf("BeginFlush with nothing buffered: %v, %v", run != nil, err)
	}
	offs := appendN(t, s, 1, 3)
	run, err := s.BeginFlush()
	if err != nil || run == nil {
		t.Fatalf("BeginFlush: %v, %v", run != nil, err)
	}
	done := s.InFlight()
	for range 1000 {
		select {
		case <-done:
			t.Fatal("the write is done before it was run")
		default:
			runtime.Gosched()
		}
	}
	if s.Flushed() != HeaderSize {
		t.Fatalf("flushed %d before the write ran", s.Flushed())
	}
	go run()
	<-done
	if err := s.SettleWrite(done); err != nil {
		t.Fatal(err)
	}
	if s.Flushed() != s.End() || s.InFlight() != nil {
		t.Fatalf("after the run: flushed %d, end %d", s.Flushed(), s.End())
	}
	for i, off := range offs {
		r, _, err := s.ReadAt(off)
		checkRecord(t, r, err, i+1)
	}
}
