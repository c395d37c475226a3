package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/wal"
)

// Fetcher asks the group (its leader, or another member) for messages a
// replica lacks (the catch-up of a version 2 snapshot's restore). The FSM
// does not reach the network itself: its owner gives it one
// (Options.Fetch).
type Fetcher interface {
	// Fetch returns the messages a member holds in [from, to], in
	// sequence order, with their sequences and times, and through: every
	// sequence from from to through that is not among them is deleted at
	// that member (through is at most its store's last sequence, below
	// which every member's store agrees with the log). through < to (a
	// bounded answer, or a member behind)
	// means asking again from through+1. An error is retried with backoff
	// (no leader, the leader changed or is unreachable); one wrapping
	// ErrStopped ends the restore.
	Fetch(from, to uint64) (msgs []store.Msg, through uint64, err error)
}

// ErrStopped ends a catch-up: the FSM or its fetcher is closing. Restore
// then fails, and raft installs the snapshot again later.
var ErrStopped = errors.New("stream: catch-up stopped")

// pendingFile holds, from the start of a version 2 restore until its index
// is marked applied, the snapshot being restored (the state alone): a
// crash in between resumes the restore at the next Open.
const pendingFile = "restore"

// Fetch backoff bounds.
const (
	fetchBackoffMin = 20 * time.Millisecond
	fetchBackoffMax = 2 * time.Second
)

func (f *FSM) pendingPath() string { return filepath.Join(f.dir, pendingFile) }

// Pending reports whether a restore from a version 2 snapshot is under way
// (its catch-up not complete): the store must not be served.
func (f *FSM) Pending() bool {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	return f.pending != nil
}

// FetchStats is what a replica's restores fetched since it opened.
type FetchStats struct {
	Msgs  uint64 // messages fetched from the leader
	Bytes uint64 // their subjects, headers and data
	// From and To are the range the last restore lacked: the sequences
	// after the store's last (once reconciled) up to the snapshot's last.
	From, To uint64
}

// Fetched returns what this replica's restores fetched since it opened.
func (f *FSM) Fetched() FetchStats {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	return FetchStats{Msgs: f.fetchedMsgs.Load(), Bytes: f.fetchedBytes.Load(), From: f.lacked[0], To: f.lacked[1]}
}

// Stop makes a restore's catch-up in progress, or to come, give up with
// ErrStopped (the owner is closing; Close stops it too).
func (f *FSM) Stop() { f.stopOnce.Do(func() { close(f.stop) }) }

// readPending reads the pending restore file; nil when there is none.
func (f *FSM) readPending() (*snapState, error) {
	r, err := f.fs.Open(f.pendingPath())
	if err != nil {
		return nil, nil
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("stream: %s: read %s: %w", f.dir, pendingFile, err)
	}
	s, err := readState(b)
	if err != nil {
		// Written whole before it is renamed into place: damage, not a
		// torn write.
		return nil, fmt.Errorf("stream: %s: %s: %w", f.dir, pendingFile, err)
	}
	return &s, nil
}

// writePending makes s the pending restore, durably.
func (f *FSM) writePending(s *snapState) error {
	tmp := f.pendingPath() + ".tmp"
	w, err := f.fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("stream: %s: pending restore: %w", f.dir, err)
	}
	_, err = w.Write(s.encode())
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.fs.Rename(tmp, f.pendingPath())
	}
	if err == nil {
		err = f.fs.SyncDir(f.dir)
	}
	if err != nil {
		return fmt.Errorf("stream: %s: pending restore: %w", f.dir, err)
	}
	return nil
}

// dropPending removes the pending restore file (its index is marked
// applied, or a version 1 restore replaced the store).
func (f *FSM) dropPending() error {
	if _, err := f.fs.Stat(f.pendingPath()); err != nil {
		return nil
	}
	if err := f.fs.Remove(f.pendingPath()); err != nil {
		return fmt.Errorf("stream: %s: drop pending restore: %w", f.dir, err)
	}
	return f.fs.SyncDir(f.dir)
}

