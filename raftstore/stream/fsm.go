package stream

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/vfs"
	"github.com/jetwal/jetwal/wal"
)

// The interfaces an FSM implements.
var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.BatchingFSM = (*FSM)(nil)
)

// Result is what applying one entry returned; raft hands it to the
// proposer's ApplyFuture.Response.
type Result struct {
	Seq  uint64 // OpAppend: the message's sequence
	Time int64  // OpAppend: its timestamp
	N    uint64 // OpPurge, OpCompact: messages removed
	Err  error  // the operation's error; the same on every replica
}

// ErrDiverged is returned (and the FSM stops applying) when an append got a
// sequence other than the one the log's order implies.
var ErrDiverged = errors.New("stream: replica diverged from the log")

// FSM applies a replicated stream's log to a wal.Store of its own. Every
// replica applies the same entries in the same order, so all agree on
// every sequence and timestamp. Apply, ApplyBatch, Snapshot and Restore are
// called by raft from one goroutine; Store may be called from any.
type FSM struct {
	dir  string
	fs   vfs.FS
	opts wal.Options

	mu sync.RWMutex // guards st against Restore replacing it
	st *wal.Store

	mw      *markWriter
	msgs    []Msg         // ApplyBatch's decoded messages, reused from entry to entry
	applied atomic.Uint64 // last raft index applied
	sub     uint64        // messages of entry applied+1 applied (from the mark at Open)
	seq     uint64        // the store's last sequence as the log has it
	have    uint64        // the store's last sequence when it was opened
	lastTS  atomic.Int64  // largest timestamp applied; entries never go below it
	now     atomic.Int64
	failed  error // sticky: an I/O error or a divergence

	// Catch-up (catchup.go): a version 2 snapshot's restore.
	fetch        Fetcher
	stop         chan struct{} // closed by Close: a fetch in progress gives up
	stopOnce     sync.Once
	busy         sync.Mutex // held by a restore's catch-up; Close waits for it
	pmu          sync.Mutex // guards pending and lacked
	pending      *snapState // the restore under way (its file on disk), nil when none
	lacked       [2]uint64  // the range the last restore fetched (FetchStats)
	fetchedMsgs  atomic.Uint64
	fetchedBytes atomic.Uint64
}

// Options are an FSM's own options, besides its store's.
type Options struct {
	// Fetch reaches the group (its leader first). With it the FSM's
	// snapshots are the stream's state (version 2: a follower that
	// restores one fetches only the messages it lacks); without it they
	// hold every message (version 1), and a version 2 snapshot cannot be
	// restored.
	Fetch Fetcher
}

// Open opens (or creates) the replica in dir. opts configures the store
// (limits, segment sizes, FS); its Sync, Now and NoReservation are the
// FSM's: the raft log is the durable record, so the store is written
// without fsync and made durable at marks (see doc.go).
func Open(dir string, opts wal.Options) (*FSM, error) { return OpenWith(dir, opts, Options{}) }

// OpenWith is Open with the FSM's own options.
func OpenWith(dir string, opts wal.Options, o Options) (*FSM, error) {
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("stream: create %s: %w", dir, err)
	}
	f := &FSM{dir: dir, fs: fs, opts: opts, fetch: o.Fetch, stop: make(chan struct{})}
	f.opts.FS = fs
	f.opts.Sync = wal.SyncNever
	f.opts.NoReservation = true
	f.opts.Now = func() time.Time { return time.Unix(0, f.now.Load()) }
	mw, m, err := openMark(fs, dir)
	if err != nil {
		return nil, err
	}
	st, err := wal.Open(f.storeDir(), f.opts)
	if err != nil {
		return nil, err
	}
	f.mw, f.st = mw, st
	fail := func(err error) (*FSM, error) {
		f.Store().Close()
		return nil, err
	}
	// A repair that a crash interrupted is finished first.
	if _, err := fs.Stat(f.repairPath()); err == nil {
		if err := f.finishRepair(); err != nil {
			return fail(err)
		}
	}
	// A restore that a crash interrupted resumes before anything is
	// applied (resume): meanwhile the store may hold less than the mark
	// (rebuilt from nothing) and only its own messages count.
	pending, err := f.readPending()
	if err != nil {
		return fail(err)
	}
	if pending != nil && pending.index <= m.Index {
		if err := f.dropPending(); err != nil {
			return fail(err)
		}
		pending = nil
	}
	f.pending = pending
	last := f.Store().State().LastSeq
	held := max(m.LastSeq, lastStored(f.Store()))
	if pending != nil {
		held = lastStored(f.Store())
	} else if last < m.LastSeq {
		return fail(fmt.Errorf("stream: %s: store ends at sequence %d, before its applied mark %d (raft index %d)",
			dir, last, m.LastSeq, m.Index))
	}
	if last > held {
		first := f.Store().State().FirstSeq
		if pending != nil && held == 0 {
			// Nothing of its own: the restore compacts it again.
			first = 1
		}
		if err := f.repairTail(m, first, held); err != nil {
			return fail(err)
		}
		last = held
	}
	f.seq, f.have = m.LastSeq, last
	f.lastTS.Store(m.LastTS)
	f.applied.Store(m.Index)
	f.sub = m.Sub
	return f, nil
}

