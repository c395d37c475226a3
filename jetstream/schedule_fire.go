package jetstream

import (
	"time"

	"github.com/jetwal/jetwal/natshdr"
	"github.com/jetwal/jetwal/server"
	"github.com/jetwal/jetwal/store"
)

// fireSchedules stores the messages of the schedules due at now (the
// stream sweep calls it).
func (s *stream) fireSchedules(now time.Time) {
	for _, d := range s.sched.due(now.UnixNano()) {
		s.fireSchedule(d, now)
	}
}

// fireSchedule produces the message of one due schedule. A schedule whose
// message is gone or no longer valid is dropped. One whose produced message
// cannot be stored (a sealed stream, a limit, a store failure) stays in
// flight, not fired again until the stream is next opened, as nats-server
// keeps it until a leader change.
func (s *stream) fireSchedule(d dueSchedule, now time.Time) {
	var sm store.Msg
	if err := s.store.Load(d.seq, &sm); err != nil || sm.Subject != d.subj {
		s.sched.removeBefore(d.subj, d.seq+1)
		return
	}
	m, n, ok := producedMessage(&sm, d, now, s.store)
	if !ok {
		s.sched.removeBefore(d.subj, d.seq+1)
		return
	}
	s.cfgMu.RLock()
	sealed, allowTTL := s.cfg.Sealed, s.cfg.AllowMsgTTL
	rp := s.xf.target(m.Subject)
	s.cfgMu.RUnlock()
	if sealed {
		return
	}
	var ttl time.Duration
	if v := headerValue(m.Header, hdrTTL); len(v) > 0 && allowTTL {
		ttl, _ = parseMsgTTL(string(v)) // checked when the schedule was stored
	}
	var rollup byte
	if string(headerValue(m.Header, hdrRollup)) == rollupSubject {
		rollup = 's'
	}
	h := pubHeaders{sched: n}
	res := s.appendMsg(m, &h, "", rollup, max(ttl, 0), rp, nil)
	if res.aerr != nil {
		s.env.log.Warn("storing a scheduled message", "stream", s.name, "schedule", d.subj, "target", m.Subject, "error", res.aerr.Description)
	}
	s.finishAppend(&res)
}

// producedMessage builds the message a schedule sm produces when it fires
// for the time d.at: on its target, with the body and headers of the
// schedule (or of the last message on its source subject) less the
// schedule's own headers, plus Nats-Scheduler, Nats-Schedule-Next and the
// schedule's TTL and rollup. ok is false for a schedule no longer valid.
func producedMessage(sm *store.Msg, d dueSchedule, now time.Time, st store.StreamStore) (*server.Msg, *schedNote, bool) {
	loc, ok := scheduleTimeZone(sm.Header)
	if !ok {
		return nil, nil, false
	}
	pattern := string(headerValue(sm.Header, hdrSchedule))
	next, repeat, ok := parseSchedule(pattern, loc, d.at, now)
	if !ok || pattern == "" {
		return nil, nil, false
	}
	ttl := headerValue(sm.Header, hdrScheduleTTL)
	if len(ttl) > 0 && !validTTL(ttl) {
		return nil, nil, false
	}
	target := string(headerValue(sm.Header, hdrScheduleTarget))
	if target == "" {
		return nil, nil, false
	}
	rollup := headerValue(sm.Header, hdrScheduleRollup)
	hdr, data := sm.Header, sm.Data
	if source := string(headerValue(sm.Header, hdrScheduleSource)); source != "" {
		var src store.Msg
		if err := st.LoadLast(source, &src); err == nil {
			hdr, data = src.Header, src.Data
		}
	}
	out := scheduleHeaders(hdr)
	out = natshdr.AppendString(out, hdrScheduler, d.subj)
	n := &schedNote{scheduler: d.subj}
	if repeat {
		out = natshdr.AppendString(out, hdrScheduleNext, next.Format(time.RFC3339Nano))
		n.repeat, n.next = true, schedNanos(next)
	} else {
		out = natshdr.AppendString(out, hdrScheduleNext, scheduleNextPurge)
	}
	if len(ttl) > 0 {
		out = natshdr.AppendField(out, hdrTTL, ttl)
	}
	if len(rollup) > 0 {
		out = natshdr.AppendField(out, hdrRollup, rollup)
	}
	body := make([]byte, len(data))
	copy(body, data)
	return &server.Msg{Subject: target, Header: natshdr.End(out), Data: body}, n, true
}
