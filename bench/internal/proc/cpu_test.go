//go:build linux

package proc

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPUFields(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want time.Duration
	}{
		// utime 1234 + stime 56 ticks = 1290 ticks of 10 ms.
		{"plain", "77 (jetwal) R 1 77 77 0 -1 4194304 10 0 0 0 1234 56 0 0 20 0 5 0 99 1000 200\n", 12900 * time.Millisecond},
		// A command name with spaces and parentheses must not shift the
		// fields: they are counted from the last ')'.
		{"tricky name", "78 (a) b (c d)) S 1 78 78 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 1 1", 100 * time.Millisecond},
		// Children's times (cutime, cstime: fields 16, 17) are not counted.
		{"children ignored", "79 (x) S 1 79 79 0 -1 0 0 0 0 0 0 1 500 500 20 0 1 0 1 1 1", 10 * time.Millisecond},
	}
	for _, c := range cases {
		got, err := parseStatCPU([]byte(c.raw), "stat")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: CPU %s, want %s", c.name, got, c.want)
		}
	}
	for _, bad := range []string{"", "80 x S", "81 (x) S 1 2 3 4 5 6 7 8 9 10 u 1", "82 (x) S 1 2 3 4 5 6 7 8 9 10 -5 1"} {
		if _, err := parseStatCPU([]byte(bad), "stat"); err == nil {
			t.Errorf("stat %q accepted", bad)
		}
	}
}

func TestTicksToDuration(t *testing.T) {
	for ticks, want := range map[int64]time.Duration{0: 0, 1: 10 * time.Millisecond, 100: time.Second, 12345: 123450 * time.Millisecond} {
		if got := ticksToDuration(ticks); got != want {
			t.Errorf("%d ticks = %s, want %s", ticks, got, want)
		}
	}
}

// TestCPUTimeMatchesRusage checks the tick unit: this process's CPU time
// read from /proc/self/stat must agree with getrusage's, which is in
// microseconds. A wrong USER_HZ would be off by a factor of 10 or more.
func TestCPUTimeMatchesRusage(t *testing.T) {
	rusage := func() time.Duration {
		d, err := SelfCPUTime()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Burn CPU until getrusage shows at least 300 ms, so one tick is small
	// against the total.
	x := uint64(1)
	for rusage() < 300*time.Millisecond {
		for i := 0; i < 1_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	before := rusage()
	got, err := CPUTime(os.Getpid())
	after := rusage()
	if err != nil {
		t.Fatal(err)
	}
	// The kernel rounds the tick counts down; allow two ticks and 10%.
	lo, hi := before-before/10-2*clockTick, after+after/10+2*clockTick
	if got < lo || got > hi {
		t.Fatalf("/proc/self/stat CPU %s, getrusage %s..%s (x=%d)", got, before, after, x)
	}
}
