package cron

import (
	"testing"
	"time"
)

// TestNext: a pattern's next firing after ts, or after now when that has
// passed; malformed patterns are refused. (The schedule tests of package
// jetstream check the patterns against nats-server's firings.)
func TestNext(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	from := at("2029-06-01T10:00:00Z")
	for _, c := range []struct {
		pattern string
		now     time.Time
		want    string
	}{
		{"* * * * * *", from, "2029-06-01T10:00:01Z"},
		{"@hourly", from, "2029-06-01T11:00:00Z"},
		{"0 30 * * * *", from, "2029-06-01T10:30:00Z"},
		{"0 0 0 * * sun", from, "2029-06-03T00:00:00Z"},
		// ts is in the past: the next firing after now.
		{"0 0 * * * *", at("2029-06-02T08:15:00Z"), "2029-06-02T09:00:00Z"},
	} {
		got, repeat, ok := Next(c.pattern, nil, from.UnixNano(), c.now)
		if !ok || !repeat || !got.Equal(at(c.want)) {
			t.Errorf("%q: got %v %v %v, want %s", c.pattern, got, repeat, ok, c.want)
		}
	}
	for _, bad := range []string{"", "* * * * *", "60 * * * * *", "* * * 0 * *", "*/0 * * * * *", "@often", "0 0 0 31 2 *"} {
		if _, _, ok := Next(bad, nil, from.UnixNano(), from); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}
