package jetstream

import (
	"math"
	"time"
)

// pushRate holds a push consumer to its rate_limit_bps: a token bucket of
// bytes that refills at rate_limit_bps/8 bytes a second up to burst, the
// largest message a client may publish (as nats-server sizes it). A
// message larger than what is left may go once the bucket holds as much as
// it can; it then leaves the bucket in debt, so the average rate holds.
// Guarded by the consumer's mu.
type pushRate struct {
	bps    uint64  // the configured rate_limit_bps
	perSec float64 // bytes a second
	burst  float64
	tokens float64
	last   int64     // clock() of the last refill; 0 before the first
	base   time.Time // clock()'s origin
}

// rateRetry is how long a consumer whose rate allows no bytes at all
// (rate_limit_bps below 8) waits before it looks again.
const rateRetry = int64(60e9)

func newPushRate(bps uint64, burst int) *pushRate {
	return &pushRate{bps: bps, perSec: float64(bps / 8), burst: float64(burst), tokens: float64(burst), base: time.Now()}
}

// clock is the bucket's time: monotonic nanoseconds since it was made
// (at least 1), which a step of the wall clock does not move. With unix
// time, a wall clock set forward while messages waited let them go early:
// make test twice saw 25 messages of a 4000 B/s consumer arrive 7 ms
// sooner than the rate allows.
func (r *pushRate) clock() int64 { return int64(time.Since(r.base)) + 1 }

// take reports when a message of size bytes may be sent at time now (on
// one clock, clock() outside tests): 0 means now, and its bytes are taken
// from the bucket; otherwise the time on that clock to try again.
func (r *pushRate) take(now int64, size int) int64 {
	if r.last != 0 && now > r.last {
		r.tokens = math.Min(r.burst, r.tokens+float64(now-r.last)*r.perSec/1e9)
	}
	if now > r.last {
		r.last = now
	}
	need := math.Min(float64(size), r.burst)
	if r.tokens >= need {
		r.tokens -= float64(size)
		return 0
	}
	if r.perSec <= 0 {
		return now + rateRetry
	}
	wait := math.Ceil((need - r.tokens) / r.perSec * 1e9)
	return now + max(int64(wait), 1)
}

// setRate installs, keeps or removes the rate limit of a (new) config.
// Caller holds mu or owns c.
func (c *consumer) setRate(bps uint64) {
	switch {
	case bps == 0 || c.cfg.DeliverSubject == "":
		c.rate = nil
	case c.rate == nil || c.rate.bps != bps:
		c.rate = newPushRate(bps, int(c.env.srv.Options().MaxPayload))
	}
}
