package cluster

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/raftstore/stream"
	"github.com/jetwal/jetwal/store"
)

// view is a replicated stream's store.StreamStore: reads from this
// server's replica, writes proposed to the group (only the leader's
// succeed). Close and Remove detach the view; the replica stays (see
// Replica.Close and Remove).
type view struct {
	r      *Replica
	closed atomic.Bool
}

var _ store.StreamStore = (*view)(nil)

// ErrTruncate is returned by Truncate: a replicated stream's history only
// changes through its log.
var ErrTruncate = errors.New("cluster: a replicated stream cannot be truncated")

func (v *view) now() int64 { return max(time.Now().UnixNano(), v.r.fsm.LastTime()) }

// apply proposes a non-append entry, in order with the appends queued
// before it, and waits for its result.
func (v *view) apply(entry []byte) (*stream.Result, error) {
	if v.closed.Load() {
		return nil, store.ErrClosed
	}
	return v.r.batch.write(entry)
}

// Append shares AppendAsync's queue (so the two keep their order) and
// waits for the message's result.
func (v *view) Append(subject string, hdr, data []byte) (uint64, int64, error) {
	type result struct {
		seq uint64
		ts  int64
		err error
	}
	ch := make(chan result, 1)
	if err := v.AppendAsync(subject, hdr, data, func(seq uint64, ts int64, err error) { ch <- result{seq, ts, err} }); err != nil {
		return 0, 0, err
	}
	r := <-ch
	return r.seq, r.ts, r.err
}

// AppendAt is Append with the message's time given (a restore keeps its
// messages' times; every replica stamps the later of it and the last).
func (v *view) AppendAt(subject string, hdr, data []byte, ts int64) (uint64, int64, error) {
	if v.closed.Load() {
		return 0, 0, store.ErrClosed
	}
	type result struct {
		seq uint64
		ts  int64
		err error
	}
	ch := make(chan result, 1)
	if err := v.r.batch.add(subject, hdr, data, ts, func(seq uint64, ts int64, err error) { ch <- result{seq, ts, err} }, false); err != nil {
		return 0, 0, err
	}
	r := <-ch
	return r.seq, r.ts, r.err
}

// AppendAtAsync is AppendAt without the wait: done is called with the
// result, in log order (a conversion's copy: jetstream/cluster_convert.go).
func (v *view) AppendAtAsync(subject string, hdr, data []byte, ts int64, done store.AppendDone) error {
	if v.closed.Load() {
		return store.ErrClosed
	}
	return v.r.batch.add(subject, hdr, data, ts, done, false)
}

// AppendAsync queues the message for the replica's next batch entry
// (batcher.go); done is called with its result, in log order.
func (v *view) AppendAsync(subject string, hdr, data []byte, done store.AppendDone) error {
	if v.closed.Load() {
		return store.ErrClosed
	}
	return v.r.batch.add(subject, hdr, data, v.now(), done, false)
}

var _ store.HeldAppender = (*view)(nil)

// AppendAsyncHeld is AppendAsync without starting the batch: the messages
// that follow join it until Flush (store.HeldAppender).
func (v *view) AppendAsyncHeld(subject string, hdr, data []byte, done store.AppendDone) error {
	if v.closed.Load() {
		return store.ErrClosed
	}
	return v.r.batch.add(subject, hdr, data, v.now(), done, true)
}

// Flush starts the held appends' batch.
func (v *view) Flush() { v.r.batch.flush() }

func (v *view) st() store.StreamStore { return v.r.fsm.Store() }

func (v *view) Load(seq uint64, m *store.Msg) error { return v.st().Load(seq, m) }
func (v *view) LoadNext(filter string, start uint64, m *store.Msg) error {
	return v.st().LoadNext(filter, start, m)
}
func (v *view) LoadLast(filter string, m *store.Msg) error { return v.st().LoadLast(filter, m) }
func (v *view) LoadPrev(filter string, seq uint64, m *store.Msg) error {
	return v.st().LoadPrev(filter, seq, m)
}

func (v *view) Delete(seq uint64, erase bool) error {
	res, err := v.apply(stream.EncodeDelete(seq, erase))
	if err != nil {
		return err
	}
	return res.Err
}

func (v *view) Purge(filter string, upTo, keep uint64) (uint64, error) {
	res, err := v.apply(stream.EncodePurge(filter, upTo, keep))
	if err != nil {
		return 0, err
	}
	return res.N, res.Err
}

func (v *view) Compact(seq uint64) (uint64, error) {
	res, err := v.apply(stream.EncodeCompact(seq))
	if err != nil {
		return 0, err
	}
	return res.N, res.Err
}

// SkipTo makes next the stream's next sequence on every replica (a mirror
// over a gap in its origin; wal.Store.SkipTo).
func (v *view) SkipTo(next uint64) error {
	res, err := v.apply(stream.EncodeSkip(next))
	if err != nil {
		return err
	}
	return res.Err
}

func (v *view) Truncate(uint64) error { return ErrTruncate }

func (v *view) State() store.State            { return v.st().State() }
func (v *view) StateWithDeleted() store.State { return v.st().StateWithDeleted() }
func (v *view) SubjectsState(filter string) map[string]store.SubjectState {
	return v.st().SubjectsState(filter)
}
func (v *view) NumPending(start uint64, filter string, lastPerSubject bool) uint64 {
	return v.st().NumPending(start, filter, lastPerSubject)
}
func (v *view) SeqForTime(t time.Time) uint64 { return v.st().SeqForTime(t) }

// UpdateLimits applies to this replica only; the meta group carries a
// configuration change to every replica.
func (v *view) UpdateLimits(l store.Limits) error { return v.r.UpdateLimits(l) }

// Sync has nothing to do: what was committed is durable in the raft log.
func (v *view) Sync() error { return nil }

func (v *view) Close() error  { v.closed.Store(true); return nil }
func (v *view) Remove() error { v.closed.Store(true); return nil }
