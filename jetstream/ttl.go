package jetstream

import (
	"container/heap"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jetwal/jetwal/store"
)

// Per-message TTLs (a stream with allow_msg_ttl; the Nats-TTL header). A
// stored message with a TTL goes into the stream's expiry heap, ordered by
// the time it expires; the sweep (once a second) pops what is due and
// deletes it from the store, which writes a durable tombstone. The heap
// survives a restart in ttl.dat (ttl_file.go) plus the messages stored
// after it was written.
//
// As in nats-server, "never" means no per-message expiry; unlike
// nats-server, max_age still applies to such a message.

// errBadTTL is a Nats-TTL value nats-server would refuse.
var errBadTTL = errors.New("invalid per-message TTL")

// parseMsgTTL reads a Nats-TTL value as nats-server does: "never" (-1), a
// Go duration of at least a second (whole seconds count), or a number of
// seconds (0: no TTL).
func parseMsgTTL(v string) (time.Duration, error) {
	if strings.EqualFold(v, "never") {
		return -1, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < time.Second {
			return 0, errBadTTL
		}
		return d.Truncate(time.Second), nil
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 || secs > int64(1<<62/time.Second) {
		return 0, errBadTTL
	}
	return time.Duration(secs) * time.Second, nil
}

// ttlEntry is one message's expiry.
type ttlEntry struct {
	at  int64 // unix ns
	seq uint64
}

// ttlHeap is a min-heap of expiries; the stream guards it with pmu.
type ttlHeap []ttlEntry

func (h ttlHeap) Len() int           { return len(h) }
func (h ttlHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h ttlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ttlHeap) Push(x any)        { *h = append(*h, x.(ttlEntry)) }
func (h *ttlHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (h *ttlHeap) add(at int64, seq uint64) { heap.Push(h, ttlEntry{at: at, seq: seq}) }

// due pops the entries expired at now.
func (h *ttlHeap) due(now int64) []uint64 {
	var out []uint64
	for len(*h) > 0 && (*h)[0].at <= now {
		out = append(out, heap.Pop(h).(ttlEntry).seq)
	}
	return out
}

// expireTTLs deletes the messages whose TTL has passed (the sweep calls it).
func (s *stream) expireTTLs(now time.Time) {
	s.pmu.Lock()
	due := s.ttls.due(now.UnixNano())
	if len(due) > 0 {
		s.ttlChanged = true
	}
	s.pmu.Unlock()
	if s.expireWithMarkers(now, due) { // stream_markers.go
		return
	}
	for _, seq := range due {
		// A message already gone (deleted, purged, aged out) is fine.
		if err := s.store.Delete(seq, false); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
			s.js.log.Warn("removing an expired message", "stream", s.name, "seq", seq, "error", err)
		}
	}
}
