package jetstream

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testDeadlines is a deadlineTimer under test with a pass that counts.
type testDeadlines struct {
	mu     sync.Mutex
	dt     deadlineTimer
	passes atomic.Int32
	next   atomic.Int64 // what the pass reports
	ran    chan struct{}
}

func newTestDeadlines(keep bool) *testDeadlines {
	d := &testDeadlines{ran: make(chan struct{}, 100)}
	d.dt = deadlineTimer{
		mu:      &d.mu,
		minWait: time.Millisecond,
		maxWait: time.Hour,
		pass: func(time.Time) int64 {
			d.passes.Add(1)
			d.ran <- struct{}{}
			return d.next.Swap(0)
		},
		keep: keep,
	}
	return d
}

func (d *testDeadlines) arm(at int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dt.armLocked(at)
}

func (d *testDeadlines) start(at int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dt.startLocked(at)
}

func (d *testDeadlines) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dt.stopLocked()
}

func (d *testDeadlines) armed() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dt.deadline
}

func (d *testDeadlines) waitPass(t *testing.T) {
	t.Helper()
	select {
	case <-d.ran:
	case <-time.After(10 * time.Second):
		t.Fatal("no pass")
	}
}

func (d *testDeadlines) noPass(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-d.ran:
		t.Fatal("unexpected pass")
	case <-time.After(within):
	}
}

func TestDeadlineTimerNotBeforeStartNorAfterStop(t *testing.T) {
	d := newTestDeadlines(false)
	d.arm(time.Now().UnixNano())
	d.noPass(t, 50*time.Millisecond) // not started: dropped
	d.start(0)
	d.noPass(t, 50*time.Millisecond) // start with no deadline arms nothing
	d.arm(time.Now().UnixNano())
	d.waitPass(t)
	d.stop()
	d.arm(time.Now().UnixNano())
	d.noPass(t, 50*time.Millisecond)
}

func TestDeadlineTimerKeepsWhatWasAskedBeforeStart(t *testing.T) {
	d := newTestDeadlines(true)
	d.arm(time.Now().UnixNano())
	d.noPass(t, 50*time.Millisecond)
	d.start(time.Now().UnixNano()) // start drops what was kept, arms its own
	d.waitPass(t)
	d.noPass(t, 50*time.Millisecond)
}

func TestDeadlineTimerNeverLater(t *testing.T) {
	d := newTestDeadlines(false)
	d.start(0)
	far := time.Now().Add(time.Hour).UnixNano()
	d.arm(far)
	first := d.armed()
	if first == 0 {
		t.Fatal("not armed")
	}
	d.arm(far + int64(time.Minute)) // later: ignored
	if got := d.armed(); got != first {
		t.Fatalf("deadline moved from %d to %d", first, got)
	}
	d.arm(time.Now().UnixNano()) // sooner: taken
	if got := d.armed(); got >= first {
		t.Fatalf("deadline %d not before %d", got, first)
	}
	d.waitPass(t)
	d.noPass(t, 50*time.Millisecond) // the far one was replaced, not kept
	d.stop()
}

func TestDeadlineTimerClampsWait(t *testing.T) {
	d := newTestDeadlines(false)
	d.dt.maxWait = 20 * time.Millisecond
	d.start(0)
	// A deadline a day away is waited for maxWait at a time.
	d.arm(time.Now().Add(24 * time.Hour).UnixNano())
	if w := time.Until(time.Unix(0, d.armed())); w > time.Second {
		t.Fatalf("armed %v ahead, past maxWait", w)
	}
	d.waitPass(t)
	d.stop()

	// A deadline already past waits minWait.
	d = newTestDeadlines(false)
	d.dt.minWait = time.Hour
	d.start(0)
	d.arm(time.Now().Add(-time.Minute).UnixNano())
	if w := time.Until(time.Unix(0, d.armed())); w < 30*time.Minute {
		t.Fatalf("armed %v ahead, under minWait", w)
	}
	d.stop()
}

func TestDeadlineTimerRearmsAfterPass(t *testing.T) {
	d := newTestDeadlines(true)
	d.start(0)
	d.next.Store(time.Now().Add(10 * time.Millisecond).UnixNano())
	d.arm(time.Now().UnixNano())
	d.waitPass(t)
	d.waitPass(t) // the deadline the pass reported
	d.noPass(t, 50*time.Millisecond)
	d.stop()
}

func TestDeadlineTimerDefersWhileRunning(t *testing.T) {
	for _, keep := range []bool{false, true} {
		d := newTestDeadlines(keep)
		release := make(chan struct{})
		inPass := make(chan struct{})
		d.dt.pass = func(time.Time) int64 {
			if d.passes.Add(1) == 1 {
				close(inPass)
				<-release
			}
			d.ran <- struct{}{}
			return 0
		}
		d.start(time.Now().UnixNano())
		<-inPass
		d.arm(time.Now().UnixNano()) // asked while the pass runs
		if d.armed() != 0 {
			t.Fatal("armed while a pass runs")
		}
		close(release)
		d.waitPass(t)
		if keep {
			d.waitPass(t) // kept, armed when the pass ended
		} else {
			d.noPass(t, 50*time.Millisecond) // dropped
		}
		d.stop()
	}
}

func TestDeadlineTimerNextLocked(t *testing.T) {
	d := newTestDeadlines(false)
	var next atomic.Int64
	next.Store(time.Now().UnixNano())
	d.dt.nextLocked = func() int64 { return next.Swap(0) }
	d.start(time.Now().UnixNano())
	d.waitPass(t)
	d.waitPass(t) // armed for what nextLocked said
	d.noPass(t, 50*time.Millisecond)
	d.stop()
}

// TestDeadlineTimerIdle: a pass that reports no deadline leaves the timer
// unarmed (no pass every minWait on a stream with nothing to expire),
// until something asks.
func TestDeadlineTimerIdle(t *testing.T) {
	d := newTestDeadlines(false)
	d.start(time.Now().UnixNano())
	d.waitPass(t)
	d.noPass(t, 100*time.Millisecond)
	d.arm(time.Now().UnixNano())
	d.waitPass(t)
	d.stop()
}
