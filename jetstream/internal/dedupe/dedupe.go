// Package dedupe is a stream's duplicate window: the Nats-Msg-Id values
// seen within the stream's duplicates window, by id, with the sequence
// and time each was stored at, and the duplicates that arrived while the
// original was still being stored.
//
// Entries are kept by id and in a FIFO in arrival order, so expiring the
// ones older than the window is a pop from the front. A Table has no lock
// of its own: its stream guards it. Saving and loading the window
// (dedupe.dat) is the stream's (jetstream/dedupe_file.go); the Table keeps
// the bookkeeping of when it was last saved.
//
// # Source files
//
//   - dedupe.go: Entry and Table.
package dedupe

import (
	"iter"
	"time"
)

// Entry records one Nats-Msg-Id seen within the duplicate window.
type Entry struct {
	ID  string
	Seq uint64
	TS  int64 // unix ns: the store's time once stored, the arrival time before
	// Pending is true while the original append is not yet durable; a
	// duplicate arriving then waits in Waiters for the original's outcome.
	Pending bool
	Waiters []string // reply subjects of duplicates of a pending original
}

// Table is the Nats-Msg-Id table of a stream.
type Table struct {
	Window   int64     // ns
	Added    bool      // an id was added since the window was last saved
	Saved    time.Time // when the window was last saved
	SavedSeq uint64    // the stream's last sequence then

	byID map[string]*Entry
	fifo []*Entry
	head int
}

// New returns an empty table with a window of windowNS nanoseconds.
func New(windowNS int64) *Table {
	return &Table{Window: windowNS, byID: make(map[string]*Entry)}
}

// Lookup returns id's entry, nil when id is not in the window.
func (d *Table) Lookup(id string) *Entry { return d.byID[id] }

// Add records id; an existing entry for the same id is replaced.
func (d *Table) Add(id string, seq uint64, ts int64, pending bool) *Entry {
	e := &Entry{ID: id, Seq: seq, TS: ts, Pending: pending}
	d.Added = true
	d.byID[id] = e
	d.fifo = append(d.fifo, e)
	return e
}

// Remove forgets e (its append failed). Its FIFO slot no longer holds
// expiry back and is dropped when reached.
func (d *Table) Remove(e *Entry) {
	if d.byID[e.ID] == e {
		delete(d.byID, e.ID)
	}
	e.Pending = false
}

// Expire drops entries stored before now-Window. Pending entries and the
// entries behind them stay until a later call.
func (d *Table) Expire(now int64) {
	cutoff := now - d.Window
	for d.head < len(d.fifo) {
		e := d.fifo[d.head]
		if e.Pending || e.TS >= cutoff {
			break
		}
		if d.byID[e.ID] == e {
			delete(d.byID, e.ID)
		}
		d.fifo[d.head] = nil
		d.head++
	}
	if d.head > 1024 && d.head > len(d.fifo)/2 {
		n := copy(d.fifo, d.fifo[d.head:])
		clear(d.fifo[n:])
		d.fifo = d.fifo[:n]
		d.head = 0
	}
}

// Len is the number of ids in the window.
func (d *Table) Len() int { return len(d.byID) }

// Arrived yields the entries not yet expired in arrival order, each with
// whether it is still its id's entry (a later Add of the same id, or a
// Remove, replaces it).
func (d *Table) Arrived() iter.Seq2[*Entry, bool] {
	return func(yield func(*Entry, bool) bool) {
		for _, e := range d.fifo[d.head:] {
			if e != nil && !yield(e, d.byID[e.ID] == e) {
				return
			}
		}
	}
}
