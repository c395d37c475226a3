package cluster

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/jetwal/jetwal/raftstore/stream"
	"github.com/jetwal/jetwal/store"
)

// Group commit. A replicated stream's writes go through one queue, in the
// order they were made; one goroutine proposes what is queued, the
// appends that queued up together as one OpAppendBatch entry, each other
// write as an entry of its own, with at most batchInflight proposals not
// yet applied. A publish is held (add with hold) until the publisher's
// connection has handled the rest of what it read with it
// (server.Msg.Defer calls flush), so the messages of one input chunk, one
// to some hundreds, leave as one entry: a lone publisher's message goes
// at once, alone, and a client sending a window of asynchronous
// publishes has them proposed together instead of the first alone and
// the rest after it commits. Under load the messages that arrive while
// the proposals in flight commit make the next batch, so raft's per-entry
// costs (encoding, the log record, the pipeline, the follower's decode,
// the FSM's result) are paid once per batch. A second goroutine waits for the proposals in
// order and calls each message's callback with its own result.
const (
	batchMaxMsgs  = 512
	batchMaxBytes = 1 << 20
	batchInflight = 3
	// queueMaxMsgs bounds what waits to be proposed: an appender waits
	// for room beyond it (as raft.Apply made it wait for raft's queue).
	queueMaxMsgs = 8 * batchMaxMsgs
)

// errBatchResult: an entry's result did not match what was proposed.
var errBatchResult = errors.New("cluster: unexpected apply result")

// opResult is the outcome of a write proposed as an entry of its own.
type opResult struct {
	res *stream.Result
	err error
}

// proposal is one entry to propose: a batch of appends, or another write.
type proposal struct {
	batch stream.Batch
	dones []store.AppendDone
	op    []byte        // a non-append entry; nil for a batch
	opRes chan opResult // its outcome (buffered)
	f     raft.ApplyFuture
	held  bool  // gathering appends that asked to be held: not proposed before flush
	err   error // not proposed: the error every write in it gets
}

func (p *proposal) msgs() int { return len(p.dones) }

type batcher struct {
	apply func([]byte) raft.ApplyFuture
	name  string

	mu       sync.Mutex
	work     sync.Cond // the proposer: something queued, room in flight, or closed
	room     sync.Cond // appenders: the queue has room again, or closed
	queue    []*proposal
	queued   int // messages in queue
	inflight int
	closed   bool
	lastSize int    // about the largest of the recent batches: the next one's first guess
	drained  func() // told when the queue drains (drain.go)

	toComplete chan *proposal // proposer → completer, in log order
	exited     chan struct{}  // the completer is done
}

func newBatcher(name string, apply func([]byte) raft.ApplyFuture) *batcher {
	b := &batcher{apply: apply, name: name, toComplete: make(chan *proposal, batchInflight+1), exited: make(chan struct{})}
	b.work.L = &b.mu
	b.room.L = &b.mu
	go b.propose()
	go b.complete()
	return b
}

// add queues a message stamped ts; done is called with its result. Held
// (hold), it joins the batch being gathered without waking the proposer,
// unless that batch is full: flush (or the next write, or a proposal's
// completion) sends it.
func (b *batcher) add(subject string, hdr, data []byte, ts int64, done store.AppendDone, hold bool) error {
	size := stream.BatchMsgSize(subject, hdr, data)
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.queued >= queueMaxMsgs {
		b.room.Wait()
	}
	if b.closed {
		return store.ErrClosed
	}
	var p *proposal
	if n := len(b.queue); n > 0 {
		if last := b.queue[n-1]; last.op == nil && last.msgs() < batchMaxMsgs && last.batch.Size()+size <= batchMaxBytes {
			p = last
		}
	}
	if p == nil {
		b.unhold()
		p = &proposal{}
		// As large as the batch before (load changes slowly), so that
		// a batch is not copied as it grows.
		p.batch.Grow(min(max(size*8, b.lastSize), batchMaxBytes))
		b.queue = append(b.queue, p)
	}
	p.batch.Add(subject, hdr, data, ts)
	p.dones = append(p.dones, done)
	b.queued++
	if hold {
		p.held = true
	} else {
		b.unhold()
	}
	return nil
}

