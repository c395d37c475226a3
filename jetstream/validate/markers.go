package validate

import (
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
)

// The config rules of subject_delete_marker_ttl, as nats-server 2.15
// applies them (all refusals are 10052, invalid stream config): at least a
// second, not negative, not on a mirror (its markers would take sequences
// the origin does not have). Markers need per-message TTLs and roll-ups: a
// request without them gets both turned on (and deny_purge off), or, in
// pedantic mode, is refused.

// NormalizeMarkers checks the marker TTL of cfg and turns on what markers
// need.
func NormalizeMarkers(cfg *api.StreamConfig) *api.ApiError {
	switch ttl := cfg.SubjectDeleteMarkerTTL; {
	case ttl < 0:
		return InvalidConfig("subject delete marker TTL must not be negative")
	case ttl == 0:
		return nil
	case ttl < time.Second:
		return InvalidConfig("subject delete marker TTL must be at least 1 second")
	}
	if hasMirror(cfg) {
		return InvalidConfig("subject delete markers forbidden on mirrors")
	}
	cfg.AllowMsgTTL = true
	if !cfg.AllowRollup {
		cfg.AllowRollup, cfg.DenyPurge = true, false
	}
	return nil
}

// pedanticMarkers refuses, in pedantic mode, the settings NormalizeMarkers
// would turn on.
func pedanticMarkers(cfg *api.StreamConfig) *api.ApiError {
	if cfg.SubjectDeleteMarkerTTL < time.Second {
		return nil // refused or ignored by NormalizeMarkers
	}
	if !cfg.AllowMsgTTL {
		return InvalidConfig("subject delete marker cannot be set if message TTLs are disabled")
	}
	if !cfg.AllowRollup {
		return InvalidConfig("subject delete marker cannot be set if roll-ups are disabled")
	}
	return nil
}

// hasMirror reports whether cfg names a mirror.
func hasMirror(cfg *api.StreamConfig) bool {
	m := strings.TrimSpace(string(cfg.Mirror))
	return m != "" && m != "null" && m != "{}"
}

// checkAtomicConfig refuses allow_atomic (10198) and allow_batched
// (10209) on a mirror, as nats-server does.
func checkAtomicConfig(cfg *api.StreamConfig) *api.ApiError {
	if cfg.AllowAtomicPublish && hasMirror(cfg) {
		return api.NewError(api.ErrMirrorWithAtomicPublish)
	}
	if cfg.AllowBatchPublish && hasMirror(cfg) {
		return api.NewError(api.ErrMirrorWithBatchPublish)
	}
	return nil
}
