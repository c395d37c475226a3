// Package cron reads the cron patterns of JetStream message schedules
// (Nats-Schedule), as nats-server 2.15 reads them: six
// space-separated fields, second minute hour day-of-month month
// day-of-week, each a comma-separated list of "*" (or "?"), "N", "N-M",
// optionally followed by "/step" ("N/step" runs from N to the field's
// maximum). Months and weekdays may be given by their three-letter English
// names. When both day fields are restricted (neither is a plain "*"), a
// day matching either one fires; otherwise a day must match both. The
// @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly
// names stand for their usual patterns. Times are read in the zone of
// Nats-Schedule-Time-Zone, UTC without it.
//
// It is a leaf of package jetstream: it imports nothing of the module.
package cron

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// cronNames are the predefined patterns.
var cronNames = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 0",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

// cronField is the set of values a field allows (bit i: value i), and
// whether it was written as a plain "*" (which matters for the day rule).
type cronField struct {
	bits uint64
	star bool
}

func (f cronField) has(v int) bool { return f.bits&(1<<uint(v)) != 0 }

// cronSpec is a parsed cron pattern.
type cronSpec struct {
	sec, min, hour, dom, month, dow cronField
}

var errCron = errors.New("invalid cron pattern")

// cronLimits are each field's range, and the names it accepts.
var cronLimits = [6]struct {
	lo, hi int
	names  []string // names[i] is value lo+i
}{
	{0, 59, nil}, {0, 59, nil}, {0, 23, nil}, {1, 31, nil},
	{1, 12, []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{0, 6, []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
}

// parseCron reads a six-field pattern (or a predefined name).
func parseCron(pattern string) (cronSpec, error) {
	if p, ok := cronNames[pattern]; ok {
		pattern = p
	}
	fields := strings.Fields(pattern)
	if len(fields) != 6 {
		return cronSpec{}, errCron
	}
	var out [6]cronField
	for i, f := range fields {
		var err error
		if out[i], err = parseCronField(f, i); err != nil {
			return cronSpec{}, err
		}
	}
	return cronSpec{sec: out[0], min: out[1], hour: out[2], dom: out[3], month: out[4], dow: out[5]}, nil
}

func parseCronField(field string, i int) (cronField, error) {
	lim := cronLimits[i]
	var f cronField
	for _, part := range strings.Split(field, ",") {
		rng, stepStr, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n <= 0 {
				return f, errCron
			}
			step = n
		}
		var lo, hi int
		star := false
		switch {
		case rng == "*" || rng == "?":
			lo, hi, star = lim.lo, lim.hi, true
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = cronValue(a, lim.lo, lim.names); err != nil {
				return f, err
			}
			hi = lo
			switch {
			case isRange:
				if hi, err = cronValue(b, lim.lo, lim.names); err != nil {
					return f, err
				}
			case hasStep:
				hi = lim.hi
			}
		}
		if lo < lim.lo || hi > lim.hi || lo > hi {
			return f, errCron
		}
		for v := lo; v <= hi; v += step {
			f.bits |= 1 << uint(v)
		}
		if star && step == 1 {
			f.star = true
		}
	}
	return f, nil
}

// cronValue reads a number, or a name standing for one.
func cronValue(s string, lo int, names []string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return lo + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, errCron
	}
	return v, nil
}

// dayOK applies the day rule to t.
func (c *cronSpec) dayOK(t time.Time) bool {
	d, w := c.dom.has(t.Day()), c.dow.has(int(t.Weekday()))
	if c.dom.star || c.dow.star {
		return d && w
	}
	return d || w
}

// next is the first time strictly after the second of from that the
// pattern allows, in loc; false when there is none within five years.
func (c *cronSpec) next(from time.Time, loc *time.Location) (time.Time, bool) {
	t := from.In(loc).Truncate(time.Second).Add(time.Second)
	limit := t.Year() + 5
	for t.Year() <= limit {
		y, mo, d := t.Date()
		h, mi, _ := t.Clock()
		var n time.Time
		switch {
		case !c.month.has(int(mo)):
			n = time.Date(y, mo+1, 1, 0, 0, 0, 0, loc)
		case !c.dayOK(t):
			n = time.Date(y, mo, d+1, 0, 0, 0, 0, loc)
		case !c.hour.has(h):
			n = time.Date(y, mo, d, h+1, 0, 0, 0, loc)
		case !c.min.has(mi):
			n = t.Truncate(time.Minute).Add(time.Minute)
		case !c.sec.has(t.Second()):
			n = t.Add(time.Second)
		default:
			return t, true
		}
		if !n.After(t) { // a clock change folded the step back
			n = t.Add(time.Hour).Truncate(time.Hour)
		}
		t = n
	}
	return time.Time{}, false
}

// Next is the next firing of a cron pattern after ts (unix ns), or, when
// that has passed (a firing missed while the server was down), the next
// after now. loc is the pattern's time zone, UTC when nil. repeat is
// always true for a firing (a cron pattern repeats); ok is false when the
// pattern is malformed or allows no time within five years.
func Next(pattern string, loc *time.Location, ts int64, now time.Time) (time.Time, bool, bool) {
	spec, err := parseCron(pattern)
	if err != nil {
		return time.Time{}, false, false
	}
	if loc == nil {
		loc = time.UTC
	}
	next, ok := spec.next(time.Unix(0, ts), loc)
	if ok && next.Before(now) {
		next, ok = spec.next(now.Round(time.Second), loc)
	}
	if !ok {
		return time.Time{}, false, false
	}
	return next, true, true
}
