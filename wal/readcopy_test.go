package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/segment"
	"github.com/jetwal/jetwal/store"
)

// payload is message i's body: its length and bytes both depend on i, so a
// load that returned another message's bytes, or a stale tail, fails.
func payload(i int) []byte {
	sizes := []int{10, segment.CopyReadMin, 16 << 10, 256 << 10, 300}
	b := make([]byte, sizes[i%len(sizes)]+i%7)
	for j := range b {
		b[j] = byte(i + j/4096)
	}
	return b
}

func header(i int) []byte {
	if i%2 == 0 {
		return nil
	}
	return fmt.Appendf(nil, "NATS/1.0\r\nN: %d\r\n\r\n", i)
}

func checkMsg(t *testing.T, m *store.Msg, i int) {
	t.Helper()
	if m.Seq != uint64(i+1) || m.Subject != fmt.Sprintf("s.%d", i) || !bytes.Equal(m.Header, header(i)) || !bytes.Equal(m.Data, payload(i)) {
		t.Fatalf("message %d: seq %d subject %q header %q, %d bytes (want %d)", i, m.Seq, m.Subject, m.Header, len(m.Data), len(payload(i)))
	}
}

// TestLoadLargeRecords: large records are read with pread rather than
// through the mapping (segment.ReadAtCopy); one Msg reused across small and
// large messages, in both orders, always holds exactly the message loaded.
// A large record damaged on disk is refused and reported lost, never served.
func TestLoadLargeRecords(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, SegmentSize: 1 << 20}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	// 19 messages: the last is a large one (its size estimated from the
	// flushed end), and message 9 (large) is followed by a deleted one (its
	// size read from the mapping).
	const n = 19
	for i := 0; i < n; i++ {
		if _, _, err := s.Append(fmt.Sprintf("s.%d", i), header(i), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(10, false); err != nil {
		t.Fatal(err)
	}
	var m store.Msg
	for i := 0; i < n; i++ { // the newest records are read right after a flush
		if i == 9 {
			continue
		}
		if err := s.Load(uint64(i+1), &m); err != nil {
			t.Fatal(err)
		}
		checkMsg(t, &m, i)
	}
	for i := n - 1; i >= 0; i-- {
		if i == 9 {
			continue
		}
		if err := s.LoadNext(">", uint64(i+1), &m); err != nil {
			t.Fatal(err)
		}
		checkMsg(t, &m, i)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Flip the last payload byte of message 3 (256 KiB) in its file.
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	damaged := false
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		body := payload(3)
		if i := bytes.Index(b, body); i >= 0 {
			b[i+len(body)-1] ^= 0xff
			if err := os.WriteFile(p, b, 0o640); err != nil {
				t.Fatal(err)
			}
			damaged = true
			break
		}
	}
	if !damaged {
		t.Fatal("message 3's payload not found in any segment")
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Load(4, &m); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("load of damaged large record: %v", err)
	}
	if st := s.State(); st.Lost == nil || len(st.Lost.Msgs) != 1 || st.Lost.Msgs[0] != 4 {
		t.Fatalf("damaged record not reported lost: %+v", st.Lost)
	}
	for i := 0; i < n; i++ {
		if i == 3 || i == 9 {
			continue
		}
		if err := s.Load(uint64(i+1), &m); err != nil {
			t.Fatal(err)
		}
		checkMsg(t, &m, i)
	}
}

// TestLoadLargeWhilePurging: large loads run while other goroutines purge
// and append, so segments are removed under the readers. The record is read
// under the store's read lock, which keeps its segment open; every load
// either returns the right message or reports it gone.
func TestLoadLargeWhilePurging(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNever, FirstSegmentSize: 1 << 20, SegmentSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const rounds, per = 8, 40
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m store.Msg
			for k := 0; k < rounds*per*3; k++ {
				seq := uint64(k%(rounds*per)) + 1
				err := s.Load(seq, &m)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				i := int(seq - 1)
				if m.Seq != seq || !bytes.Equal(m.Data, payload(i)) || !bytes.Equal(m.Header, header(i)) {
					errc <- fmt.Errorf("sequence %d: seq %d, %d bytes", seq, m.Seq, len(m.Data))
					return
				}
			}
		}()
	}
	for r := 0; r < rounds; r++ {
		for j := 0; j < per; j++ {
			i := r*per + j
			if _, _, err := s.Append(fmt.Sprintf("s.%d", i), header(i), payload(i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Purge("", uint64(r*per+per/2), 0); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if st := s.State(); st.Lost != nil {
		t.Fatalf("messages lost: %+v", st.Lost)
	}
}

// TestLoadLargeCompressed: records of compressed segments are decoded on the
// heap and never read with pread; a Msg reused across small and large
// messages from them holds exactly the message loaded.
func TestLoadLargeCompressed(t *testing.T) {
	// SyncAlways: a roll seals and compresses the old segment before the
	// next append returns (with SyncNever a background goroutine does it,
	// and this test could look before it has).
	s, err := Open(t.TempDir(), Options{Sync: SyncAlways, SegmentSize: 1 << 20, Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 19
	for i := 0; i < n; i++ {
		if _, _, err := s.Append(fmt.Sprintf("s.%d", i), header(i), payload(i)); err != nil {
			t.Fatal(err)
		}
	}
	compressed := 0
	s.mu.RLock()
	for _, e := range s.segs {
		if e.seg.Compressed() {
			compressed++
		}
	}
	s.mu.RUnlock()
	if compressed == 0 {
		t.Fatal("no segment was compressed")
	}
	var m store.Msg
	for _, order := range [][2]int{{0, 1}, {n - 1, -1}} {
		for i := order[0]; i >= 0 && i < n; i += order[1] {
			if err := s.Load(uint64(i+1), &m); err != nil {
				t.Fatal(err)
			}
			checkMsg(t, &m, i)
		}
	}
}

// TestLoadLargeCutSegment: a sealed segment cut short on disk inside the
// length word of a large record, which the checkpoint still maps. Loading
// that message reports it lost (as for any damaged record); it must not
// crash the process. The messages before the cut still load.
func TestLoadLargeCutSegment(t *testing.T) {
	dir := t.TempDir()
	o := Options{Sync: SyncNever, FirstSegmentSize: 256 << 10, SegmentSize: 256 << 10}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	const n, cut = 40, 5
	for range n {
		if _, _, err := s.Append("a.b", nil, make([]byte, 16<<10)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	loc, _ := s.idx.Seqs.Lookup(cut)
	seg := s.segByID(loc.Seg)
	path, sealed := seg.Path(), seg.Sealed()
	s.mu.Unlock()
	if !sealed {
		t.Fatalf("message %d is in the active segment; the test needs it in a sealed one", cut)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(loc.Off)+2); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, o)
	if err != nil {
		t.Fatalf("open after damage: %v", err)
	}
	// No deferred Close: a panic under the read lock would leave Close
	// waiting for the lock, and the test hanging instead of failing.
	var m store.Msg
	for q := uint64(1); q < cut; q++ {
		if err := s.Load(q, &m); err != nil || len(m.Data) != 16<<10 {
			t.Fatalf("message %d before the cut: %v (%d bytes)", q, err, len(m.Data))
		}
	}
	if err := s.Load(cut, &m); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("message %d, cut inside its length word: %v", cut, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
