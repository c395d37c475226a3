package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/suite"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// errHelp is returned after -h printed the usage.
var errHelp = errors.New("help requested")

// options is the parsed command line.
type options struct {
	cfg      suite.Config
	a, b     proc.Spec
	out      string
	readme   string
	rerender string
	progress bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("jetwal-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		quick        = fs.Bool("quick", false, "quick mode: small counts and caps, finishes in under 2 minutes")
		out          = fs.String("out", "bench/results", "directory for REPORT.md, CSV files and charts")
		jetwalPath   = fs.String("jetwal", ".bin/jetwal", "path of the jetwal binary (server A)")
		natsPath     = fs.String("nats-server", ".bin/nats-server", "path of the nats-server binary (server B)")
		aKind        = fs.String("a-kind", string(proc.KindJetwal), "kind of server A: jetwal or nats-server (nats-server here compares the peer with itself)")
		readme       = fs.String("readme", "", "README.md whose Performance section is replaced with this run's (empty: leave it)")
		rerender     = fs.String("rerender", "", "re-render the report from this data.json instead of running")
		reps         = fs.Int("reps", 0, "repetitions per mode (0: preset, 3)")
		sizes        = fs.String("sizes", "", "comma-separated payload sizes in bytes (empty: 16,128,1024,16384,262144)")
		modes        = fs.String("modes", "", "comma-separated modes: default,sync-always,encrypted (empty: default,sync-always; encrypted gives both servers the same key and cipher)")
		workloads    = fs.String("workloads", "", "comma-separated workloads (empty: all); read workloads need js-pub-async")
		growth       = fs.String("growth", "", "comma-separated growth stream sizes, e.g. 1M,10M,100M; 'none' skips (empty: preset, 1M,10M,100M full / 20k,100k quick; appends stop when -growth-budget ends)")
		growthSize   = fs.Int("growth-size", 0, "payload size of growth appends (0: 128)")
		budget       = fs.Duration("budget", 0, "time budget of the comparison phase (0: preset, 15m full / 70s quick)")
		growthBudget = fs.Duration("growth-budget", 0, "time budget of the growth test, both servers (0: preset, 24m full / 25s quick; 24m reaches 100M on 2 cores)")
		tmp          = fs.String("tmp", "", "parent directory of the servers' store directories (empty: $TMPDIR)")
		noProgress   = fs.Bool("no-progress", false, "do not draw a progress bar")
		clientGOGC   = fs.Int("client-gogc", 0, "GOGC of the benchmark process's clients (0: preset, 400; 100 is Go's default); the servers keep theirs")
		growthOnly   = fs.Bool("growth-only", false, "run only the growth test, against server A alone, with the whole -growth-budget")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, errHelp
		}
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := options{out: *out, readme: *readme, rerender: *rerender, progress: !*noProgress}
	o.cfg = suite.Full()
	if *quick {
		o.cfg = suite.Quick()
	}
	if *tmp != "" {
		// Checked here: a missing directory would otherwise skip every
		// session one by one, each with the same note.
		if fi, err := os.Stat(*tmp); err != nil || !fi.IsDir() {
			return options{}, fmt.Errorf("-tmp %s: not an existing directory", *tmp)
		}
	}
	o.cfg.TmpDir = *tmp
	o.cfg.GrowthOnly = *growthOnly
	if *clientGOGC > 0 {
		o.cfg.ClientGOGC = *clientGOGC
	}
	if *reps > 0 {
		o.cfg.Reps = *reps
	}
	if *growthSize > 0 {
		o.cfg.GrowthSize = *growthSize
	}
	if *budget > 0 {
		o.cfg.CompareBudget = *budget
	}
	if *growthBudget > 0 {
		o.cfg.GrowthBudget = *growthBudget
	}
	var err error
	if *sizes != "" {
		if o.cfg.Sizes, err = parseInts(*sizes); err != nil {
			return options{}, fmt.Errorf("-sizes: %w", err)
		}
	}
	if *modes != "" {
		o.cfg.Modes = nil
		for _, m := range strings.Split(*modes, ",") {
			mode := proc.Mode(strings.TrimSpace(m))
			if mode != proc.ModeDefault && mode != proc.ModeSyncAlways && mode != proc.ModeEncrypted {
				return options{}, fmt.Errorf("-modes: unknown mode %q", m)
			}
			o.cfg.Modes = append(o.cfg.Modes, mode)
		}
	}
	if *workloads != "" {
		for _, w := range strings.Split(*workloads, ",") {
			o.cfg.Workloads = append(o.cfg.Workloads, workload.Name(strings.TrimSpace(w)))
		}
	}
	switch *growth {
	case "":
	case "none":
		o.cfg.GrowthTargets = nil
	default:
		counts, err := parseCounts(*growth)
		if err != nil {
			return options{}, fmt.Errorf("-growth: %w", err)
		}
		o.cfg.GrowthTargets = counts
	}
	if err := o.cfg.Validate(); err != nil {
		return options{}, err
	}
	o.b = proc.Spec{Name: "nats-server", Kind: proc.KindNATSServer, Path: *natsPath}
	switch proc.Kind(*aKind) {
	case proc.KindJetwal:
		o.a = proc.Spec{Name: "jetwal", Kind: proc.KindJetwal, Path: *jetwalPath}
	case proc.KindNATSServer:
		// The peer against itself: a check of the harness's fairness.
		o.a = proc.Spec{Name: "nats-server-A", Kind: proc.KindNATSServer, Path: *jetwalPath}
		o.b.Name = "nats-server-B"
	default:
		return options{}, fmt.Errorf("-a-kind: unknown kind %q", *aKind)
	}
	if o.rerender == "" {
		for _, s := range []proc.Spec{o.a, o.b} {
			if err := s.Validate(); err != nil {
				return options{}, fmt.Errorf("%w (run `make build peer` first)", err)
			}
		}
	}
	return o, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// parseCounts parses "1M,10M,50M" or "20000,100k".
func parseCounts(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := int64(1)
		switch {
		case strings.HasSuffix(f, "M"):
			mult, f = 1_000_000, strings.TrimSuffix(f, "M")
		case strings.HasSuffix(f, "k"):
			mult, f = 1_000, strings.TrimSuffix(f, "k")
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("count %q: %w", f, err)
		}
		out = append(out, n*mult)
	}
	return out, nil
}
