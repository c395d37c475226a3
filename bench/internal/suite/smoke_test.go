package suite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/benchtest"
	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/suite"
)

// envAKind switches server A of the smoke test: "nats-server" compares the
// peer with itself, which checks the harness while jetwal cannot serve.
const envAKind = "JETWAL_BENCH_A_KIND"

func smokeServers(t *testing.T) (a, b proc.Spec) {
	b = benchtest.NATSServer(t)
	if os.Getenv(envAKind) == string(proc.KindNATSServer) {
		a = b
		a.Name = "nats-server-A"
		return a, b
	}
	return benchtest.Jetwal(t), b
}

// TestSmoke runs the comparison in its smallest configuration against both
// servers and checks every run succeeded and every output file was written.
func TestSmoke(t *testing.T) {
	a, b := smokeServers(t)
	cfg := suite.Smoke()
	cfg.TmpDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := suite.Run(ctx, cfg, a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Eight workloads in the default mode, the five JetStream ones in
	// sync-always, each against both servers.
	if want := cfg.Reps * len(cfg.Sizes) * 2 * (8 + 5); len(d.Runs) != want {
		t.Fatalf("%d runs recorded, want %d", len(d.Runs), want)
	}
	for _, r := range d.Runs {
		if r.Err != "" || r.Result.Msgs == 0 {
			t.Errorf("run %s %s %s %dB: %d msgs, err %q", r.Mode, r.Server, r.Workload, r.Size, r.Result.Msgs, r.Err)
		}
		if !r.CPUMeasured || r.ServerCPU < 0 {
			t.Errorf("run %s %s %s %dB: server CPU not measured (%s)", r.Mode, r.Server, r.Workload, r.Size, r.ServerCPU)
		}
	}
	for _, n := range d.Meta.Notes {
		t.Errorf("note: %q", n)
	}
	if len(d.Durables) != 2 {
		t.Fatalf("%d durable-consumer points, want 2", len(d.Durables))
	}
	for _, p := range d.Durables {
		if p.Err != "" || p.Consumers != cfg.Durables || p.After != cfg.Durables || p.CleanRestart <= 0 || p.KillRestart <= 0 || p.IdleCPU < 0 || p.RSS <= 0 {
			t.Errorf("durable-consumer point %+v", p)
		}
	}
	if len(d.Peaks) != 2*len(cfg.Modes) {
		t.Errorf("%d peak samples, want %d", len(d.Peaks), 2*len(cfg.Modes))
	}
	for _, p := range d.Peaks {
		if p.Peak <= 0 {
			t.Errorf("no peak RSS for %s %s", p.Server, p.Mode)
		}
	}
	if want := cfg.Reps * len(cfg.Modes); len(d.Disk) != want {
		t.Errorf("%d disk measurements, want one per session (%d)", len(d.Disk), want)
	}
	for _, p := range d.Disk {
		if p.Err != "" || p.MiBps <= 0 {
			t.Errorf("disk measurement %+v", p)
		}
	}
	if len(d.Growth) != 2*len(cfg.GrowthTargets) {
		t.Fatalf("%d growth points, want %d: %+v", len(d.Growth), 2*len(cfg.GrowthTargets), d.Growth)
	}
	for _, g := range d.Growth {
		if g.Err != "" || g.Truncated || g.Msgs != g.Target || g.Recovered != g.Target ||
			g.CleanRestart <= 0 || g.KillRestart <= 0 || g.AppendRate <= 0 || g.RSS <= 0 || g.Disk <= 0 {
			t.Errorf("growth point %+v", g)
		}
	}
	rows := report.Summarize(d)
	for _, v := range report.Judge(rows) {
		if !v.Have {
			t.Errorf("target %q has no ratio: %s", v.Label, v.Status())
		}
	}

	out := t.TempDir()
	t0 := time.Now()
	if err := report.Write(out, d); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written in %s; run %s", time.Since(t0), d.Meta.Finished.Sub(d.Meta.Started))
	md, err := os.ReadFile(filepath.Join(out, report.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Targets", "## Throughput, default mode", "## Throughput, sync-always mode", "## Latency", "## Peak memory", "## Growth", "durable consumers on one stream", "CPU-µs/msg", "make bench-compare", "restart.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, abs := range []string{wd, filepath.Dir(filepath.Dir(filepath.Dir(wd))), cfg.TmpDir, os.TempDir() + "/", "/tmp/"} {
		if strings.Contains(string(md), abs) {
			t.Errorf("REPORT.md names the machine path %q", abs)
		}
	}
	pngs, err := filepath.Glob(filepath.Join(out, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	// The size overview, 8 throughput, 2 latency, restart, growth append
	// and memory.
	if len(pngs) != 14 {
		t.Errorf("%d charts written, want 14: %v", len(pngs), pngs)
	}
	for _, f := range []string{report.FileRuns, report.FileSummary, report.FileGrowth, report.FileDurables, report.FileData, report.FilePerformance} {
		st, err := os.Stat(filepath.Join(out, f))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	back, err := report.ReadData(filepath.Join(out, report.FileData))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != len(d.Runs) || len(back.Growth) != len(d.Growth) {
		t.Errorf("data.json round trip lost runs or growth points")
	}
}
