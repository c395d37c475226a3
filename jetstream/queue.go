package jetstream

import "github.com/jetwal/jetwal/jetstream/internal/queue"

// workQueue is a queue.Queue under the names this package calls it by
// (api.go keys its requests with submitKey).
type workQueue struct{ q *queue.Queue }

func newWorkQueue(limit int) *workQueue { return &workQueue{q: queue.New(limit)} }

// submit queues fn under the empty key; false once closed or full.
func (w *workQueue) submit(fn func()) bool { return w.q.Submit(fn) }

// submitKey queues fn after the functions of key; false once closed or full.
func (w *workQueue) submitKey(key string, fn func()) bool { return w.q.SubmitKey(key, fn) }

// close runs what is queued and waits for it; later submits are refused.
func (w *workQueue) close() { w.q.Close() }
