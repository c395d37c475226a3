package jetstream

import "sync"

// workQueue runs submitted functions one at a time on its own goroutine, in
// submission order. Submitting never blocks, so subscription handlers (which
// run on a publisher's goroutine) can hand work to it. A queue with a limit
// refuses work beyond it, as nats-server drops API requests past its queue
// limit rather than growing without bound.
type workQueue struct {
	limit   int        // most queued items; 0 = unlimited
	mu      sync.Mutex // guards items and closed
	items   []func()
	closed  bool
	wake    chan struct{} // capacity 1: "items may be non-empty"
	stopped chan struct{} // closed when the goroutine has exited
}

func newWorkQueue(limit int) *workQueue {
	q := &workQueue{limit: limit, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go q.run()
	return q
}

// submit queues fn. It reports false, dropping fn, once the queue is closed
// or full.
func (q *workQueue) submit(fn func()) bool {
	q.mu.Lock()
	if q.closed || (q.limit > 0 && len(q.items) >= q.limit) {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, fn)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

func (q *workQueue) run() {
	defer close(q.stopped)
	var batch []func()
	for range q.wake {
		for {
			q.mu.Lock()
			batch, q.items = q.items, batch[:0]
			closed := q.closed
			q.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for i, fn := range batch {
				fn()
				batch[i] = nil
			}
		}
	}
}

// close runs what is queued, then stops the goroutine and waits for it.
func (q *workQueue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		<-q.stopped
		return
	}
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.stopped
}
