// Package queue is the work queue of package jetstream (its API workers,
// the publish path's follow-up work, confirmed acks), a leaf: it imports
// nothing of the module.
package queue

import "sync"

// Queue runs submitted functions in submission order per key, on
// goroutines of its own: functions of one key run one at a time, in order;
// functions of different keys may run at the same time, up to maxLanes
// keys at once. Submitting never blocks, so subscription handlers (which
// run on a publisher's goroutine) can hand work to it. The management API
// keys its requests by stream, so that one slow request (a purge of a huge
// stream, say) holds up only the requests for the same stream. A queue with
// a limit refuses work beyond it, as nats-server drops API requests past
// its queue limit rather than growing without bound.
type Queue struct {
	limit int // most queued items over all keys; 0 = unlimited
	sem   chan struct{}

	mu      sync.Mutex // guards the fields below
	lanes   map[string]*lane
	queued  int
	closed  bool
	running sync.WaitGroup // one per lane goroutine
}

// lane is the queued work of one key; a goroutine drains it while it is
// non-empty.
type lane struct {
	items []func()
}

// maxLanes bounds how many keys run at once.
const maxLanes = 8

// New returns a Queue that holds at most limit queued functions over all
// keys (0: no limit).
func New(limit int) *Queue {
	return &Queue{limit: limit, sem: make(chan struct{}, maxLanes), lanes: make(map[string]*lane)}
}

// Submit queues fn under the empty key.
func (q *Queue) Submit(fn func()) bool { return q.SubmitKey("", fn) }

// SubmitKey queues fn after the functions of key. It reports false,
// dropping fn, once the queue is closed or full.
func (q *Queue) SubmitKey(key string, fn func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || (q.limit > 0 && q.queued >= q.limit) {
		return false
	}
	q.queued++
	if l := q.lanes[key]; l != nil {
		l.items = append(l.items, fn) // its goroutine will get to it
		return true
	}
	l := &lane{items: []func(){fn}}
	q.lanes[key] = l
	q.running.Add(1)
	go q.drain(key, l)
	return true
}

// drain runs key's functions until its lane is empty, then retires it.
func (q *Queue) drain(key string, l *lane) {
	defer q.running.Done()
	q.sem <- struct{}{}
	defer func() { <-q.sem }()
	for {
		q.mu.Lock()
		if len(l.items) == 0 {
			delete(q.lanes, key)
			q.mu.Unlock()
			return
		}
		fn := l.items[0]
		l.items[0] = nil
		l.items = l.items[1:]
		q.queued--
		q.mu.Unlock()
		fn()
	}
}

// Close runs what is queued, then returns once every lane is done. Later
// submits are refused. Closing again returns at once.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.running.Wait()
}