func (f *FSM) storeDir() string { return filepath.Join(f.dir, "store") }

func (f *FSM) repairPath() string { return filepath.Join(f.dir, repairFile) }

// repairFile holds, while a store is being rebuilt (repairTail), the
// messages it is rebuilt from, in the snapshot format.
const repairFile = "repair"

// lastStored is the sequence of the store's last message, 0 when it holds
// none.
func lastStored(st *wal.Store) uint64 {
	var m store.Msg
	if err := st.LoadLast("", &m); err != nil {
		return 0
	}
	return m.Seq
}

// repairTail rebuilds a store that counts sequences past held which it
// holds no message for: a crash between the creation of a segment and the
// write of the messages before it leaves the store's next sequence at the
// new segment's base (sequences never go backwards in a wal store). Past
// the mark only appends happen, each of the log's appends taking the next
// sequence, so a replay counting on the store's last sequence would take
// those lost messages for stored ones. The store is rebuilt from its own
// messages up to held (through a snapshot file, so that a crash midway
// leaves either the old store or the complete file to rebuild from), and
// the replay then appends the lost ones again at their sequences.
func (f *FSM) repairTail(m mark, first, held uint64) error {
	st := f.Store()
	tmp := f.repairPath() + ".tmp"
	w, err := f.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("stream: %s: repair: %w", f.dir, err)
	}
	snap := &snapshot{st: st, index: m.Index, first: first, last: held, lastTS: m.LastTS}
	err = snap.write(w)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.fs.Rename(tmp, f.repairPath())
	}
	if err == nil {
		err = f.fs.SyncDir(f.dir)
	}
	if err != nil {
		return fmt.Errorf("stream: %s: repair: %w", f.dir, err)
	}
	return f.finishRepair()
}

// finishRepair rebuilds the store from the repair file and removes it.
func (f *FSM) finishRepair() error {
	r, err := f.fs.Open(f.repairPath())
	if err != nil {
		return fmt.Errorf("stream: %s: repair: %w", f.dir, err)
	}
	_, _, _, err = f.rebuild(io.NewSectionReader(r, 0, math.MaxInt64))
	r.Close()
	if err != nil {
		return err
	}
	f.failed = nil
	if err := f.fs.Remove(f.repairPath()); err != nil {
		return fmt.Errorf("stream: %s: repair: %w", f.dir, err)
	}
	return f.fs.SyncDir(f.dir)
}

// Store returns the replica's store, for reads. Restore replaces it; a
// reader holding the old one gets wal's closed error.
func (f *FSM) Store() *wal.Store {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st
}

// Applied returns the last raft index applied.
func (f *FSM) Applied() uint64 { return f.applied.Load() }

// LastTime returns the largest timestamp applied: a proposer stamps
// appends at or above it.
func (f *FSM) LastTime() int64 { return f.lastTS.Load() }

// Close makes everything applied durable, marks it and closes the store.
// A restore's catch-up in progress stops (ErrStopped) first.
func (f *FSM) Close() error {
	f.Stop()
	f.busy.Lock()
	defer f.busy.Unlock()
	err := f.settle()
	f.mu.Lock()
	defer f.mu.Unlock()
	if cerr := f.st.Close(); err == nil {
		err = cerr
	}
	return err
}

// Apply applies one entry.
func (f *FSM) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// BatchResult is what applying an OpAppendBatch entry returned: one Result
// per message, in the entry's order. An entry that could not be applied
// at all (malformed, or the FSM has failed) returns a *Result instead,
// whose error is every message's.
type BatchResult struct {
	Msgs []Result
}

// ErrBeforeMark is the result of a message of a batch that was applied
// before a restart, at a point the applied mark records: its own result
// was given then (raft replays entries after a restart with no one
// waiting for them).
var ErrBeforeMark = errors.New("stream: message applied before the last restart")

// appends is the appends of one ApplyBatch call, written without waiting
// for each other.
type appends struct {
	wg      sync.WaitGroup
	pending []pendingAppend
}

type pendingAppend struct {
	r    *Result
	want uint64
}

