package wal

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// raPayload is message q's payload: its sequence, padded to a size that
// varies with q, so a record read from the wrong place or a stale window
// shows as a wrong payload, not just a wrong length.
func raPayload(q uint64) []byte {
	return fmt.Appendf(nil, "msg-%08d-%s", q, bytes.Repeat([]byte{byte('a' + q%26)}, int(q%700)))
}

// TestReadAheadConcurrentReaders: more sequential readers than windows walk
// a stream while it grows, messages are deleted (some erased in place) and
// its head is compacted away. Every message a reader gets is the one its
// sequence names, and a reader never skips a message that was live when it
// asked and was not deleted since. Run with -race (make test does).
func TestReadAheadConcurrentReaders(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNever, FirstSegmentSize: 64 << 10, SegmentSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const first = 4000
	for q := uint64(1); q <= first; q++ {
		if err := s.AppendAsync(fmt.Sprintf("ra.%d", q%7), nil, raPayload(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	// The writer appends 4000 more, deleting every 10th message behind it
	// (every 20th erased) and compacting the first thousand away midway.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for q := uint64(first + 1); q <= 2*first; q++ {
			if err := s.AppendAsync(fmt.Sprintf("ra.%d", q%7), nil, raPayload(q), nil); err != nil {
				errc <- err
				return
			}
			if d := q - first; d%10 == 0 {
				if err := s.Delete(d, d%20 == 0); err != nil && !errors.Is(err, store.ErrNotFound) {
					errc <- err
					return
				}
			}
			if q == first+first/2 {
				if _, err := s.Compact(1000); err != nil {
					errc <- err
					return
				}
			}
		}
		if err := s.Sync(); err != nil {
			errc <- err
		}
	}()
	for r := 0; r < 3*winCount; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m store.Msg
			filter := ""
			// stored is the last message the reader must find before the
			// end of what is visible may stop it: the first batch's last, or
			// its last on the filter's subject (the writer's next one on it
			// may not be visible yet when the reader gets there).
			stored := uint64(first)
			if r%3 == 1 {
				filter = fmt.Sprintf("ra.%d", r%7)
				for stored%7 != uint64(r%7) {
					stored--
				}
			}
			for q := uint64(1 + r*100); ; q = m.Seq + 1 {
				err := s.LoadNext(filter, q, &m)
				if errors.Is(err, store.ErrEOF) {
					if q > stored {
						return
					}
					errc <- fmt.Errorf("reader %d: EOF at %d", r, q)
					return
				}
				if err != nil {
					errc <- fmt.Errorf("reader %d at %d: %v", r, q, err)
					return
				}
				if m.Seq < q || !bytes.Equal(m.Data, raPayload(m.Seq)) || m.Subject != fmt.Sprintf("ra.%d", m.Seq%7) {
					errc <- fmt.Errorf("reader %d asked for %d: got seq %d subject %q payload %.20q", r, q, m.Seq, m.Subject, m.Data)
					return
				}
				if filter == "" && m.Seq > q && m.Seq <= first && q > 1000 && (m.Seq-1)%10 != 0 {
					// Only deleted messages may be skipped.
					errc <- fmt.Errorf("reader %d asked for %d, got %d", r, q, m.Seq)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestReadAheadErase: a message erased in place after a sequential reader
// read it (so a window held it) is not served again, and no window keeps a
// copy of its bytes.
func TestReadAheadErase(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secret := func(q uint64) []byte { return fmt.Appendf(nil, "secret-%05d", q) }
	for q := uint64(1); q <= 200; q++ {
		if err := s.AppendAsync("a.b", nil, secret(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	var m store.Msg
	for q := uint64(1); q <= 200; q++ {
		if err := s.LoadNext("", q, &m); err != nil || !bytes.Equal(m.Data, secret(q)) {
			t.Fatalf("load next %d: %q %v", q, m.Data, err)
		}
	}
	if !windowsHold(s, secret(50)) {
		t.Fatal("no window holds the records read: the test tests nothing")
	}
	if err := s.Delete(50, true); err != nil {
		t.Fatal(err)
	}
	if windowsHold(s, secret(50)) {
		t.Fatal("a window still holds the erased message's bytes")
	}
	if err := s.LoadNext("", 50, &m); err != nil || m.Seq != 51 || !bytes.Equal(m.Data, secret(51)) {
		t.Fatalf("load next 50 after erasing it: seq %d %q %v", m.Seq, m.Data, err)
	}
	if err := s.Load(50, &m); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("load of the erased message: %v", err)
	}
}

// windowsHold reports whether any window's buffer, to its capacity,
// contains b.
func windowsHold(s *Store, b []byte) bool {
	rw := &s.readWindows
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for _, w := range rw.w {
		if bytes.Contains(w.buf[:cap(w.buf)], b) {
			return true
		}
	}
	return false
}

// TestReadAheadWindows: a reader going through a segment grows one window
// to winSize and keeps to it; windows nobody used between two releases are
// freed; readers that each take a record at scattered places use no window
// (they read through the mapping), nor does a sparse filter.
func TestReadAheadWindows(t *testing.T) {
	// One segment: a reader entering the next starts a window there.
	s, err := Open(t.TempDir(), Options{Sync: SyncNever, FirstSegmentSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 20000 // about 5.6 MiB of records
	for q := uint64(1); q <= n; q++ {
		if err := s.AppendAsync("a.b", nil, raPayload(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	var m store.Msg
	load := func(q uint64) {
		t.Helper()
		if err := s.LoadNext("", q, &m); err != nil || m.Seq != q || !bytes.Equal(m.Data, raPayload(q)) {
			t.Fatalf("load next %d: seq %d %v", q, m.Seq, err)
		}
	}
	lens := func() (used, largest int) {
		s.readWindows.mu.Lock()
		defer s.readWindows.mu.Unlock()
		for _, w := range s.readWindows.w {
			if len(w.buf) > 0 {
				used++
				largest = max(largest, len(w.buf))
			}
		}
		return used, largest
	}
	grown := false
	for q := uint64(1); q <= n; q++ {
		load(q)
		used, largest := lens()
		if used != min(int(q)-1, 1) { // the first read is no one's continuation
			t.Fatalf("one reader at %d: %d windows in use", q, used)
		}
		grown = grown || largest == winSize
	}
	if !grown {
		t.Fatalf("one reader through %d messages never read %d bytes at a time", n, winSize)
	}
	s.releaseIdleWindows() // the reader's window was used since: kept
	if used, _ := lens(); used != 1 {
		t.Fatalf("release freed a window used since the last: %d in use", used)
	}
	s.releaseIdleWindows()
	if used, _ := lens(); used != 0 {
		t.Fatalf("release kept %d idle windows", used)
	}
	// 3 x winCount readers spread over the stream, each taking the record
	// after the last one's in turn: a reader's trail is gone before it
	// comes back, so each read goes through the mapping.
	const readers = 3 * winCount
	for round := uint64(0); round < 5; round++ {
		for r := uint64(0); r < readers; r++ {
			load(1 + r*(n/readers) + round)
			if used, _ := lens(); used != 0 {
				t.Fatalf("scattered readers: %d windows in use", used)
			}
		}
	}
	// A filter matching one message in a thousand reads no window either.
	for q := uint64(1); q <= n; q += 1000 {
		load(q)
	}
	if used, _ := lens(); used != 0 {
		t.Fatalf("a sparse reader: %d windows in use", used)
	}
	// A filter matching every other message reads from windows.
	for q := uint64(1); q <= 2000; q += 2 {
		load(q)
	}
	if used, largest := lens(); used != 1 || largest != winSize {
		t.Fatalf("a reader of every other message: %d windows in use, largest %d bytes; want 1 of %d", used, largest, winSize)
	}
}
