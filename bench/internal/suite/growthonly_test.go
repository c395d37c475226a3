package suite_test

import (
	"context"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/suite"
)

// TestGrowthOnly runs the smallest growth test with GrowthOnly: no
// comparison runs, no durable consumers, and growth points for server A
// alone, each with its restarts measured.
func TestGrowthOnly(t *testing.T) {
	a, b := smokeServers(t)
	cfg := suite.Smoke()
	cfg.TmpDir = t.TempDir()
	cfg.GrowthOnly = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := suite.Run(ctx, cfg, a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 0 || len(d.Durables) != 0 {
		t.Fatalf("growth only recorded %d runs and %d durable points", len(d.Runs), len(d.Durables))
	}
	if len(d.Growth) != len(cfg.GrowthTargets) {
		t.Fatalf("%d growth points, want %d: %+v", len(d.Growth), len(cfg.GrowthTargets), d.Growth)
	}
	for _, g := range d.Growth {
		if g.Server != a.Name || g.Err != "" || g.Msgs != g.Target || g.Recovered != g.Target ||
			g.CleanRestart <= 0 || g.KillRestart <= 0 || g.RestartRSS <= 0 {
			t.Errorf("growth point %+v", g)
		}
	}
}