// restoreState restores a version 2 snapshot: it records it as pending,
// then reconciles the store with it (resume).
func (f *FSM) restoreState(s snapState) error {
	if f.fetch == nil {
		return fmt.Errorf("stream: restore %s: a snapshot without messages (version 2) needs a fetcher", f.dir)
	}
	if err := f.writePending(&s); err != nil {
		return err
	}
	f.pmu.Lock()
	f.pending = &s
	f.pmu.Unlock()
	return f.resume()
}

// resume completes the pending restore, if any: the store is reconciled
// with the snapshot's state (messages below its first and those it lists
// as deleted removed, the ones after the store's last fetched from the
// leader, at their sequences and times), then the snapshot's index is
// marked applied and the pending file removed. Every step is idempotent,
// so a crash anywhere resumes from the store as it is. It retries the
// fetch until it succeeds or the FSM closes (ErrStopped).
func (f *FSM) resume() error {
	if !f.Pending() {
		return nil
	}
	f.busy.Lock()
	defer f.busy.Unlock()
	f.pmu.Lock()
	s := f.pending
	f.pmu.Unlock()
	if s == nil {
		return nil
	}
	fail := func(err error) error {
		return fmt.Errorf("stream: restore %s from the snapshot at index %d: %w", f.dir, s.index, err)
	}
	if f.failed != nil || f.Store().State().LastSeq > s.last {
		// A store that diverged, or one ahead of the snapshot, cannot be
		// reconciled: it is rebuilt from nothing, all fetched.
		if err := f.wipe(); err != nil {
			return fail(err)
		}
		f.failed = nil
	}
	st := f.Store()
	if err := f.trim(st, s); err != nil {
		return fail(err)
	}
	f.pmu.Lock()
	f.lacked = [2]uint64{st.State().LastSeq + 1, s.last}
	f.pmu.Unlock()
	if err := f.fill(st, s); err != nil {
		return fail(err)
	}
	if err := st.SkipTo(s.last + 1); err != nil {
		return fail(err)
	}
	if err := st.Sync(); err != nil {
		return fail(err)
	}
	if err := f.mw.write(mark{Index: s.index, LastSeq: s.last, LastTS: s.lastTS}); err != nil {
		return fail(err)
	}
	f.seq, f.have = s.last, s.last
	f.lastTS.Store(s.lastTS)
	f.applied.Store(s.index)
	f.sub = 0
	f.pmu.Lock()
	f.pending = nil
	f.pmu.Unlock()
	return f.dropPending()
}

// wipe replaces the store with an empty one.
func (f *FSM) wipe() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.st.Close(); err != nil {
		return err
	}
	if err := f.fs.RemoveAll(f.storeDir()); err != nil {
		return err
	}
	st, err := wal.Open(f.storeDir(), f.opts)
	if err != nil {
		return err
	}
	f.st = st
	return nil
}

// trim removes what the store holds that the snapshot's state does not:
// the messages below its first sequence, and those it lists as deleted.
func (f *FSM) trim(st *wal.Store, s *snapState) error {
	if s.first > 0 {
		if _, err := st.Compact(s.first); err != nil {
			return fmt.Errorf("compact to %d: %w", s.first, err)
		}
	}
	have := st.State().LastSeq
	var m store.Msg
	for _, r := range s.deleted {
		for seq := r.first; seq <= min(r.last(), have); seq = m.Seq + 1 {
			err := st.LoadNext("", seq, &m)
			if errors.Is(err, store.ErrEOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("read from %d: %w", seq, err)
			}
			if m.Seq > r.last() {
				break
			}
			if err := st.Delete(m.Seq, false); err != nil {
				return fmt.Errorf("delete %d: %w", m.Seq, err)
			}
		}
	}
	return st.Sync()
}

