package jetstream

import (
	"testing"
	"time"
)

// TestScheduleCronNext: cron patterns, their names and time zones give the
// next firing nats-server computes; malformed ones are refused.
func TestScheduleCronNext(t *testing.T) {
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	far := utc("2030-01-01T00:00:00Z") // "now" for the cases, so none is skipped ahead
	for _, c := range []struct {
		pattern string
		loc     *time.Location
		from    string
		want    string
	}{
		{"* * * * * *", nil, "2029-06-01T10:00:00Z", "2029-06-01T10:00:01Z"},
		{"* * * * * *", nil, "2029-06-01T10:00:00.999Z", "2029-06-01T10:00:01Z"},
		{"0 0 0 1 1 *", nil, "2031-01-01T00:00:00Z", "2032-01-01T00:00:00Z"},
		{"@yearly", nil, "2031-01-01T00:00:00Z", "2032-01-01T00:00:00Z"},
		{"@monthly", nil, "2031-01-01T00:00:00Z", "2031-02-01T00:00:00Z"},
		{"@weekly", nil, "2031-01-05T00:00:00Z", "2031-01-12T00:00:00Z"}, // a Sunday
		{"@daily", nil, "2031-01-01T00:00:00Z", "2031-01-02T00:00:00Z"},
		{"@hourly", nil, "2031-01-01T00:00:00Z", "2031-01-01T01:00:00Z"},
		{"0 30 9 * * mon-fri", nil, "2031-01-04T10:00:00Z", "2031-01-06T09:30:00Z"}, // Saturday -> Monday
		{"*/15 * * * * *", nil, "2031-01-01T00:00:16Z", "2031-01-01T00:00:30Z"},
		{"10/20 * * * * *", nil, "2031-01-01T00:00:31Z", "2031-01-01T00:00:50Z"},
		{"0 0 0 13 * fri", nil, "2031-06-01T00:00:00Z", "2031-06-06T00:00:00Z"}, // a Friday before the 13th
		{"0 0 0 1,15 JAN,jul *", nil, "2031-01-20T00:00:00Z", "2031-07-01T00:00:00Z"},
		{"0 0 9 * * *", ams, "2031-01-01T00:00:00Z", "2031-01-01T08:00:00Z"}, // 09:00 CET
		{"0 0 9 * * *", ams, "2031-07-01T00:00:00Z", "2031-07-01T07:00:00Z"}, // 09:00 CEST
	} {
		next, repeat, ok := parseSchedule(c.pattern, c.loc, utc(c.from).UnixNano(), far.Add(-5*365*24*time.Hour))
		if !ok || !repeat || !next.Equal(utc(c.want)) {
			t.Fatalf("%q in %v from %s: %v %v %v, want %s", c.pattern, c.loc, c.from, next, repeat, ok, c.want)
		}
	}
	// A firing missed long ago is made up from now, once.
	now := time.Now()
	if next, _, ok := parseSchedule("* * * * * *", nil, 0, now); !ok || next.Before(now) {
		t.Fatalf("missed cron firing: %v %v", next, ok)
	}
	for _, bad := range []string{
		"* * * * *", "60 * * * * *", "* * 24 * * *", "* * * 0 * *", "* * * * 13 *", "* * * * * 7",
		"*/0 * * * * *", "5-3 * * * * *", "x * * * * *", "1-2-3 * * * * *", "1/2/3 * * * * *",
		"0 0 0 31 2 *", "@fortnightly", "-1 * * * * *",
	} {
		if _, _, ok := parseSchedule(bad, nil, far.UnixNano(), far); ok {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// FuzzSchedulePattern: any Nats-Schedule value, time zone and time either
// is refused or gives a firing time; a repeating one is never in the past
// by more than the rounding to a second.
func FuzzSchedulePattern(f *testing.F) {
	for _, s := range []string{"@at 2030-01-01T00:00:00Z", "@every 1s", "@every 1h30m", "* * * * * *", "*/5 1-3 * 1,15 jan-mar mon",
		"@hourly", "@weekly", "0 0 0 31 2 *", "10/20 * * * * ?", "@at 9999-12-31T23:59:59Z", ""} {
		f.Add(s, "", int64(0))
		f.Add(s, "Europe/Amsterdam", time.Now().UnixNano())
	}
	f.Fuzz(func(t *testing.T, pattern, zone string, ts int64) {
		var loc *time.Location
		if zone != "" {
			l, err := time.LoadLocation(zone)
			if err != nil {
				return
			}
			loc = l
		}
		now := time.Now()
		next, repeat, ok := parseSchedule(pattern, loc, ts, now)
		if ok && repeat && next.Before(now.Add(-time.Second)) {
			t.Fatalf("%q in %q from %d: next %v is in the past", pattern, zone, ts, next)
		}
		_ = schedNanos(next)
	})
}
