package monitor

import (
	"github.com/jetwal/jetwal/internal/proccpu"
	"math"
	"sync"
	"time"
)

// cpuWindow is the shortest span a CPU figure covers: a request within it
// of the last sample gets the last figure again (nats-server samples its
// process once a second).
const cpuWindow = time.Second

// cpuMeter reports the process's CPU use as nats-server's "cpu": percent
// of one core (200 = two cores busy) over the last window. It samples on
// demand, so it needs no goroutine: the first figure is the average since
// the server started.
type cpuMeter struct {
	mu struct {
		sync.Mutex
		// Guarded by the mutex above: the last sample and its figure.
		at   time.Time
		used time.Duration
		pct  float64
	}
}

// percent returns the CPU use; start is when the server started, used for
// the first sample.
func (c *cpuMeter) percent(start time.Time) float64 {
	used, ok := proccpu.Used()
	if !ok {
		return 0
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	from, fromUsed := c.mu.at, c.mu.used
	if from.IsZero() {
		from, fromUsed = start, 0
	} else if now.Sub(from) < cpuWindow {
		return c.mu.pct
	}
	if span := now.Sub(from); span > 0 {
		// One decimal, as nats-server.
		c.mu.pct = math.Round(float64(used-fromUsed)/float64(span)*1000) / 10
	}
	c.mu.at, c.mu.used = now, used
	return c.mu.pct
}

// CPU returns the process's CPU use in percent of one core, over about the
// last second (statsz's and /varz's "cpu").
func (m *Monitor) CPU() float64 {
	return m.cpu.percent(m.opts.Server.Stats().Start)
}