// fill fetches the sequences after the store's last up to the snapshot's
// last from the leader and stores them; each answer is made durable before
// the next question, so a crash loses at most the last one.
func (f *FSM) fill(st *wal.Store, s *snapState) error {
	backoff := fetchBackoffMin
	for {
		have := st.State().LastSeq
		if have >= s.last {
			return nil
		}
		select {
		case <-f.stop:
			return ErrStopped
		default:
		}
		msgs, through, err := f.fetch.Fetch(have+1, s.last)
		if err == nil {
			err = checkAnswer(msgs, have+1, through, s.last)
		}
		if errors.Is(err, ErrStopped) {
			return err
		}
		if err == nil && through > have {
			if err := f.storeFetched(st, s, msgs, through); err != nil {
				return err
			}
			backoff = fetchBackoffMin
			continue
		}
		// No answer, a bad one, or a leader behind: wait and ask again.
		select {
		case <-f.stop:
			return ErrStopped
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, fetchBackoffMax)
	}
}

// checkAnswer checks that a fetch answer for [from, to] is in order and
// inside what it covers.
func checkAnswer(msgs []store.Msg, from, through, to uint64) error {
	if through > to {
		return fmt.Errorf("fetch answer covers up to %d, asked up to %d", through, to)
	}
	next := from
	for _, m := range msgs {
		if m.Seq < next || m.Seq > through {
			return fmt.Errorf("fetch answer holds message %d outside [%d, %d] or out of order", m.Seq, next, through)
		}
		next = m.Seq + 1
	}
	return nil
}

// storeFetched appends fetched messages at their sequences and times (the
// sequences between them, and up to through, are deleted ones), then
// makes them durable.
func (f *FSM) storeFetched(st *wal.Store, s *snapState, msgs []store.Msg, through uint64) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var werr error
	for i := range msgs {
		m := &msgs[i]
		if s.isDeleted(m.Seq) {
			continue
		}
		if err := st.SkipTo(m.Seq); err != nil {
			return err
		}
		f.now.Store(m.Time)
		want := m.Seq
		wg.Add(1)
		if err := st.AppendAsync(m.Subject, m.Header, m.Data, func(got uint64, _ int64, err error) {
			if err == nil && got != want {
				err = fmt.Errorf("%w: fetched message %d stored as %d", ErrDiverged, want, got)
			}
			if err != nil {
				mu.Lock()
				werr = cmpErr(werr, err)
				mu.Unlock()
			}
			wg.Done()
		}); err != nil {
			wg.Done()
			wg.Wait()
			return fmt.Errorf("store fetched message %d: %w", m.Seq, err)
		}
		f.fetchedMsgs.Add(1)
		f.fetchedBytes.Add(uint64(len(m.Subject) + len(m.Header) + len(m.Data)))
	}
	wg.Wait()
	if werr != nil {
		return werr
	}
	if err := st.SkipTo(through + 1); err != nil {
		return err
	}
	return st.Sync()
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// Adopt takes up a snapshot that raft counts as applied and the replica
// never restored (a crash after raft stored an installed snapshot, before
// Restore recorded it; raft, configured with NoSnapshotRestoreOnStart,
// will not hand it over again). A version 2 snapshot becomes the pending
// restore, completed before anything else is applied; a version 1 one is
// restored at once. Call it before raft starts.
func (f *FSM) Adopt(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	s, v2, err := peekState(br)
	if err != nil {
		return fmt.Errorf("stream: adopt a snapshot in %s: %w", f.dir, err)
	}
	if !v2 {
		return f.Restore(io.NopCloser(br))
	}
	if s.index <= f.applied.Load() {
		return nil
	}
	if err := f.writePending(&s); err != nil {
		return err
	}
	f.pmu.Lock()
	f.pending = &s
	f.pmu.Unlock()
	return nil
}

// peekState reads a version 2 snapshot whole from br; v2 is false, and
// nothing read, when br holds another version (then left to rebuild).
func peekState(br *bufio.Reader) (s snapState, v2 bool, err error) {
	hb, err := br.Peek(snapHeader)
	if err != nil {
		return s, false, fmt.Errorf("header: %w", err)
	}
	if string(hb[:4]) != snapMagic || binary.LittleEndian.Uint32(hb[4:]) != snapVersion2 {
		return s, false, nil
	}
	h := append([]byte(nil), hb...)
	if _, err := br.Discard(snapHeader); err != nil {
		return s, true, err
	}
	s, err = decodeState(h, br)
	return s, true, err
}
