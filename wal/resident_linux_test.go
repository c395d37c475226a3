package wal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/internal/resident"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
)

// TestRestartLeavesSegmentsCold: after a clean close and a reopen, the
// store's segment files are not resident in the process: the checkpoint
// spares the scan of what it covers, and the zero-filled tail of the
// active segment is checked without touching its mapping. After a Verify
// (which reads every record) they are cold again.
func TestRestartLeavesSegmentsCold(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20, FirstSegmentSize: 16 << 20}
	s := writeAndReopen(t, dir, o, 1000, zeros(100))
	defer s.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(names) != 1 {
		t.Fatalf("segments %v, want one", names)
	}
	cold := func(when string) {
		t.Helper()
		rss, err := resident.FileRSS(names[0])
		if err != nil {
			t.Fatal(err)
		}
		if rss > 1<<20 {
			t.Fatalf("%s: %d bytes of the 16 MiB segment resident, want at most 1 MiB", when, rss)
		}
	}
	cold("after reopening")
	if d := s.Verify(); len(d) != 0 {
		t.Fatalf("verify: %v", d)
	}
	cold("after Verify")
	var m store.Msg
	if err := s.Load(1000, &m); err != nil || len(m.Data) != 100 {
		t.Fatalf("load 1000: %v", err)
	}
}

// TestVerifyChunks: Verify scans plain segments a chunk (verifyChunk) at a
// time; damage deep in a sealed segment, past the first chunks, is found
// once and only the message it hit is lost.
func TestVerifyChunks(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 4 << 20, FirstSegmentSize: 4 << 20}
	const n = 40000 // about 5.5 MiB: the first segment fills and seals
	writeClosed(t, dir, o, n, zeros(100))
	names, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(names) < 2 {
		t.Fatalf("segments %v, want at least two", names)
	}
	b, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	const at = 3*verifyChunk + 12345
	if len(b) <= at {
		t.Fatalf("first segment %d bytes, want more than %d", len(b), at)
	}
	b[at] ^= 0x10
	if err := os.WriteFile(names[0], b, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.Verify()
	if len(d) != 1 || d[0].File != names[0] || d[0].Offset > at || d[0].Offset < at-200 {
		t.Fatalf("verify: %v, want one damage just before offset %d of %s", d, at, names[0])
	}
	st := s.State()
	if st.Msgs != n-1 || st.Lost == nil || len(st.Lost.Msgs) != 1 {
		t.Fatalf("state %+v, want %d messages and one lost", st, n-1)
	}
	var m store.Msg
	if err := s.Load(st.Lost.Msgs[0], &m); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("load of the lost message: %v", err)
	}
}

// TestRestartIndexInPlace: after a reopen the sealed part of the sequence
// index is read in place from the mapped checkpoint, not copied to the
// heap, and the checkpoint's pages are not resident until a reader needs
// them. The index stays correct through deletes, appends and a new
// checkpoint renamed over the mapped one, and Close releases the mapping.
func TestRestartIndexInPlace(t *testing.T) {
	dir := t.TempDir()
	// One 16 MiB segment: no roll, so no checkpoint before Close.
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20, FirstSegmentSize: 16 << 20}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	// Payloads of varying length: records of one size would pack into the
	// stride form, which has no arrays to read in place.
	payload := func(q uint64) []byte {
		return []byte(fmt.Sprintf("message %08d %s", q, strings.Repeat("x", 60+int(q%7))))
	}
	for q := uint64(1); q <= n; q++ {
		if _, _, err := s.Append("a.b", nil, payload(q)); err != nil {
			t.Fatal(err)
		}
	}
	heapBefore := s.idx.Seqs.MemBytes()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ckptMap == nil {
		t.Fatal("the index was not read in place from the checkpoint")
	}
	if heap := s.idx.Seqs.MemBytes(); heap*5 > heapBefore {
		t.Fatalf("sequence index heap after reopen %d bytes, before close %d: want at most a fifth", heap, heapBefore)
	}
	ckpt := filepath.Join(dir, checkpointFile)
	if rss, err := resident.FileRSS(ckpt); err != nil || rss > 64<<10 {
		t.Fatalf("%d bytes of the checkpoint resident after reopen (%v), want at most 64 KiB", rss, err)
	}
	check := func(when string, deleted map[uint64]bool, last uint64) {
		t.Helper()
		var m store.Msg
		for q := uint64(1); q <= last; q++ {
			err := s.Load(q, &m)
			if deleted[q] {
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s: load of deleted %d: %v", when, q, err)
				}
				continue
			}
			if err != nil || string(m.Data) != string(payload(q)) {
				t.Fatalf("%s: load %d: %v %q", when, q, err, m.Data)
			}
		}
	}
	deleted := map[uint64]bool{}
	for q := uint64(7); q <= n; q += 13 {
		if err := s.Delete(q, false); err != nil {
			t.Fatal(err)
		}
		deleted[q] = true
	}
	for q := uint64(n + 1); q <= n+20_000; q++ {
		if _, _, err := s.Append("a.b", nil, payload(q)); err != nil {
			t.Fatal(err)
		}
	}
	check("after reopen", deleted, n+20_000)
	// A new checkpoint replaces the mapped one (renamed over it): the
	// mapping still reads the old file, and the index is still right.
	s.mu.Lock()
	err = s.checkpointLocked()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	check("after a checkpoint", deleted, n+20_000)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.ckptMap != nil {
		t.Fatal("Close kept the checkpoint mapped")
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	check("after a second reopen", deleted, n+20_000)
}

