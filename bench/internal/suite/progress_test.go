package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestLinesThrottleAndFinish(t *testing.T) {
	var buf bytes.Buffer
	l := NewLines(&buf, 10, time.Hour)
	l.Describe("rep 1/1 default jetwal js-fetch 128B")
	l.Add(3)
	if buf.Len() != 0 {
		t.Fatalf("printed before the interval passed: %q", buf.String())
	}
	l.Finish()
	got := buf.String()
	if !strings.HasPrefix(got, "jetwal-bench: 3/10 steps, ") || !strings.HasSuffix(got, ": rep 1/1 default jetwal js-fetch 128B\n") {
		t.Fatalf("line %q", got)
	}
	l.Finish() // nothing new: no second line
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("repeated line: %q", buf.String())
	}
	l = NewLines(&buf, 10, 0)
	l.Add(1)
	l.Add(1)
	if strings.Count(buf.String(), "\n") != 3 {
		t.Fatalf("zero interval should print every step: %q", buf.String())
	}
}

func TestStepsCountsEveryRun(t *testing.T) {
	c := Smoke()
	// 8 workloads in default mode, 5 JetStream ones in sync-always, two
	// servers; one durable-consumers step per server; growth: 3 chunks of
	// 500 to 1500 plus 2 per target, per server.
	if got, want := Steps(c), 2*(8+5)+2+2*(3+2*2); got != want {
		t.Fatalf("Steps = %d, want %d", got, want)
	}
}
