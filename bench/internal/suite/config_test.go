package suite

import (
	"strings"
	"testing"

	"github.com/jetwal/jetwal/bench/internal/workload"
)

// TestClientGOGC: the presets set the clients' GOGC and the report's
// settings say so; a negative value (the collector off) is refused.
func TestClientGOGC(t *testing.T) {
	c := Full()
	if c.ClientGOGC != 400 {
		t.Fatalf("full preset ClientGOGC %d, want 400", c.ClientGOGC)
	}
	if s := strings.Join(c.settings(), "\n"); !strings.Contains(s, "GOGC 400") {
		t.Fatalf("settings do not state the clients' GOGC:\n%s", s)
	}
	c.ClientGOGC = 0
	if s := strings.Join(c.settings(), "\n"); !strings.Contains(s, "the process's own GOGC") {
		t.Fatalf("settings with ClientGOGC 0:\n%s", s)
	}
	c.ClientGOGC = -1
	if err := c.Validate(); err == nil {
		t.Fatal("ClientGOGC -1 accepted")
	}
}

// TestCountLargeBudget: the full preset gives payloads of 16 KiB and up
// their own, larger volume per run; smaller ones and the quick preset keep
// the plain budget.
func TestCountLargeBudget(t *testing.T) {
	pub := workload.Workload{Name: workload.JSPubAsync, JetStream: true}
	full, quick := Full(), Quick()
	for _, c := range []struct {
		cfg  Config
		size int
		want int
	}{
		{full, 1 << 10, 512 << 10},
		{full, 16 << 10, 96 << 10},
		{full, 256 << 10, 6 << 10},
		{quick, 16 << 10, int(quick.BytesBudget / (16 << 10))},
		{quick, 256 << 10, quick.MinCount},
	} {
		if got := c.cfg.count(pub, c.size); got != c.want {
			t.Errorf("quick %v, %d B: %d messages a run, want %d", c.cfg.Quick, c.size, got, c.want)
		}
	}
}
