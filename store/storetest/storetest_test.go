package storetest

import (
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/jetwal/jetwal/store"
)

// The suite runs against its own model, which keeps the suite honest: every
// expectation must be met by an implementation written only from the
// documented semantics.
func TestModel(t *testing.T) {
	Run(t, func(t *testing.T, l store.Limits) store.StreamStore { return NewModel(l) })
}

// The suite's byte expectations follow the store's own accounting: a model
// counting as file streams do passes it too.
func TestModelFileSizes(t *testing.T) {
	Run(t, func(t *testing.T, l store.Limits) store.StreamStore { return newModelSized(l, store.FileRecordSize) })
}

// fakeDisk keeps closed models by directory so RunPersistent can be run
// against the model too.
type fakeDisk struct {
	mu   sync.Mutex // guards dirs
	dirs map[string]*model
}

func (d *fakeDisk) open(t *testing.T, dir string, l store.Limits) store.StreamStore {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := newModel(l)
	if old := d.dirs[dir]; old != nil {
		old.mu.Lock()
		if !old.closed {
			old.mu.Unlock()
			t.Fatalf("fake disk: %s opened twice", dir)
		}
		// m's expiry goroutine may already run: fill m under its lock.
		m.mu.Lock()
		for seq, msg := range old.msgs {
			c := *msg
			m.msgs[seq] = &c
		}
		m.order = slices.Sorted(maps.Keys(m.msgs))
		m.first, m.last, m.lastTs = old.first, old.last, old.lastTs
		old.mu.Unlock()
		m.applyLimitsLocked()
		m.mu.Unlock()
	}
	m.onRemove = func() {
		d.mu.Lock()
		delete(d.dirs, dir)
		d.mu.Unlock()
	}
	d.dirs[dir] = m
	return m
}

func TestModelPersistent(t *testing.T) {
	d := &fakeDisk{dirs: make(map[string]*model)}
	RunPersistent(t, d.open)
}
