package apiserver

import (
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
)

// Queue names the work queue an operation runs on.
type Queue uint8

const (
	// Mgmt is the queue of the management operations.
	Mgmt Queue = iota
	// Gets is the queue of message reads (STREAM.MSG.GET, DIRECT.GET), so
	// that they do not wait behind slow management requests.
	Gets
)

// Handler serves one API operation ("STREAM.INFO", "DIRECT.GET", …).
type Handler struct {
	Op    string
	Queue Queue
	Fn    func(r *Request)
}

// Register routes $JS.API.<op>[.<args>] to fn, run on queue, replacing any
// earlier handler of op. Operations are matched on whole tokens, longest
// first. A nil fn marks an operation that a subscription of its own
// serves, so that the caller of Route leaves it alone.
func (s *Server) Register(op string, queue Queue, fn func(r *Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[op] = Handler{Op: op, Queue: queue, Fn: fn}
}

// maxOpTokens is the most tokens an operation name has (STREAM.MSG.GET).
const maxOpTokens = 3

// Route finds the handler for an API subject; ok is false for an unknown
// operation, which nats-server leaves unanswered.
func (s *Server) Route(subj string) (h Handler, args string, ok bool) {
	rest := strings.TrimPrefix(subj, api.Prefix)
	if len(rest) == len(subj) {
		return h, "", false
	}
	// Offsets of the first maxOpTokens token ends.
	var ends [maxOpTokens]int
	n := 0
	for i := 0; i < len(rest) && n < maxOpTokens; i++ {
		if rest[i] == '.' {
			ends[n] = i
			n++
		}
	}
	if n < maxOpTokens {
		ends[n] = len(rest)
		n++
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := n - 1; k >= 0; k-- {
		if h, ok = s.handlers[rest[:ends[k]]]; ok {
			if ends[k] < len(rest) {
				args = rest[ends[k]+1:]
			}
			return h, args, true
		}
	}
	return h, "", false
}
