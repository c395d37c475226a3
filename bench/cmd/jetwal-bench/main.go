// Command jetwal-bench compares jetwal with nats-server: it starts both on
// loopback with fresh store directories, runs the same nats.go workloads
// against each (JetStream publish async and sync, fetch, consume, ordered,
// core pub/sub and request/reply at 16 B to 256 KiB, in each server's
// default mode and with both syncing always), repeats the runs alternating
// A and B, runs the growth and restart test, and writes REPORT.md, CSV files
// and PNG charts to -out.
//
// Usage (from the repository root, after `make build peer`):
//
//	jetwal-bench [-quick] [-out bench/results] [-jetwal .bin/jetwal] [-nats-server .bin/nats-server] [-readme README.md]
//
// `make bench-compare` and `make bench-compare-quick` build everything and
// run it. -rerender bench/results/data.json re-renders a report from saved
// data without running servers.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/suite"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintln(stderr, "jetwal-bench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var data *report.Data
	if o.rerender != "" {
		data, err = report.ReadData(o.rerender)
		if err != nil {
			fmt.Fprintln(stderr, "jetwal-bench:", err)
			return 1
		}
	} else {
		fmt.Fprintf(stderr, "jetwal-bench: %s (%s) vs %s (%s), %s mode, output in %s\n",
			o.a.Name, o.a.Path, o.b.Name, o.b.Path, modeName(o.cfg), o.out)
		prog := newProgress(o, stderr)
		start := time.Now()
		data, err = suite.Run(ctx, o.cfg, o.a, o.b, prog)
		prog.Finish()
		if data == nil {
			fmt.Fprintln(stderr, "jetwal-bench:", err)
			return 1
		}
		if err != nil {
			fmt.Fprintln(stderr, "jetwal-bench: interrupted, writing what was measured:", err)
		}
		fmt.Fprintf(stderr, "jetwal-bench: measured in %s\n", time.Since(start).Round(time.Second))
	}
	if werr := report.Write(o.out, data); werr != nil {
		fmt.Fprintln(stderr, "jetwal-bench:", werr)
		return 1
	}
	if o.readme != "" {
		section, rerr := os.ReadFile(filepath.Join(o.out, report.FilePerformance))
		if rerr == nil {
			rerr = report.SpliceReadme(o.readme, section)
		}
		if rerr != nil {
			fmt.Fprintln(stderr, "jetwal-bench:", rerr)
			return 1
		}
	}
	ok := printSummary(stdout, data, o.out)
	if err != nil || ok == 0 {
		return 1
	}
	return 0
}

func modeName(c suite.Config) string {
	if c.Quick {
		return "quick"
	}
	return "full"
}

// printSummary prints the targets and where the report went, and returns
// the number of runs that succeeded.
func printSummary(w io.Writer, d *report.Data, out string) int {
	rows := report.Summarize(d)
	failed := 0
	for _, r := range d.Runs {
		if r.Err != "" {
			failed++
		}
	}
	fmt.Fprintf(w, "%s / %s target ratios:\n", d.Meta.A.Name, d.Meta.B.Name)
	for _, v := range report.Judge(rows) {
		fmt.Fprintf(w, "  %-66s %7s %-12s %7.2fx  %-6s %s\n", v.Label, report.SizeLabel(v.Key.Size), v.Key.Mode, v.Ratio, v.Required(), v.Status())
	}
	fmt.Fprintf(w, "%d runs, %d failed; report: %s\n", len(d.Runs), failed, filepath.Join(out, report.FileReport))
	return len(d.Runs) - failed
}

// finishingProgress is a suite.Progress that is told when the run ends.
type finishingProgress interface {
	suite.Progress
	Finish()
}

type nopProgress struct{ suite.NopProgress }

func (nopProgress) Finish() {}

// newProgress draws a bar on a terminal and prints a line every 15 seconds
// to anything else; -no-progress turns both off.
func newProgress(o options, stderr io.Writer) finishingProgress {
	if !o.progress {
		return nopProgress{}
	}
	steps := suite.Steps(o.cfg)
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return suite.NewBar(stderr, steps)
	}
	return suite.NewLines(stderr, steps, 15*time.Second)
}
