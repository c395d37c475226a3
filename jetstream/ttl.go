package jetstream

import (
	"container/heap"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// Per-message TTLs (a stream with allow_msg_ttl; the Nats-TTL header). A
// stored message with a TTL goes into the stream's expiry heap, ordered by
// the time it expires; the stream's expiry timer (expiryTimer) fires at the
// earliest deadline, pops what is due and deletes it from the store, which
// writes a durable tombstone, then re-arms for the next deadline: a message
// goes at its deadline, as with nats-server, not at the next tick of a
// poll. The heap survives a restart in ttl.dat (ttl_file.go) plus the
// messages stored after it was written.
//
// As in nats-server, "never" means no per-message expiry; unlike
// nats-server, max_age still applies to such a message.

// errBadTTL is a Nats-TTL value nats-server would refuse.
var errBadTTL = errors.New("invalid per-message TTL")

// maxMsgTTL is the longest TTL kept: a larger number of seconds (up to
// 2^63-1, which nats-server stores) expires after it, some 146 years, so
// that a deadline never overflows.
const maxMsgTTL = time.Duration(1 << 62)

// parseMsgTTL reads a Nats-TTL value as nats-server does: "never" (-1), a
// Go duration of at least a second (whole seconds count), or a number of
// seconds written in decimal digits only (0: no TTL; a sign, as in "+5",
// is refused like any other non-digit).
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
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return 0, errBadTTL
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errBadTTL // past int64: nats-server's count wraps negative
	}
	if secs > int64(maxMsgTTL/time.Second) {
		return maxMsgTTL, nil
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

// next is the earliest deadline in the heap (0: none).
func (h ttlHeap) next() int64 {
	if len(h) == 0 {
		return 0
	}
	return h[0].at
}

// expireTTLs deletes the messages whose TTL has passed and, on a stream
// with subject delete markers, those past max_age (the expiry timer calls
// it). It returns when the next message of the latter kind passes max_age
// (0: none, or markers off).
func (s *stream) expireTTLs(now time.Time) (nextAged int64) {
	s.pmu.Lock()
	due := s.ttls.due(now.UnixNano())
	if len(due) > 0 {
		s.ttlChanged = true
	}
	s.pmu.Unlock()
	if ok, next := s.expireWithMarkers(now, due); ok { // stream_markers.go
		return next
	}
	for _, seq := range due {
		// A message already gone (deleted, purged, aged out) is fine.
		if err := s.store.Delete(seq, false); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
			s.env.log.Warn("removing an expired message", "stream", s.name, "seq", seq, "error", err)
		}
	}
	return 0
}

// expiryTimer fires a stream's expiries at their deadlines: the earliest
// per-message TTL and, on a stream with subject delete markers (which
// applies max_age itself, stream_markers.go), the moment its oldest message
// passes max_age. Without markers max_age is the store's, which has a timer
// of its own. The timing is deadlineTimer's (deadline.go): one pass runs at
// a time; a deadline asked for while one runs, or before start, is kept
// and armed when it can be. mu is a leaf lock: it is taken under pmu (from
// onAppended) and never held while taking another.
type expiryTimer struct {
	mu   sync.Mutex
	dt   deadlineTimer // guarded by mu; set up by timerLocked
	pass func(now time.Time) (next int64)
}

// expiryMinWait bounds how often the timer fires (a burst of deadlines a
// few microseconds apart is one pass); expiryMaxWait how long it sleeps at
// once (a far deadline is waited for in steps, so a clock that jumps is
// caught up with).
const (
	expiryMinWait = 5 * time.Millisecond
	expiryMaxWait = time.Hour
)

// timerLocked is the deadline timer, set up on first use. Caller holds mu.
// A pass that leaves no deadline leaves it unarmed: every path that adds
// one arms it (a publish or batch commit with a TTL, a message on a
// stream whose max_age runs here, a config change, the start after a
// restart, which finds what recovery loaded). Before, it fired again 5 ms
// later, forever, on every served stream.
func (t *expiryTimer) timerLocked() *deadlineTimer {
	if t.dt.mu == nil {
		t.dt = deadlineTimer{
			mu:      &t.mu,
			minWait: expiryMinWait,
			maxWait: expiryMaxWait,
			pass:    func(now time.Time) int64 { return t.pass(now) },
			keep:    true,
		}
	}
	return &t.dt
}

// arm makes the timer fire by at (unix ns), unless it already fires sooner.
func (t *expiryTimer) arm(at int64) {
	if at <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pass == nil {
		return
	}
	t.timerLocked().armLocked(at)
}

// start lets the timer run (the stream serves its subjects) with a first
// pass at once: what expired while the server was down goes now.
// Idempotent.
func (t *expiryTimer) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	dt := t.timerLocked()
	if t.pass == nil {
		dt.startLocked(0) // nothing to run
		return
	}
	dt.startLocked(time.Now().UnixNano())
}

// stop disarms the timer for good (the stream is closing).
func (t *expiryTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timerLocked().stopLocked()
}

// expiryPass is the stream's expiry timer pass: it expires what is due and
// returns the next deadline (0: none).
func (s *stream) expiryPass(now time.Time) int64 {
	nextAged := s.expireTTLs(now)
	s.pmu.Lock()
	next := s.ttls.next()
	s.pmu.Unlock()
	if nextAged != 0 && (next == 0 || nextAged < next) {
		next = nextAged
	}
	return next
}

// armAgeExpiry arms the expiry timer for a message stored at ts on a
// stream that applies max_age itself (markers on); nothing otherwise.
func (s *stream) armAgeExpiry(ts int64) {
	if a := s.markerAge.Load(); a > 0 {
		s.exp.arm(ts + a)
	}
}

// setMarkerAge records max_age for armAgeExpiry when the stream applies it
// itself (subject delete markers on), 0 otherwise, and has the timer look
// again (a config change may move the next deadline).
func (s *stream) setMarkerAge(cfg *api.StreamConfig) {
	a := int64(0)
	if cfg.SubjectDeleteMarkerTTL > 0 && cfg.MaxAge > 0 {
		a = int64(cfg.MaxAge)
	}
	s.markerAge.Store(a)
	s.exp.arm(time.Now().UnixNano())
}
