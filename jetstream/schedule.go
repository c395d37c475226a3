package jetstream

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jetwal/jetwal/store"
)

// Message schedules (allow_msg_schedules, nats-server 2.12+). A schedule is
// an ordinary stored message whose Nats-Schedule header holds a pattern
// (schedule_parse.go); it rolls up its subject, so a subject holds at most
// one schedule. When it is due the stream stores a new message on the
// schedule's Nats-Schedule-Target (schedule_fire.go), with the schedule's
// body and headers (or those of the last message on its
// Nats-Schedule-Source), marked with Nats-Scheduler (the schedule's subject)
// and Nats-Schedule-Next (the next firing, or "purge" for a schedule that
// does not repeat). Storing a produced message moves a repeating schedule
// to its next firing; a "purge" one removes the schedule message, as a
// client's purge message (Nats-Schedule-Next: purge plus Nats-Scheduler)
// does.
//
// The table below is only an index of the stored schedules: at open it is
// rebuilt from the messages (recoverSchedule), so schedules survive a
// restart or a crash with no file of their own. A produced message is
// durable before its schedule moves on or is removed; if the server dies in
// between, the rebuild sees the produced message after the schedule and
// applies it then, so a schedule never fires twice for the same time.
// A timer per stream fires the earliest schedule; as in nats-server it
// waits at least 250 ms, so bursts of due schedules are handled together.

// schedEntry is one schedule: the message holding it and when it fires.
type schedEntry struct {
	seq      uint64
	at       int64 // unix ns
	inflight bool  // fired; its produced message is not stored yet
}

// schedTable is the stream's schedules by subject, and the timer that
// fires them (deadlineTimer, deadline.go). mu is a leaf lock: it is taken
// under pmu (from onAppended) and never held while taking another.
type schedTable struct {
	n     atomic.Int32 // len(bySubj), read without mu on the append path
	onDue func()       // fires what is due; set once by newStream

	mu sync.Mutex
	// guarded by mu
	bySubj map[string]*schedEntry
	dt     deadlineTimer // set up by timerLocked
}

// schedMinWait and schedMaxWait bound the timer's wait.
const (
	schedMinWait = 250 * time.Millisecond
	schedMaxWait = 24 * time.Hour
)

// timerLocked is the deadline timer, set up on first use: a deadline asked
// for before start or while onDue runs is not kept, as the table holds it
// and the timer is armed from the table at start and after each onDue.
// Caller holds mu.
func (t *schedTable) timerLocked() *deadlineTimer {
	if t.dt.mu == nil {
		t.dt = deadlineTimer{
			mu:         &t.mu,
			minWait:    schedMinWait,
			maxWait:    schedMaxWait,
			pass:       func(time.Time) int64 { t.onDue(); return 0 },
			nextLocked: t.earliestLocked,
		}
	}
	return &t.dt
}

// armLocked makes the timer fire by at, unless it already fires sooner or
// onDue is running (it re-arms when done). Caller holds mu.
func (t *schedTable) armLocked(at int64) {
	// A far schedule is waited for a day at a time: the timer then finds
	// nothing due and re-arms.
	if t.onDue != nil {
		t.timerLocked().armLocked(at)
	}
}

// start lets the timer run, from when the stream serves its subjects: a
// stream object opened but never served (a cluster leader that lost a
// race, a failed open) must not fire. Idempotent.
func (t *schedTable) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	dt := t.timerLocked()
	if t.onDue == nil {
		dt.startLocked(0) // nothing to run
		return
	}
	dt.startLocked(t.earliestLocked())
}

// earliestLocked is when the earliest schedule not in flight fires (0:
// none). Caller holds mu.
func (t *schedTable) earliestLocked() int64 {
	earliest := int64(0)
	for _, e := range t.bySubj {
		if !e.inflight && (earliest == 0 || e.at < earliest) {
			earliest = e.at
		}
	}
	return earliest
}

// stop disarms the timer for good (the stream is closing).
func (t *schedTable) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timerLocked().stopLocked()
}

// set records the schedule stored at seq on subj, replacing an older one.
func (t *schedTable) set(subj string, seq uint64, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.bySubj[subj]; e != nil && e.seq > seq {
		return
	}
	if t.bySubj == nil {
		t.bySubj = make(map[string]*schedEntry)
	}
	t.bySubj[strings.Clone(subj)] = &schedEntry{seq: seq, at: at}
	t.n.Store(int32(len(t.bySubj)))
	t.armLocked(at)
}