// ApplyBatch applies entries in order. Appends are written without waiting
// for each other; every other operation is fenced by marks on both sides,
// so that after a crash only appends need to be told apart from what the
// store already holds (replays of appends are recognised by sequence).
func (f *FSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	// A restore interrupted by a crash is completed first: raft has the
	// snapshot's index as applied. Closing (ErrStopped) leaves these
	// entries unapplied and unmarked, so raft gives them again after the
	// restart; any other failure stops the FSM, as an I/O error does.
	if f.failed == nil {
		if err := f.resume(); err != nil {
			if !errors.Is(err, ErrStopped) {
				f.failed = err
			}
			for i := range out {
				out[i] = &Result{Err: err}
			}
			return out
		}
	}
	var a appends
	for i, l := range logs {
		if l.Type != raft.LogCommand || l.Index <= f.applied.Load() {
			continue
		}
		// The mark's position inside an entry holds for that entry only.
		sub := f.sub
		if l.Index != f.applied.Load()+1 {
			sub = 0
		}
		f.sub = 0
		if f.failed != nil {
			out[i] = &Result{Err: f.failed}
			continue
		}
		e, err := DecodeInto(l.Data, f.msgs)
		if len(e.Msgs) > cap(f.msgs) {
			f.msgs = e.Msgs
		}
		if err != nil {
			out[i] = &Result{Err: fmt.Errorf("raft index %d: %w", l.Index, err)}
			f.applied.Store(l.Index)
			continue
		}
		switch e.Op {
		case OpAppend:
			r := &Result{}
			out[i] = r
			f.append(&a, r, e.Subject, e.Header, e.Data, e.Time, l.Index, 0, 1)
		case OpAppendBatch:
			br := &BatchResult{Msgs: make([]Result, len(e.Msgs))}
			out[i] = br
			a.pending = slices.Grow(a.pending, len(e.Msgs))
			for k := range e.Msgs {
				r := &br.Msgs[k]
				if uint64(k) < sub {
					r.Err = ErrBeforeMark
					continue
				}
				if f.failed != nil {
					r.Err = f.failed
					continue
				}
				m := &e.Msgs[k]
				f.append(&a, r, m.Subject, m.Header, m.Data, m.Time, l.Index, k, len(e.Msgs))
			}
		default:
			a.wg.Wait()
			out[i] = f.applyFenced(e, l.Index)
			continue
		}
		f.applied.Store(l.Index)
	}
	a.wg.Wait()
	for _, p := range a.pending {
		if p.r.Err == nil && p.r.Seq != p.want {
			f.failed = fmt.Errorf("%w: %s: append got sequence %d, the log implies %d", ErrDiverged, f.dir, p.r.Seq, p.want)
		} else if p.r.Err != nil && f.failed == nil {
			f.failed = fmt.Errorf("stream: %s: %w", f.dir, p.r.Err) // written and then failed: I/O
		}
	}
	return out
}

// append applies message k of the n an entry at index appends, into r.
func (f *FSM) append(a *appends, r *Result, subject string, hdr, data []byte, t int64, index uint64, k, n int) {
	ts := max(t, f.lastTS.Load())
	f.lastTS.Store(ts)
	if f.seq < f.have {
		// Applied before a crash: the store has it.
		f.seq++
		r.Seq, r.Time = f.seq, ts
		return
	}
	f.now.Store(ts)
	a.wg.Add(1)
	f.mu.RLock()
	err := f.st.AppendAsync(subject, hdr, data, func(seq uint64, ts int64, err error) {
		r.Seq, r.Time, r.Err = seq, ts, err
		a.wg.Done()
	})
	f.mu.RUnlock()
	if err != nil {
		// Refused (a limit, a bad subject): no sequence taken, the same
		// on every replica. Mark it, with the position inside the entry,
		// so a replay never has to guess: the messages after it that the
		// store holds are then told apart by counting, as ever.
		a.wg.Done()
		r.Err = err
		a.wg.Wait()
		m := mark{Index: index - 1, Sub: uint64(k + 1), LastSeq: f.seq, LastTS: f.lastTS.Load()}
		if k+1 == n {
			m.Index, m.Sub = index, 0
		}
		if merr := f.settleAt(m); merr != nil {
			f.failed = merr
		}
		return
	}
	f.seq++
	f.have = f.seq
	a.pending = append(a.pending, pendingAppend{r, f.seq})
}

// applyFenced applies a non-append entry between two marks.
func (f *FSM) applyFenced(e Entry, index uint64) *Result {
	if err := f.settle(); err != nil {
		f.failed = err
		return &Result{Err: err}
	}
	st := f.Store()
	var r Result
	switch e.Op {
	case OpDelete:
		r.Err = st.Delete(e.Seq, e.Erase)
	case OpPurge:
		r.N, r.Err = st.Purge(e.Filter, e.Seq, e.Keep)
	case OpCompact:
		r.N, r.Err = st.Compact(e.Seq)
	case OpSkip:
		// wal's SkipTo does nothing when the store is already there, so a
		// replay changes nothing.
		if r.Err = st.SkipTo(e.Seq); r.Err == nil && e.Seq > 0 && f.seq < e.Seq-1 {
			f.seq = e.Seq - 1
			f.have = max(f.have, f.seq)
		}
	}
	f.applied.Store(index)
	if err := f.settle(); err != nil {
		f.failed = err
		r.Err = err
	}
	return &r
}

// settle makes the store durable and writes the mark for what is applied
// (whole entries: it is called between them).
func (f *FSM) settle() error {
	return f.settleAt(mark{Index: f.applied.Load(), LastSeq: f.seq, LastTS: f.lastTS.Load()})
}

// settleAt makes the store durable and writes m.
func (f *FSM) settleAt(m mark) error {
	if err := f.Store().Sync(); err != nil {
		return fmt.Errorf("stream: %s: sync store: %w", f.dir, err)
	}
	return f.mw.write(m)
}
