package jetstream

import (
	"encoding/json"
	"time"

	"github.com/jetwal/jetwal/jetstream/validate"
)

// Pausing a consumer, as nats-server 2.11+ does: the consumer's config
// carries pause_until (persisted with it, so a pause outlives a restart).
// Until then the consumer delivers nothing, neither new messages nor
// redeliveries; pull requests are kept and expire as usual. Its info says
// paused with the time remaining. CONSUMER.PAUSE sets or clears the
// deadline; a create or update of an existing consumer keeps the deadline
// it has, whatever the request says.

// pausedUntil returns the deadline of a pause in force at now, or 0.
// Caller holds mu.
func (c *consumer) pausedUntil(now int64) int64 {
	if p := c.cfg.PauseUntil; p != nil && !p.IsZero() {
		if t := p.UnixNano(); now < t {
			return t
		}
	}
	return 0
}

// pauseInfo fills a pause's paused and remaining fields as of now.
func pauseInfo(until *time.Time, now time.Time) (paused bool, remaining time.Duration) {
	if until == nil || !now.Before(*until) {
		return false, 0
	}
	return true, until.Sub(now)
}

// setPause installs a new pause deadline (zero: none), persists the config
// and wakes the consumer, which resumes at once or at the deadline.
func (c *consumer) setPause(until time.Time) error {
	c.mu.Lock()
	cfg := c.cfg.Clone()
	if until.IsZero() {
		cfg.PauseUntil = nil
	} else {
		cfg.PauseUntil = &until
	}
	validate.SetConsumerRequiredLevel(&cfg)
	if c.cs != nil {
		m := c.meta()
		m.Config = cfg
		meta, _ := json.Marshal(m)
		if err := c.cs.UpdateConfig(meta); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	c.setConfig(cfg)
	c.mu.Unlock()
	c.signal()
	return nil
}
