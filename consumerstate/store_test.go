package consumerstate

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jetwal/jetwal/vfs"
)

const testCfg = `{"durable_name":"c1","ack_policy":"explicit"}`

func openStore(t *testing.T, fsys vfs.FS, dir string, opts Options) *Store {
	t.Helper()
	opts.FS = fsys
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustUpdate(t *testing.T, c *Consumer, f func(*State)) {
	t.Helper()
	if err := c.Update(f); err != nil {
		t.Fatal(err)
	}
}

// deliverN delivers stream seqs from..to to c.
func deliverN(t *testing.T, c *Consumer, from, to StreamSeq) {
	t.Helper()
	mustUpdate(t, c, func(s *State) {
		for i := from; i <= to; i++ {
			if _, err := s.Deliver(i, 1, int64(i)*1e6); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func filesystems(t *testing.T) map[string]func() (vfs.FS, string) {
	return map[string]func() (vfs.FS, string){
		"os":  func() (vfs.FS, string) { return vfs.Default, filepath.Join(t.TempDir(), "obs") },
		"mem": func() (vfs.FS, string) { return vfs.NewMemFS(), "/stream/obs" },
	}
}

func TestStoreLifecycle(t *testing.T) {
	for name, mk := range filesystems(t) {
		t.Run(name, func(t *testing.T) {
			fsys, dir := mk()
			s := openStore(t, fsys, dir, Options{})
			c, err := s.Create("c1", []byte(testCfg))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create("c1", []byte(testCfg)); !errors.Is(err, ErrExists) {
				t.Fatalf("second create: %v, want ErrExists", err)
			}
			if _, err := s.Create("a.b", []byte(testCfg)); !errors.Is(err, ErrInvalidName) {
				t.Fatalf("create a.b: %v, want ErrInvalidName", err)
			}
			if _, err := s.Create("c2", []byte("{nope")); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("create with bad config: %v, want ErrInvalidConfig", err)
			}
			deliverN(t, c, 1, 10)
			mustUpdate(t, c, func(s *State) {
				s.Ack(1)
				s.Ack(3)
				s.Deliver(2, 2, 77)
				s.Nak(4, 99)
				s.Term(5)
			})
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			want := c.Snapshot()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Update(func(*State) {}); !errors.Is(err, ErrClosed) {
				t.Fatalf("update after close: %v, want ErrClosed", err)
			}
			if err := Check(dir, fsys); err != nil {
				t.Fatalf("check: %v", err)
			}

			s = openStore(t, fsys, dir, Options{})
			names, err := s.List()
			if err != nil || !slices.Equal(names, []string{"c1"}) {
				t.Fatalf("list = %v, %v", names, err)
			}
			c, err = s.Load("c1")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Snapshot(); !got.Equal(&want) {
				t.Fatalf("reloaded state %+v, want %+v", got, want)
			}
			if again, _ := s.Load("c1"); again != c {
				t.Fatal("second Load returned a different consumer")
			}
			if string(c.Config()) != testCfg {
				t.Fatalf("config %s", c.Config())
			}
			newCfg := []byte(`{"durable_name":"c1","ack_policy":"all"}`)
			if err := c.UpdateConfig(newCfg); err != nil {
				t.Fatal(err)
			}
			if err := c.UpdateConfig([]byte("{")); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("bad config update: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = openStore(t, fsys, dir, Options{})
			c, err = s.Load("c1")
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Config()) != string(newCfg) {
				t.Fatalf("config after update %s", c.Config())
			}
			if err := s.Delete("c1"); err != nil {
				t.Fatal(err)
			}
			if err := c.Update(func(*State) {}); !errors.Is(err, ErrClosed) {
				t.Fatalf("update after delete: %v, want ErrClosed", err)
			}
			if _, err := s.Load("c1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("load after delete: %v, want ErrNotFound", err)
			}
			if err := s.Delete("c1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("second delete: %v, want ErrNotFound", err)
			}
			if names, _ := s.List(); len(names) != 0 {
				t.Fatalf("list after delete: %v", names)
			}
			c, err = s.Create("c1", []byte(testCfg))
			if err != nil {
				t.Fatal(err)
			}
			if st := c.Snapshot(); st.Delivered != (SeqPair{}) || len(st.Pending) != 0 {
				t.Fatalf("recreated consumer has old state %+v", st)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create("c3", []byte(testCfg)); !errors.Is(err, ErrClosed) {
				t.Fatalf("create after close: %v", err)
			}
		})
	}
}

// dirSize is the total size of the files in dir.
func dirSize(t *testing.T, fsys vfs.FS, dir string) int64 {
	t.Helper()
	names, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range names {
		fi, err := fsys.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size
	}
	return n
}

// TestFilesDoNotGrowWithAcks runs many deliveries and acks with a window of
// 100 pending messages and checks the consumer's files stay small.
func TestFilesDoNotGrowWithAcks(t *testing.T) {
	for _, compact := range []int64{0, 4096, -1} {
		t.Run(fmt.Sprintf("compact=%d", compact), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			s := openStore(t, fsys, "/obs", Options{CompactBytes: compact})
			c, err := s.Create("c", []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			limit := max(compact, DefaultCompactBytes) + 8<<10
			var largest int64
			n := 50000
			if compact < 0 {
				n = 5000
			}
			for i := 1; i <= n; i++ {
				mustUpdate(t, c, func(s *State) {
					s.Deliver(StreamSeq(i), 1, int64(i))
					if i > 100 {
						s.Ack(StreamSeq(i - 100))
					}
				})
				if i%10 == 0 {
					if err := c.Flush(); err != nil {
						t.Fatal(err)
					}
					if i%1000 == 0 {
						largest = max(largest, dirSize(t, fsys, c.Dir()))
					}
				}
			}
			if largest > limit {
				t.Fatalf("consumer files reached %d bytes (limit %d)", largest, limit)
			}
			want := c.Snapshot()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, fsys.CrashClone(), "/obs", Options{})
			c, err = s.Load("c")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Snapshot(); !got.Equal(&want) {
				t.Fatalf("state after reopen differs")
			}
			if compact < 0 && c.Recovery().LogRecords != 0 {
				t.Fatalf("log in use with CompactBytes < 0: %+v", c.Recovery())
			}
			if compact >= 0 && c.Recovery().Generation < 2 {
				t.Fatalf("no compaction happened: %+v", c.Recovery())
			}
		})
	}
}

// TestIdleConsumersCostNoIO creates 1000 consumers, then flushes with none
// dirty and with 100 dirty.
func TestIdleConsumersCostNoIO(t *testing.T) {
	fsys, counts := newCountFS(vfs.NewMemFS())
	s := openStore(t, fsys, "/obs", Options{Sync: SyncInterval(time.Hour)})
	defer s.Close()
	cs := make([]*Consumer, 1000)
	for i := range cs {
		c, err := s.Create(fmt.Sprintf("c%d", i), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		deliverN(t, c, 1, 5)
		cs[i] = c
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	counts.reset()
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if all, _, _ := counts.counts(); all != 0 {
		t.Fatalf("flushing 1000 clean consumers did %d filesystem operations", all)
	}
	for i := 0; i < len(cs); i += 10 {
		mustUpdate(t, cs[i], func(s *State) { s.Ack(1) })
		mustUpdate(t, cs[i], func(s *State) { s.Ack(99) }) // no change: not pending
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	_, mut, ops := counts.counts()
	writes, syncs := 0, 0
	for _, o := range ops {
		switch {
		case strings.HasPrefix(o, "write "):
			writes++
		case strings.HasPrefix(o, "sync "):
			syncs++
		}
	}
	if writes != 100 || syncs != 100 || mut != 200 {
		t.Fatalf("flushing 100 dirty consumers: %d writes, %d syncs, %d mutating ops; want 100, 100, 200", writes, syncs, mut)
	}
}

// TestBackgroundFlush checks that a dirty consumer reaches the disk within
// the sync interval without any Flush call.
func TestBackgroundFlush(t *testing.T) {
	for _, pol := range []SyncPolicy{SyncInterval(5 * time.Millisecond), {Mode: ModeAlways, Interval: 5 * time.Millisecond}} {
		t.Run(pol.String(), func(t *testing.T) {
			mem := vfs.NewMemFS()
			s := openStore(t, mem, "/obs", Options{Sync: pol})
			defer s.Close()
			c, err := s.Create("c", []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			deliverN(t, c, 1, 3)
			mustUpdate(t, c, func(s *State) { s.Ack(1) })
			want := c.Snapshot()
			deadline := time.Now().Add(10 * time.Second)
			for {
				s2 := openStore(t, mem.CrashClone(), "/obs", Options{})
				c2, err := s2.Load("c")
				if err != nil {
					t.Fatal(err)
				}
				got := c2.Snapshot()
				s2.Close()
				if got.Equal(&want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("state not durable 10s after change; disk has %+v", got)
				}
				time.Sleep(time.Millisecond)
			}
			if err := s.BackgroundError(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConcurrentFlushesShareSync blocks the first flush's fsync while other
// callers make changes and queue up: they must all be covered by a single
// second fsync.
func TestConcurrentFlushesShareSync(t *testing.T) {
	var (
		mu      sync.Mutex
		syncs   int
		release = make(chan struct{})
		blocked = make(chan struct{})
	)
	fsys := &vfs.HookFS{Inner: vfs.NewMemFS()}
	armed := false
	fsys.Hook = func(op, path string, mut bool) {
		if op != "sync" || !strings.HasSuffix(path, ".log") {
			return
		}
		mu.Lock()
		syncs++
		first := armed && syncs == 1
		mu.Unlock()
		if first {
			close(blocked)
			<-release
		}
	}
	s := openStore(t, fsys, "/obs", Options{Sync: SyncAlways()})
	defer s.Close()
	c, err := s.Create("c", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	syncs, armed = 0, true
	mu.Unlock()
	deliverN(t, c, 1, 1)
	errc := make(chan error, 20)
	go func() { errc <- c.Flush() }()
	<-blocked
	const waiters = 10
	var updated sync.WaitGroup
	for i := 0; i < waiters; i++ {
		updated.Add(1)
		go func() {
			err := c.Update(func(s *State) { s.Deliver(s.Delivered.Stream+1, 1, 0) })
			updated.Done()
			if err != nil {
				errc <- err
				return
			}
			errc <- c.Flush()
		}()
	}
	updated.Wait()
	close(release)
	for i := 0; i < waiters+1; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if syncs != 2 {
		t.Fatalf("%d callers used %d log fsyncs, want 2", waiters+1, syncs)
	}
}

// TestStickyWriteErrors injects write and fsync failures: the failing flush
// and every later one report ErrWriteFailed, and a reopen recovers the last
// durable state.
func TestStickyWriteErrors(t *testing.T) {
	tests := []struct {
		name    string
		fault   vfs.Fault
		compact int64
	}{
		{"log fsync EIO", vfs.Fault{Op: vfs.OpSync, Path: ".log", Err: syscall.EIO, Times: 1}, 0},
		{"log short write ENOSPC", vfs.Fault{Op: vfs.OpWrite, Path: ".log", Err: syscall.ENOSPC, Short: true, Times: 1}, 0},
		{"snapshot fsync", vfs.Fault{Op: vfs.OpSync, Path: "state.dat.tmp", Times: 1}, -1},
		{"snapshot rename", vfs.Fault{Op: vfs.OpRename, Path: "state.dat", Times: 1}, -1},
		{"snapshot dir sync", vfs.Fault{Op: vfs.OpSyncDir, Path: "/obs/c", Times: 1}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMemFS()
			efs := vfs.NewErrorFS(mem)
			s := openStore(t, efs, "/obs", Options{Sync: SyncAlways(), CompactBytes: tc.compact})
			c, err := s.Create("c", []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			deliverN(t, c, 1, 5)
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			durable := c.Snapshot()
			efs.Inject(tc.fault)
			mustUpdate(t, c, func(s *State) { s.Ack(1) })
			err = c.Flush()
			if !errors.Is(err, ErrWriteFailed) || efs.Injected() == 0 {
				t.Fatalf("flush with fault: %v (injected %d), want ErrWriteFailed", err, efs.Injected())
			}
			if tc.fault.Err != nil && !errors.Is(err, tc.fault.Err) {
				t.Fatalf("flush error %v does not wrap %v", err, tc.fault.Err)
			}
			efs.Clear()
			mustUpdate(t, c, func(s *State) { s.Ack(2) })
			if err := c.Flush(); !errors.Is(err, ErrWriteFailed) {
				t.Fatalf("flush after failure: %v, want sticky ErrWriteFailed", err)
			}
			if err := s.Close(); !errors.Is(err, ErrWriteFailed) {
				t.Fatalf("close after failure: %v, want ErrWriteFailed", err)
			}
			s = openStore(t, mem.CrashClone(), "/obs", Options{})
			c, err = s.Load("c")
			if err != nil {
				t.Fatal(err)
			}
			got := c.Snapshot()
			if !got.Equal(&durable) {
				// The failed flush may have become durable anyway (a
				// failed rename's directory sync, say): accept the state
				// with message 1 acked too.
				var alt State = durable.Clone()
				alt.Ack(1)
				if !got.Equal(&alt) {
					t.Fatalf("after reopen: %+v, want %+v", got, durable)
				}
			}
			s.Close()
		})
	}
}

// TestSetStateAndReplace covers replacing a consumer's whole state: the
// next flush must write a snapshot holding it.
func TestSetStateAndReplace(t *testing.T) {
	mem := vfs.NewMemFS()
	s := openStore(t, mem, "/obs", Options{CompactBytes: 1 << 20})
	c, err := s.Create("c", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	deliverN(t, c, 1, 3)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	bad := State{Delivered: sp(1, 1), AckFloor: sp(2, 2)}
	if err := c.SetState(&bad); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("SetState of a broken state: %v", err)
	}
	restored := sampleState(20)
	if err := c.SetState(restored); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	// Replacing through Update, then more changes through methods.
	mustUpdate(t, c, func(st *State) {
		cp := st.Clone()
		cp.Ack(4)
		*st = cp
		st.Ack(6)
	})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	want := c.Snapshot()
	if _, ok := want.Pending[6]; ok {
		t.Fatal("ack after replacement lost in memory")
	}
	s2 := openStore(t, mem.CrashClone(), "/obs", Options{})
	defer s2.Close()
	c2, err := s2.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Snapshot(); !got.Equal(&want) {
		t.Fatalf("after reopen %+v, want %+v", got, want)
	}
	s.Close()
}

// TestNeverStoreFlushSyncsBackgroundWrites: under ModeNever a background
// flush writes without fsync; Store.Flush must then make it durable even
// though the consumer is no longer dirty.
func TestNeverStoreFlushSyncsBackgroundWrites(t *testing.T) {
	mem := vfs.NewMemFS()
	s := openStore(t, mem, "/obs", Options{Sync: SyncPolicy{Mode: ModeNever, Interval: time.Millisecond}, CompactBytes: 1 << 20})
	defer s.Close()
	c, err := s.Create("c", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	deliverN(t, c, 1, 4)
	want := c.Snapshot()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.fmu.Lock()
		written := c.fmu.written
		c.fmu.Unlock()
		c.mu.Lock()
		v := c.mu.jrnl.ops
		c.mu.Unlock()
		if written == v {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background flush did not write within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, mem.CrashClone(), "/obs", Options{})
	defer s2.Close()
	c2, err := s2.Load("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Snapshot(); !got.Equal(&want) {
		t.Fatalf("after Store.Flush and crash: %+v, want %+v", got, want)
	}
}
