package suite

import (
	"strings"
	"testing"
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
