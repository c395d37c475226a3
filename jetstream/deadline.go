package jetstream

import (
	"sync"
	"time"
)

// deadlineTimer is the decision the stream's expiry timer (ttl.go) and its
// schedule timer (schedule.go) share: a time.AfterFunc armed for the
// earliest deadline asked for, its wait clamped to [minWait, maxWait],
// never moved later than the deadline already armed, not armed before
// start or after stop, and not armed while a pass runs (the pass re-arms
// when it ends).
//
// The owner's lock (mu) guards it: every method but run is called with mu
// held; run, the timer's function, takes mu itself and calls pass without
// it. The owner fills in the configuration once, under mu, before the
// first call.
type deadlineTimer struct {
	// configuration
	mu               sync.Locker
	minWait, maxWait time.Duration
	// pass runs when the timer fires, without mu, and returns the next
	// deadline it knows of (unix ns; 0: none).
	pass func(now time.Time) (next int64)
	// nextLocked, if set, is asked with mu held right after a pass for
	// the next deadline too: the owner's own entries, which mu guards, so
	// nothing asked for after it is read goes unarmed.
	nextLocked func() int64
	// keep remembers a deadline asked for before start or while a pass
	// runs and arms it after (without it such a deadline is dropped: the
	// owner reports it again from nextLocked or at start).
	keep bool

	// state, guarded by mu
	timer    *time.Timer
	deadline int64 // when timer fires (unix ns); 0: not armed
	pending  int64 // earliest deadline kept while not armable (0: none)
	running  bool  // a pass runs; it re-arms when done
	started  bool  // the timer may run
	stopped  bool  // for good
}

// armLocked makes the timer fire by at (unix ns), unless it already fires
// sooner; before start or while a pass runs the deadline is kept (keep) or
// dropped.
func (t *deadlineTimer) armLocked(at int64) {
	if t.stopped {
		return
	}
	if !t.started || t.running {
		if t.keep && (t.pending == 0 || at < t.pending) {
			t.pending = at
		}
		return
	}
	wait := min(max(time.Until(time.Unix(0, at)), t.minWait), t.maxWait)
	deadline := time.Now().Add(wait).UnixNano()
	if t.deadline != 0 && deadline >= t.deadline {
		return
	}
	t.deadline = deadline
	if t.timer == nil {
		t.timer = time.AfterFunc(wait, t.run)
		return
	}
	t.timer.Reset(wait)
}

// startLocked lets the timer run, armed for at (0: not armed), dropping
// what was kept before. Idempotent.
func (t *deadlineTimer) startLocked(at int64) {
	if t.started {
		return
	}
	t.started = true
	t.pending = 0
	if at != 0 {
		t.armLocked(at)
	}
}

// stopLocked disarms the timer for good.
func (t *deadlineTimer) stopLocked() {
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
}

// run is the timer's function: one pass, then re-arm for the earliest of
// what the pass reports, what was kept meanwhile and what nextLocked says.
func (t *deadlineTimer) run() {
	t.mu.Lock()
	if t.stopped || t.running || !t.started {
		t.mu.Unlock()
		return
	}
	t.running, t.deadline = true, 0
	t.mu.Unlock()

	next := t.pass(time.Now())

	t.mu.Lock()
	defer t.mu.Unlock()
	t.running = false
	next = earliestDeadline(next, t.pending)
	t.pending = 0
	if t.nextLocked != nil {
		next = earliestDeadline(next, t.nextLocked())
	}
	if next == 0 {
		return // nothing due later: unarmed until asked
	}
	t.armLocked(next)
}

// earliestDeadline is the earlier of two deadlines, 0 meaning none.
func earliestDeadline(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
