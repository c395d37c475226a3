package jetstream

import (
	"bytes"
	"math"
	"strings"
	"time"

	"github.com/jetwal/jetwal/jetstream/internal/cron"
	"github.com/jetwal/jetwal/natshdr"
)

// Message schedules (a stream with allow_msg_schedules): the headers a
// schedule message carries and the patterns jetwal reads from them, as
// nats-server 2.15 names and parses them.
const (
	hdrSchedule         = "Nats-Schedule"           // the pattern
	hdrScheduleTimeZone = "Nats-Schedule-Time-Zone" // an IANA zone, for cron patterns
	hdrScheduleTTL      = "Nats-Schedule-TTL"       // Nats-TTL of the produced message
	hdrScheduleRollup   = "Nats-Schedule-Rollup"    // Nats-Rollup of the produced message ("sub")
	hdrScheduleTarget   = "Nats-Schedule-Target"    // subject of the produced message
	hdrScheduleSource   = "Nats-Schedule-Source"    // subject whose last message is produced
	hdrScheduler        = "Nats-Scheduler"          // on a produced message: the schedule's subject
	hdrScheduleNext     = "Nats-Schedule-Next"      // on a produced message: next firing, or "purge"

	scheduleNextPurge = "purge"
)

// scheduleTimeZone reads Nats-Schedule-Time-Zone: nil without the header,
// ok false when it is present but empty or names no known zone.
func scheduleTimeZone(hdr []byte) (loc *time.Location, ok bool) {
	tz, present := natshdr.Lookup(hdr, hdrScheduleTimeZone)
	if !present {
		return nil, true
	}
	if len(tz) == 0 {
		return nil, false
	}
	loc, err := time.LoadLocation(string(tz))
	if err != nil {
		return nil, false
	}
	return loc, true
}

// parseSchedule reads a schedule pattern: when it fires next, counted
// from ts (unix ns: the time the schedule was stored or last fired), and
// whether it repeats. ok is false for a pattern nats-server refuses or
// jetwal does not implement. An empty pattern is no schedule (zero time).
//
//   - "@at <RFC 3339 time>": once, at that time (even a past one: then at
//     once). No time zone header.
//   - "@every <Go duration>": repeatedly, at least a second apart, no time
//     zone header. A firing missed (say while the server was down) is
//     made up once, not once per missed interval.
//   - a cron pattern or an @hourly-style name (package internal/cron), in the
//     zone of Nats-Schedule-Time-Zone.
func parseSchedule(pattern string, loc *time.Location, ts int64, now time.Time) (next time.Time, repeat, ok bool) {
	switch {
	case pattern == "":
		return time.Time{}, false, true
	case strings.HasPrefix(pattern, "@at "):
		if loc != nil {
			return time.Time{}, false, false
		}
		t, err := time.Parse(time.RFC3339, pattern[len("@at "):])
		return t, false, err == nil
	case strings.HasPrefix(pattern, "@every "):
		if loc != nil {
			return time.Time{}, false, false
		}
		d, err := time.ParseDuration(pattern[len("@every "):])
		if err != nil || d < time.Second {
			return time.Time{}, false, false
		}
		next = time.Unix(0, ts).UTC().Round(time.Second).Add(d)
		if next.Before(now) {
			next = now.UTC().Round(time.Second).Add(d)
		}
		return next, true, true
	}
	return cron.Next(pattern, loc, ts, now)
}

// schedNanos is t in unix ns, clamped to what an int64 holds: an @at in
// the year 9999 waits for ever instead of wrapping round into the past.
func schedNanos(t time.Time) int64 {
	switch {
	case t.After(maxSchedTime):
		return math.MaxInt64
	case t.Before(minSchedTime):
		return math.MinInt64
	}
	return t.UnixNano()
}

var (
	maxSchedTime = time.Unix(0, math.MaxInt64)
	minSchedTime = time.Unix(0, math.MinInt64)
)

// scheduleHeaders rebuilds a header block without the headers a produced
// message must not inherit (every Nats-Schedule* one, Nats-Scheduler,
// Nats-Expected-*, Nats-Msg-Id, Nats-TTL, Nats-Rollup), ready for
// natshdr fields and natshdr.End. The status line is not kept.
func scheduleHeaders(hdr []byte) []byte {
	out := natshdr.AppendStart(make([]byte, 0, len(hdr)+128), 0, "")
	natshdr.Fields(hdr, func(name, _, line []byte) bool {
		if name == nil {
			return true
		}
		name = bytes.TrimSpace(name)
		if !(hasPrefixFold(name, hdrSchedule) || hasPrefixFold(name, "Nats-Expected-") ||
			eqFold(name, hdrMsgID) || eqFold(name, hdrTTL) || eqFold(name, hdrRollup)) {
			out = append(out, line...)
		}
		return true
	})
	return out
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && eqFold(b[:len(prefix)], prefix)
}
