package jetstream

import (
	"time"

	"github.com/jetwal/jetwal/jetstream/api"
	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
	"github.com/jetwal/jetwal/subject"
)

// schedNote is what a stored message means to the stream's schedule table
// (schedule.go); the publish path attaches it to the pending append.
type schedNote struct {
	schedule  bool   // a schedule message, first firing at
	at        int64  // unix ns
	scheduler string // a produced or purge message: the schedule's subject
	repeat    bool   // with scheduler: the schedule moves on to next; otherwise it is removed
	next      int64  // unix ns
}

// schedPolicy is the part of the stream config the schedule checks read,
// taken under cfgMu by the publisher.
type schedPolicy struct {
	allow, allowTTL bool
	subjects        []string
}

// schedPolicy reads the policy from the stream's config.
func (s *stream) schedPolicy() schedPolicy {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return schedPolicy{allow: s.cfg.AllowMsgSchedules, allowTTL: s.cfg.AllowMsgTTL, subjects: s.cfg.Subjects}
}

// checkSchedule applies the schedule headers of a client's message, in
// nats-server's order and with its errors. A schedule message gets a
// Nats-Rollup: sub header when it has none, so a newer schedule on the
// same subject replaces the older; the returned message carries it.
// Called only for messages with a Nats-Schedule* header.
func (s *stream) checkSchedule(m *server.Msg, h *pubHeaders, pol schedPolicy) (*server.Msg, *schedNote, *api.ApiError) {
	refuse := func(code api.ErrCode) (*server.Msg, *schedNote, *api.ApiError) {
		return nil, nil, api.NewError(code)
	}
	loc, ok := scheduleTimeZone(m.Header)
	if !ok {
		if !pol.allow {
			return refuse(api.ErrMessageSchedulesDisabled)
		}
		return refuse(api.ErrMessageSchedulesTimeZoneInval)
	}
	now := time.Now()
	next, _, ok := parseSchedule(string(headerValue(m.Header, hdrSchedule)), loc, now.UnixNano(), now)
	if !ok {
		if !pol.allow {
			return refuse(api.ErrMessageSchedulesDisabled)
		}
		return refuse(api.ErrMessageSchedulesPatternInvalid)
	}
	var note *schedNote
	if !next.IsZero() {
		target := string(headerValue(m.Header, hdrScheduleTarget))
		source := string(headerValue(m.Header, hdrScheduleSource))
		ttl := headerValue(m.Header, hdrScheduleTTL)
		rollup := string(headerValue(m.Header, hdrScheduleRollup))
		switch {
		case !pol.allow:
			return refuse(api.ErrMessageSchedulesDisabled)
		case len(ttl) > 0 && !validTTL(ttl):
			return refuse(api.ErrMessageSchedulesTTLInvalid)
		case rollup != "" && rollup != rollupSubject:
			return refuse(api.ErrMessageSchedulesRollupInvalid)
		case len(ttl) > 0 && !pol.allowTTL:
			return refuse(api.ErrMessageTTLDisabled)
		case target == "" || !subject.ValidLiteral(target) || target == m.Subject:
			return refuse(api.ErrMessageSchedulesTargetInvalid)
		case source != "" && (source == target || source == m.Subject || !subject.ValidLiteral(source)):
			return refuse(api.ErrMessageSchedulesSourceInvalid)
		case !overlapsAny(pol.subjects, target):
			return refuse(api.ErrMessageSchedulesTargetInvalid)
		case source != "" && !overlapsAny(pol.subjects, source):
			return refuse(api.ErrMessageSchedulesSourceInvalid)
		}
		switch {
		case len(h.rollup) == 0:
			cm := *m
			cm.Header = natshdr.End(natshdr.AppendString(natshdr.Reopen(make([]byte, 0, len(m.Header)+32), m.Header), hdrRollup, rollupSubject))
			m = &cm
			h.rollup = []byte(rollupSubject)
		case string(h.rollup) != rollupSubject:
			return refuse(api.ErrMessageSchedulesRollupInvalid)
		}
		note = &schedNote{schedule: true, at: schedNanos(next)}
	}
	if nextVal := headerValue(m.Header, hdrScheduleNext); len(nextVal) > 0 {
		// A client may send Nats-Schedule-Next only to remove a schedule.
		scheduler := string(headerValue(m.Header, hdrScheduler))
		switch {
		case string(nextVal) != scheduleNextPurge,
			scheduler == "" || scheduler == m.Subject || !subject.ValidLiteral(scheduler):
			return refuse(api.ErrMessageSchedulesSchedulerInval)
		case !pol.allow:
			return refuse(api.ErrMessageSchedulesDisabled)
		}
		var last store.Msg
		if err := s.store.LoadLast(scheduler, &last); err == nil && headerValue(last.Header, hdrSchedule) == nil {
			return refuse(api.ErrMessageSchedulesSchedulerInval)
		}
		if note == nil {
			note = &schedNote{}
		}
		note.scheduler = scheduler
	} else if headerValue(m.Header, hdrScheduler) != nil {
		return refuse(api.ErrMessageSchedulesSchedulerInval)
	}
	return m, note, nil
}

// validTTL reports whether a Nats-TTL value is one nats-server accepts.
func validTTL(v []byte) bool {
	_, err := parseMsgTTL(string(v))
	return err == nil
}

// overlapsAny reports whether subj can match one of the stream's subjects.
func overlapsAny(subjects []string, subj string) bool {
	for _, f := range subjects {
		if subject.Overlap(f, subj) {
			return true
		}
	}
	return false
}
