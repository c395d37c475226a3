package jetstream

import "time"

// dedupEntry records one Nats-Msg-Id seen within the duplicate window.
type dedupEntry struct {
	id  string
	seq uint64
	ts  int64 // unix ns: the store's time once stored, the arrival time before
	// pending is true while the original append is not yet durable; a
	// duplicate arriving then waits in waiters for the original's outcome.
	pending bool
	waiters []string // reply subjects of duplicates of a pending original
}

// dedupe is the Nats-Msg-Id table of a stream: entries by id plus a FIFO in
// arrival order, so expiring the ones older than the window is a pop from
// the front. It has no lock of its own: the stream guards it with pmu.
type dedupe struct {
	window   int64 // ns
	byID     map[string]*dedupEntry
	fifo     []*dedupEntry
	head     int
	added    bool      // an id was added since the window was last saved
	saved    time.Time // when the window was last saved (dedupe_file.go)
	savedSeq uint64    // the stream's last sequence then
}

func newDedupe(windowNS int64) *dedupe {
	return &dedupe{window: windowNS, byID: make(map[string]*dedupEntry)}
}

func (d *dedupe) lookup(id string) *dedupEntry { return d.byID[id] }

// add records id; an existing entry for the same id is replaced.
func (d *dedupe) add(id string, seq uint64, ts int64, pending bool) *dedupEntry {
	e := &dedupEntry{id: id, seq: seq, ts: ts, pending: pending}
	d.added = true
	d.byID[id] = e
	d.fifo = append(d.fifo, e)
	return e
}

// remove forgets e (its append failed). Its FIFO slot no longer holds
// expiry back and is dropped when reached.
func (d *dedupe) remove(e *dedupEntry) {
	if d.byID[e.id] == e {
		delete(d.byID, e.id)
	}
	e.pending = false
}

// expire drops entries stored before now-window. Pending entries and the
// entries behind them stay until a later call.
func (d *dedupe) expire(now int64) {
	cutoff := now - d.window
	for d.head < len(d.fifo) {
		e := d.fifo[d.head]
		if e.pending || e.ts >= cutoff {
			break
		}
		if d.byID[e.id] == e {
			delete(d.byID, e.id)
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

func (d *dedupe) len() int { return len(d.byID) }
