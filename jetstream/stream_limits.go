package jetstream

import (
	"sort"
	"strings"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/store"
)

// A stream's limits as its store and its consumers see them; the config
// rules themselves are in jetstream/validate.

// storeLimits translates a normalized config into the limits a store enforces.
func storeLimits(cfg *api.StreamConfig) store.Limits {
	l := store.Limits{
		MaxMsgs:              cfg.MaxMsgs,
		MaxBytes:             cfg.MaxBytes,
		MaxAge:               cfg.MaxAge,
		MaxMsgsPerSubject:    cfg.MaxMsgsPer,
		MaxMsgSize:           cfg.MaxMsgSize,
		DiscardNewPerSubject: cfg.DiscardNewPer,
	}
	if cfg.Discard == api.DiscardNew {
		l.Discard = store.DiscardNew
	}
	if cfg.SubjectDeleteMarkerTTL > 0 {
		l.MaxAge = 0 // the stream ages messages out itself, leaving markers (stream_markers.go)
	}
	return l
}

// checkNewConsumerLimits refuses a stream update whose new consumer_limits
// the stream's existing consumers exceed, naming them, as nats-server does.
func (s *stream) checkNewConsumerLimits(old, cfg *api.StreamConfig) *api.ApiError {
	o, n := old.ConsumerLimits, cfg.ConsumerLimits
	if !(n.InactiveThreshold > 0 && n.InactiveThreshold != o.InactiveThreshold) &&
		!(n.MaxAckPending > 0 && n.MaxAckPending != o.MaxAckPending) {
		return nil
	}
	var bad []string
	for _, c := range s.cons.all() {
		c.mu.Lock()
		thr, mapend := c.cfg.InactiveThreshold, c.cfg.MaxAckPending
		c.mu.Unlock()
		if (n.InactiveThreshold > 0 && thr > n.InactiveThreshold) || (n.MaxAckPending > 0 && mapend > n.MaxAckPending) {
			bad = append(bad, c.name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return api.Errorf(api.ErrStreamUpdate, "change to limits violates consumers: %s", strings.Join(bad, ", "))
}
