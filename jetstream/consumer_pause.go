package jetstream

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
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

// apiPause serves CONSUMER.PAUSE.<stream>.<consumer>: {"pause_until":
// time} pauses until then, an empty body or a zero time resumes.
func (cm *consumerManager) apiPause(r *apiRequest) {
	const typ = api.TypeConsumerPause
	// Errors carry the response's other fields too, as nats-server's do.
	fail := func(aerr *api.ApiError) {
		cm.js.respond(r, api.ConsumerPauseResponse{Response: api.Response{Type: typ, Error: aerr}}, true)
	}
	i := strings.IndexByte(r.args, '.')
	if i <= 0 || i == len(r.args)-1 || strings.IndexByte(r.args[i+1:], '.') >= 0 {
		// nats-server serves $JS.API.CONSUMER.PAUSE.*.* only and leaves
		// other forms unanswered; jetwal answers as for an unknown request.
		cm.js.respondError(r, api.TypeError, api.Errorf(api.ErrBadRequest, "unknown JetStream API request %q", r.subject))
		return
	}
	var req api.ConsumerPauseRequest
	if b := strings.TrimSpace(string(r.data)); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
		if err := json.Unmarshal(r.data, &req); err != nil {
			fail(api.Errorf(api.ErrInvalidJSON, "invalid JSON: %v", err))
			return
		}
	}
	_, c, aerr := cm.consumerArgs(r)
	if aerr != nil {
		fail(aerr)
		return
	}
	until := req.PauseUntil.UTC()
	if err := c.setPause(until); err != nil {
		fail(api.Errorf(api.ErrConsumerStoreFailed, "error creating store for consumer: %v", err))
		return
	}
	resp := api.ConsumerPauseResponse{Response: api.Response{Type: typ}, PauseUntil: until}
	resp.Paused, resp.PauseRemaining = pauseInfo(&until, time.Now())
	cm.js.respond(r, resp, false)
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