// flush lets what add held be proposed.
func (b *batcher) flush() {
	b.mu.Lock()
	b.unhold()
	b.mu.Unlock()
}

// unhold lets every queued batch be proposed and wakes the proposer.
// Only the last one can be held. Called with mu held.
func (b *batcher) unhold() {
	if n := len(b.queue); n > 0 {
		b.queue[n-1].held = false
	}
	b.work.Signal()
}

// write queues a non-append entry and waits for its outcome.
func (b *batcher) write(entry []byte) (*stream.Result, error) {
	p := &proposal{op: entry, opRes: make(chan opResult, 1)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, store.ErrClosed
	}
	b.unhold() // the op waits for the appends before it: they must go
	b.queue = append(b.queue, p)
	b.work.Signal()
	b.mu.Unlock()
	r := <-p.opRes
	return r.res, r.err
}

// close stops taking writes and returns once every queued write has had
// its outcome: those proposed, once raft answers them (the caller shuts
// raft down, so it does); the others fail with store.ErrClosed.
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	b.work.Broadcast()
	b.room.Broadcast()
	b.mu.Unlock()
	<-b.exited
}

// propose hands queued entries to raft, in order, while fewer than
// batchInflight are in flight.
func (b *batcher) propose() {
	b.mu.Lock()
	for {
		for !b.closed && (len(b.queue) == 0 || b.queue[0].held || b.inflight >= batchInflight) {
			b.work.Wait()
		}
		if b.closed {
			rest := b.queue
			b.queue, b.queued = nil, 0
			b.mu.Unlock()
			for _, p := range rest {
				p.err = store.ErrClosed
				b.toComplete <- p
			}
			close(b.toComplete)
			return
		}
		p := b.queue[0]
		if p.op == nil {
			// The largest of the recent batches, fading by an eighth a
			// batch: sized from the last one alone, a batch larger
			// than the one before it was copied as it grew (on the
			// leader under load, more bytes allocated growing batches
			// than in the batches themselves).
			b.lastSize = max(p.batch.Size(), b.lastSize-b.lastSize/8)
		}
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.queued -= p.msgs()
		b.inflight++
		b.room.Broadcast()
		b.mu.Unlock()
		if p.op != nil {
			p.f = b.apply(p.op)
		} else {
			p.f = b.apply(p.batch.Take())
		}
		b.toComplete <- p
		b.mu.Lock()
	}
}

// complete waits for each proposal in log order and gives every write in
// it its outcome.
func (b *batcher) complete() {
	defer close(b.exited)
	for p := range b.toComplete {
		if p.f != nil {
			b.notifyDrained(p)
		}
		b.finish(p)
		if p.f != nil {
			b.mu.Lock()
			b.inflight--
			b.work.Signal()
			b.mu.Unlock()
		}
	}
}

func (b *batcher) finish(p *proposal) {
	err := p.err
	var resp any
	if err == nil {
		if ferr := p.f.Error(); ferr != nil {
			err = fmt.Errorf("cluster: stream %s: %w", b.name, ferr)
		} else {
			resp = p.f.Response()
		}
	}
	if p.op != nil {
		r := opResult{err: err}
		if err == nil {
			var ok bool
			if r.res, ok = resp.(*stream.Result); !ok {
				r.err = errBatchResult
			}
		}
		p.opRes <- r
		return
	}
	var msgs []stream.Result
	if err == nil {
		switch r := resp.(type) {
		case *stream.BatchResult:
			msgs = r.Msgs
		case *stream.Result:
			// The entry as a whole failed (the replica's FSM has failed).
			err = r.Err
			if err == nil {
				err = errBatchResult
			}
		default:
			err = errBatchResult
		}
	}
	for i, done := range p.dones {
		switch {
		case err != nil:
			done(0, 0, err)
		case i < len(msgs):
			done(msgs[i].Seq, msgs[i].Time, msgs[i].Err)
		default:
			done(0, 0, errBatchResult)
		}
	}
}
