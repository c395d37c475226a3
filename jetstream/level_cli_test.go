package jetstream

import (
	"strings"
	"testing"
)

// TestCLIBenchCreateAtLevel3: the pinned CLI's `nats bench js pub async
// --create` asks for API level 3 (Nats-Required-Api-Level) when it creates
// its stream; jetwal announces level 3, so the bench runs to the end and
// every message is stored.
func TestCLIBenchCreateAtLevel3(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	out := c.ok([]string{"bench", "js", "pub", "async", "benchsubj", "--create", "--msgs", "1000", "--no-progress"})
	if strings.Contains(out, "api level") {
		t.Fatalf("bench output mentions the api level:\n%s", out)
	}
	s := ts.js.lookup("benchstream")
	if s == nil {
		t.Fatalf("the bench stream was not created:\n%s", out)
	}
	if n := s.store.State().Msgs; n != 1000 {
		t.Fatalf("%d messages stored, want 1000:\n%s", n, out)
	}
}
