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

// TestCLIBenchFastBatch: the pinned CLI's `nats bench js pub fast` needs
// API level 4 and publishes through orbit.go's fast publisher (flow acks,
// the commit PubAck); against jetwal it runs to the end and stores every
// message.
func TestCLIBenchFastBatch(t *testing.T) {
	ts := startServer(t, fastSync())
	c := newCLI(t, ts)
	out := c.ok([]string{"bench", "js", "pub", "fast", "fastsubj", "--create", "--msgs", "2000", "--batch", "50", "--no-progress"})
	s := ts.js.lookup("benchstream")
	if s == nil {
		t.Fatalf("the bench stream was not created:\n%s", out)
	}
	if cfg := s.config(); !cfg.AllowBatchPublish {
		t.Fatalf("bench stream without allow_batched:\n%s", out)
	}
	if n := s.store.State().Msgs; n != 2000 {
		t.Fatalf("%d messages stored, want 2000:\n%s", n, out)
	}
	if n := s.fast.count(); n != 0 {
		t.Fatalf("%d fast batches still open after the bench", n)
	}
}