// advance moves the schedule on subj, if older than seq (the produced
// message), to its next firing.
func (t *schedTable) advance(subj string, seq uint64, at int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.bySubj[subj]; e != nil && e.seq < seq {
		e.at, e.inflight = at, false
		t.armLocked(at)
	}
}

// removeBefore drops the schedule on subj if it is stored before seq.
func (t *schedTable) removeBefore(subj string, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.bySubj[subj]; e != nil && e.seq < seq {
		delete(t.bySubj, subj)
		t.n.Store(int32(len(t.bySubj)))
	}
}

// dueSchedule is a schedule to fire.
type dueSchedule struct {
	subj string
	seq  uint64
	at   int64
}

// due returns the schedules due at now, in sequence order, marking them in
// flight.
func (t *schedTable) due(now int64) []dueSchedule {
	if t.n.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []dueSchedule
	for subj, e := range t.bySubj {
		if !e.inflight && e.at <= now {
			e.inflight = true
			out = append(out, dueSchedule{subj: subj, seq: e.seq, at: e.at})
		}
	}
	sortDue(out)
	return out
}

func sortDue(d []dueSchedule) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j].seq < d[j-1].seq; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

// scheduleStored updates the table for a message just stored at seq on
// subj (onAppended, pmu held).
func (s *stream) scheduleStored(subj string, seq uint64, n *schedNote) {
	if n == nil {
		if s.sched.n.Load() > 0 {
			s.sched.removeBefore(subj, seq) // a plain message replaced the schedule
		}
		return
	}
	if n.schedule {
		s.sched.set(subj, seq, n.at)
	}
	if n.scheduler == "" {
		return
	}
	if n.repeat {
		s.sched.advance(n.scheduler, seq, n.next)
		return
	}
	// Removing the schedule message touches the store: not on its callback.
	scheduler := n.scheduler
	if !s.js.work.submit(func() { s.purgeSchedule(scheduler, seq) }) {
		s.env.log.Warn("removing a fired schedule: server shutting down", "stream", s.name, "subject", scheduler)
	}
}

// purgeSchedule removes the schedule on subj stored before seq (the
// message that fired or cancelled it).
func (s *stream) purgeSchedule(subj string, seq uint64) {
	if _, err := s.store.Purge(subj, seq, 0); err != nil && !errors.Is(err, store.ErrClosed) {
		s.env.log.Warn("removing a fired schedule", "stream", s.name, "subject", subj, "error", err)
		return
	}
	s.sched.removeBefore(subj, seq)
}

// schedRecovery collects what the rebuild at open finds.
type schedRecovery struct {
	purge map[string]uint64 // schedule subject -> the purge message after it
}

// recoverSchedule applies one stored message to the table, in sequence
// order, at open.
func (s *stream) recoverSchedule(m *store.Msg, now time.Time, r *schedRecovery) {
	if len(m.Header) == 0 {
		if s.sched.n.Load() > 0 {
			s.sched.removeBefore(m.Subject, m.Seq)
		}
		return
	}
	if pattern := headerValue(m.Header, hdrSchedule); len(pattern) > 0 {
		if loc, ok := scheduleTimeZone(m.Header); ok {
			if at, _, ok := parseSchedule(string(pattern), loc, m.Time, now); ok && !at.IsZero() {
				s.sched.set(m.Subject, m.Seq, schedNanos(at))
			}
		}
	}
	scheduler := string(headerValue(m.Header, hdrScheduler))
	if scheduler == "" {
		if headerValue(m.Header, hdrSchedule) == nil && s.sched.n.Load() > 0 {
			s.sched.removeBefore(m.Subject, m.Seq)
		}
		return
	}
	switch next := string(headerValue(m.Header, hdrScheduleNext)); next {
	case "":
	case scheduleNextPurge:
		// Fired (or cancelled) before the stop; its removal may not have
		// reached the disk.
		s.sched.removeBefore(scheduler, m.Seq)
		if r.purge == nil {
			r.purge = make(map[string]uint64)
		}
		r.purge[scheduler] = m.Seq
	default:
		if t, err := time.Parse(time.RFC3339Nano, next); err == nil {
			s.sched.advance(scheduler, m.Seq, schedNanos(t))
		}
	}
}

// finishScheduleRecovery removes the schedule messages whose purge was
// stored but not applied before the stop.
func (s *stream) finishScheduleRecovery(r *schedRecovery) error {
	for subj, seq := range r.purge {
		if _, err := s.store.Purge(subj, seq, 0); err != nil {
			return err
		}
	}
	return nil
}
