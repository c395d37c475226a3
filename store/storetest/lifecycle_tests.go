package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/jetwal/jetwal/store"
)

var lifecycleTests = []suiteTest{
	{"Closed/Close", func(t *testing.T, open openFunc) { testClosed(t, open, false) }},
	{"Closed/Remove", func(t *testing.T, open openFunc) { testClosed(t, open, true) }},
	{"Sync", testSync},
}

func testClosed(t *testing.T, open openFunc, remove bool) {
	h := newHarness(t, open, store.Limits{MaxAge: time.Hour})
	h.fill("c.a", "c.b", "c.a")
	var err error
	if remove {
		err = h.s.Remove()
	} else {
		err = h.s.Close()
	}
	if err != nil {
		t.Fatalf("first close: %v", err)
	}
	var m store.Msg
	called := false
	done := func(uint64, int64, error) { called = true }
	ops := []struct {
		name string
		do   func() error
	}{
		{"Append", func() error { _, _, err := h.s.Append("c.a", nil, nil); return err }},
		{"AppendAsync", func() error { return h.s.AppendAsync("c.a", nil, nil, done) }},
		{"Load", func() error { return h.s.Load(1, &m) }},
		{"LoadNext", func() error { return h.s.LoadNext("", 0, &m) }},
		{"LoadNext/filter", func() error { return h.s.LoadNext("c.*", 0, &m) }},
		{"LoadLast", func() error { return h.s.LoadLast("c.a", &m) }},
		{"LoadPrev", func() error { return h.s.LoadPrev("", 3, &m) }},
		{"Delete", func() error { return h.s.Delete(2, false) }},
		{"Purge", func() error { _, err := h.s.Purge("", 0, 0); return err }},
		{"Compact", func() error { _, err := h.s.Compact(2); return err }},
		{"Truncate", func() error { return h.s.Truncate(1) }},
		{"UpdateLimits", func() error { return h.s.UpdateLimits(store.Limits{}) }},
		{"Sync", func() error { return h.s.Sync() }},
	}
	for _, op := range ops {
		if err := op.do(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after close: %v, want ErrClosed", op.name, err)
		}
	}
	if called {
		t.Error("AppendAsync on a closed store called done")
	}
	// Queries without an error result must not panic on a closed store.
	_ = h.s.State()
	_ = h.s.StateWithDeleted()
	_ = h.s.SubjectsState("")
	_ = h.s.NumPending(0, "", false)
	_ = h.s.SeqForTime(time.Now())
	for _, again := range []func() error{h.s.Close, h.s.Remove} {
		if err := again(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("closing again: %v, want nil or ErrClosed", err)
		}
	}
}

func testSync(t *testing.T, open openFunc) {
	h := newHarness(t, open, store.Limits{})
	if err := h.s.Sync(); err != nil {
		t.Fatalf("Sync on empty store: %v", err)
	}
	h.fill("s.a", "s.b")
	if err := h.s.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	h.wantSeqs(1, 2)
}
