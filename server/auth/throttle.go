package auth

import (
	"sync"
	"time"
)

// Throttle slows repeated login failures from one address: the first
// failure is answered at once, each further one within Window waits twice
// as long as the one before, starting at Base and capped at Max. A success
// or Window without failures forgets the address. The zero value uses the
// defaults below; it is safe for concurrent use.
type Throttle struct {
	Base, Max, Window time.Duration
	Now               func() time.Time // nil = time.Now

	mu struct {
		sync.Mutex
		// Guarded by the mutex above.
		fails map[string]failRecord
	}
}

// Throttle defaults.
const (
	DefaultThrottleBase   = 100 * time.Millisecond
	DefaultThrottleMax    = 2 * time.Second
	DefaultThrottleWindow = time.Minute
	maxThrottled          = 4096 // addresses remembered at once
)

type failRecord struct {
	n    int
	last time.Time
}

func (t *Throttle) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Throttle) params() (base, maxDelay, window time.Duration) {
	base, maxDelay, window = t.Base, t.Max, t.Window
	if base <= 0 {
		base = DefaultThrottleBase
	}
	if maxDelay <= 0 {
		maxDelay = DefaultThrottleMax
	}
	if window <= 0 {
		window = DefaultThrottleWindow
	}
	return base, maxDelay, window
}

// Failed records a failure from addr and returns how long to wait before
// answering it.
func (t *Throttle) Failed(addr string) time.Duration {
	base, maxDelay, window := t.params()
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.fails == nil {
		t.mu.fails = make(map[string]failRecord)
	}
	r, ok := t.mu.fails[addr]
	if !ok || now.Sub(r.last) > window {
		r = failRecord{}
		if len(t.mu.fails) >= maxThrottled {
			t.prune(now, window)
		}
	}
	r.n++
	r.last = now
	t.mu.fails[addr] = r
	if r.n < 2 {
		return 0
	}
	d := base
	for i := 2; i < r.n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// Succeeded forgets addr's failures.
func (t *Throttle) Succeeded(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.fails, addr)
}

// prune drops expired records, and if that is not enough, arbitrary ones,
// so an attacker with many addresses cannot grow the map without bound.
// Lock held.
func (t *Throttle) prune(now time.Time, window time.Duration) {
	for a, r := range t.mu.fails {
		if now.Sub(r.last) > window {
			delete(t.mu.fails, a)
		}
	}
	for a := range t.mu.fails {
		if len(t.mu.fails) < maxThrottled {
			break
		}
		delete(t.mu.fails, a)
	}
}
