package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

var readerTests = []suiteTest{
	{"Concurrent/FilteredReaders", testFilteredReaders},
}

// testFilteredReaders runs every read from four goroutines at once, with
// wildcard and literal filters, while a writer appends to new and old
// subjects, deletes and purges. Readers may share a store's read lock, so
// anything a read path writes must have a lock of its own (the file
// store's subject match cache did not: two consumers with wildcard
// filters crashed the server with "concurrent map writes"); -race finds
// what does not. Each read must also return what it asked for: a message
// matching its filter, or ErrEOF / ErrNotFound.
func testFilteredReaders(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	s := h.s
	for i := 0; i < 2000; i++ {
		if err := s.AppendAsync(fmt.Sprintf("r.%d.%d", i%7, i%13), nil, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		stop.Store(true)
	}
	wg.Add(1)
	go func() { // the writer: new subjects change the subject set
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, _, err := s.Append(fmt.Sprintf("r.%d.new%d", i%7, i), nil, []byte("y")); err != nil {
				fail("append: %v", err)
				return
			}
			if i%50 == 0 {
				if err := s.Delete(uint64(i+1), false); err != nil && !errors.Is(err, store.ErrNotFound) {
					fail("delete: %v", err)
					return
				}
			}
			if i%400 == 399 {
				if _, err := s.Purge(fmt.Sprintf("r.%d.>", i%7), 0, 100); err != nil {
					fail("purge: %v", err)
					return
				}
			}
		}
	}()
	filters := []string{"r.*.1", "r.3.>", "*.*.5", "r.>", "r.2.4", "r.*.*", ">", ""}
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m store.Msg
			check := func(what, filter string, err error) {
				switch {
				case errors.Is(err, store.ErrEOF), errors.Is(err, store.ErrNotFound):
				case err != nil:
					fail("%s(%q): %v", what, filter, err)
				case filter != "" && !subject.Match(filter, m.Subject):
					fail("%s(%q) returned subject %q", what, filter, m.Subject)
				}
			}
			for i := 0; !stop.Load(); i++ {
				f := filters[(i+g)%len(filters)]
				check("LoadNext", f, s.LoadNext(f, uint64(i%2500)+1, &m))
				check("LoadLast", f, s.LoadLast(f, &m))
				check("LoadPrev", f, s.LoadPrev(f, uint64(i%2500)+1, &m))
				check("Load", "", s.Load(uint64(i%2500)+1, &m))
				s.NumPending(uint64(i%100)+1, f, i%2 == 0)
				s.SubjectsState(f)
				s.State()
				s.StateWithDeleted()
				s.SeqForTime(time.Now().Add(-time.Duration(i%5) * time.Millisecond))
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
}
