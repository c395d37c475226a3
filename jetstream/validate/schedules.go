package validate

import (
	"github.com/jetwal/jetwal/jetstream/api"
)

// The config rules of allow_msg_schedules, as nats-server 2.15 applies
// them: not with message counters, not with discard new, not on a mirror
// (10186) or a stream with sources (10187). Schedule messages replace each
// other through a subject roll-up, so a request without allow_rollup gets it
// turned on (and deny_purge off), or, in pedantic mode, is refused. Once on,
// it cannot be turned off by an update.

// NormalizeSchedules checks the schedule rules of cfg and turns on what
// schedules need.
func NormalizeSchedules(cfg *api.StreamConfig) *api.ApiError {
	if !cfg.AllowMsgSchedules {
		return nil
	}
	switch {
	case cfg.AllowMsgCounter:
		return InvalidConfig("counter stream cannot use message schedules")
	case cfg.Discard == api.DiscardNew:
		return InvalidConfig("message scheduling cannot use discard new")
	}
	if !cfg.AllowRollup {
		cfg.AllowRollup, cfg.DenyPurge = true, false
	}
	if hasMirror(cfg) {
		return api.NewError(api.ErrMirrorWithMsgSchedules)
	}
	if RawPresent(cfg.Sources) {
		if _, sources, aerr := Sources(cfg); aerr == nil && len(sources) > 0 {
			return api.NewError(api.ErrSourceWithMsgSchedules)
		}
	}
	return nil
}

// pedanticSchedules refuses, in pedantic mode, the setting
// NormalizeSchedules would turn on.
func pedanticSchedules(cfg *api.StreamConfig) *api.ApiError {
	if cfg.AllowMsgSchedules && !cfg.AllowRollup && !cfg.AllowMsgCounter && cfg.Discard != api.DiscardNew {
		return InvalidConfig("message scheduling cannot be set if roll-ups are disabled")
	}
	return nil
}

// scheduleUpdate refuses turning message schedules off.
func scheduleUpdate(old, upd *api.StreamConfig) *api.ApiError {
	if old.AllowMsgSchedules && !upd.AllowMsgSchedules {
		return InvalidConfig("message schedules can not be disabled")
	}
	return nil
}