// TestRestartUniformRecords: a stream of records of one size (the growth
// benchmark's shape) reopens from its checkpoint, whose sealed blocks are
// all in the stride form, and reads back every message. (A checkpoint of
// only stride blocks was once refused as truncated, and the restart fell
// back to scanning every segment.)
func TestRestartUniformRecords(t *testing.T) {
	dir := t.TempDir()
	// One segment: six full blocks, then an open block of five: the
	// checkpoint's tail is far shorter than a full block's entry count.
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20, FirstSegmentSize: 16 << 20}
	const n = 6*8192 + 5
	s := writeAndReopen(t, dir, o, n, zeros(128))
	defer s.Close()
	if rep := s.Recovery(); !rep.UsedCheckpoint || rep.CheckpointErr != nil {
		t.Fatalf("reopen did not use the checkpoint: %v", rep.CheckpointErr)
	}
	// Sealed stride blocks keep no per-message bytes: the checkpoint is
	// a few dozen bytes per sealed block plus the open block's 4 bytes per
	// message (the small form would need over 1.1 bytes per sealed one).
	if fi, err := os.Stat(filepath.Join(dir, checkpointFile)); err != nil || fi.Size() > n/2 {
		t.Fatalf("checkpoint of %d uniform records: %v bytes (%v), want under %d", n, fi.Size(), err, n/2)
	}
	var m store.Msg
	for q := uint64(1); q <= n; q++ {
		if err := s.Load(q, &m); err != nil || len(m.Data) != 128 || m.Seq != q {
			t.Fatalf("load %d: %v", q, err)
		}
	}
}

// writeAndReopen appends n messages (payload(q) for sequence q) to a new
// store in dir, closes it cleanly and returns it reopened.
func writeAndReopen(t *testing.T, dir string, o Options, n uint64, payload func(q uint64) []byte) *Store {
	t.Helper()
	writeClosed(t, dir, o, n, payload)
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeClosed appends n messages to a new store in dir and closes it.
func writeClosed(t *testing.T, dir string, o Options, n uint64, payload func(q uint64) []byte) {
	t.Helper()
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for q := uint64(1); q <= n; q++ {
		if err := s.AppendAsync("a.b", nil, payload(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func zeros(n int) func(uint64) []byte {
	b := make([]byte, n)
	return func(uint64) []byte { return b }
}

// TestPeriodicCheckpointAdoptsWhileReading: a periodic checkpoint maps and
// checks its new file with the store lock released (mapCheckpoint) and
// only swaps arrays under it; the previous mapping is unmapped after the
// lock is released. Readers loading throughout (under -race in make test)
// must read every message right; after each checkpoint the sequence index
// reads from the new mapping, not the heap nor the old one.
func TestPeriodicCheckpointAdoptsWhileReading(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 16 << 20, FirstSegmentSize: 16 << 20, CheckpointEvery: -1}
	const n = 60_000
	// Varying lengths, so that sealed blocks pack into forms with arrays.
	payload := func(q uint64) []byte {
		return []byte(fmt.Sprintf("message %08d %s", q, strings.Repeat("y", 40+int(q%5))))
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for q := uint64(1); q <= n; q++ {
		if _, _, err := s.Append("a.b", nil, payload(q)); err != nil {
			t.Fatal(err)
		}
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		loads atomic.Int64
	)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m store.Msg
			rng := rand.New(rand.NewPCG(uint64(r), 3))
			for !stop.Load() {
				q := 1 + rng.Uint64N(n)
				if err := s.Load(q, &m); err != nil || string(m.Data) != string(payload(q)) {
					t.Errorf("load %d: %v %q", q, err, m.Data)
					return
				}
				loads.Add(1)
			}
		}()
	}
	heap := s.idx.Seqs.MemBytes()
	var prev vfs.Mapping
	for i := range 3 {
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		if err := s.periodicCheckpoint(); err != nil {
			t.Fatal(err)
		}
		s.mu.RLock()
		m, h := s.ckptMap, s.idx.Seqs.MemBytes()
		s.mu.RUnlock()
		if m == nil || m == prev {
			t.Fatalf("checkpoint %d: the index did not move to the new checkpoint's mapping", i)
		}
		if h*5 > heap {
			t.Fatalf("checkpoint %d: sequence index heap %d bytes, %d before: want at most a fifth", i, h, heap)
		}
		prev = m
	}
	time.Sleep(20 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if loads.Load() == 0 {
		t.Fatal("the readers never loaded")
	}
}
