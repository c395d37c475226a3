package suite

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
)

func (r *runner) meta(ctx context.Context) report.Meta {
	return report.Meta{
		Quick:         r.cfg.Quick,
		Started:       time.Now(),
		A:             serverInfo(ctx, r.a),
		B:             serverInfo(ctx, r.b),
		Host:          host(),
		Command:       relArgs(os.Args),
		Reps:          r.cfg.Reps,
		Sizes:         r.cfg.Sizes,
		Modes:         r.cfg.Modes,
		GrowthSize:    r.cfg.GrowthSize,
		GrowthTargets: r.cfg.GrowthTargets,
		Settings:      r.cfg.settings(),
	}
}

func serverInfo(ctx context.Context, s proc.Spec) report.ServerInfo {
	cmds := make(map[proc.Mode]string)
	for _, m := range proc.Modes {
		cmds[m] = s.CommandLine(m)
	}
	for m, c := range cmds {
		cmds[m] = relPath(c)
	}
	return report.ServerInfo{Name: s.Name, Kind: s.Kind, Path: relPath(s.Path), Version: version(ctx, s), Commands: cmds}
}

// relPath writes paths under the working directory (the repository, when
// make runs the harness) relative to it: a report names no machine's
// absolute paths.
func relPath(s string) string {
	wd, err := os.Getwd()
	if err != nil || wd == "/" {
		return s
	}
	return strings.ReplaceAll(s, wd+"/", "")
}

func relArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = relPath(a)
	}
	return out
}

// version asks the binary for its version, trying the usual spellings.
func version(ctx context.Context, s proc.Spec) string {
	for _, arg := range []string{"--version", "version"} {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := exec.CommandContext(c, s.Path, arg).CombinedOutput()
		cancel()
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if err == nil && line != "" && len(line) < 120 {
			return line
		}
	}
	return "unknown"
}

func host() report.Host {
	h := report.Host{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(raw))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
		_ = f.Close()
	}
	return h
}
