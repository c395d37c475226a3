// Command driver runs the client programs in compat/programs (nats.js) and
// compat/goclient (nats.go) against jetwal
// and nats-server side by side, each server on a fresh loopback port and an
// empty store, and prints a table of the features whose normalized results
// differ. It exits 1 when a feature differs and is not in the allow-list.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		os.Exit(2)
	}
}

type outcome struct {
	feature         string
	jetwal, natsSrv string
	okJ, okN        bool
}

func run() error {
	jetwalBin := flag.String("jetwal", "../.bin/jetwal", "jetwal binary")
	natsBin := flag.String("nats-server", "../.bin/nats-server", "nats-server binary")
	dir := flag.String("programs", "programs", "directory of the client programs")
	node := flag.String("node", "node", "node executable")
	only := flag.String("features", "", "comma-separated features to run (default: all)")
	allowPath := flag.String("allow", "allow.txt", "allow-list of known differences")
	timeout := flag.Duration("timeout", 90*time.Second, "time limit of one program run")
	verbose := flag.Bool("v", false, "print both results of every feature")
	withGo := flag.Bool("go", true, "also run the nats.go programs (./goclient, built with -go-tool)")
	goTool := flag.String("go-tool", "go", "go command that builds ./goclient")
	flag.Parse()

	if _, err := exec.LookPath(*node); err != nil {
		return fmt.Errorf("node is required to run the client programs (%q): %w", *node, err)
	}
	allow, err := readAllow(*allowPath)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "jetwal-compat-")
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(work)
		}
	}()
	goclient := ""
	if *withGo {
		if goclient, err = buildGoclient(*goTool, work); err != nil {
			return err
		}
	}
	programs, err := listPrograms(*node, nodeFlags(*node), *dir, goclient, *only)
	if err != nil {
		return err
	}

	// Each server also listens for WebSocket clients (websocket.mjs), set
	// in a configuration file both read the same way; the flags give the
	// rest.
	wsJ, confJ, err := wsConfig(work, "jetwal")
	if err != nil {
		return err
	}
	wsN, confN, err := wsConfig(work, "nats-server")
	if err != nil {
		return err
	}
	jw, err := startServer("jetwal", *jetwalBin, work, func(port int, store string) []string {
		return []string{"serve", "-c", confJ, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", store}
	})
	if err != nil {
		keep = true
		return err
	}
	defer jw.stop()
	ns, err := startServer("nats-server", *natsBin, work, func(port int, store string) []string {
		return []string{"-c", confN, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", store}
	})
	if err != nil {
		keep = true
		return err
	}
	defer ns.stop()

	start := time.Now()
	var results []outcome
	for _, p := range programs {
		o := outcome{feature: p.name}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); o.jetwal, o.okJ = runProgram(p, jw.url, wsJ, *timeout) }()
		go func() { defer wg.Done(); o.natsSrv, o.okN = runProgram(p, ns.url, wsN, *timeout) }()
		wg.Wait()
		results = append(results, o)
	}

	failed := report(os.Stdout, results, allow, *verbose)
	fmt.Printf("\n%d features in %s\n", len(results), time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		keep = true
		fmt.Printf("%d feature(s) differ and are not in the allow-list %s; server logs kept in %s\n", failed, *allowPath, work)
		jw.stop()
		ns.stop()
		os.Exit(1)
	}
	return nil
}

// report prints the table and the details of every difference, and returns
// how many features differ in a way the allow-list does not cover.
func report(w *os.File, results []outcome, allow allowList, verbose bool) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "feature\tjetwal\tnats-server\tsame?")
	failed := 0
	diffs := make([][]difference, len(results))
	for i, o := range results {
		verdict := "yes"
		if o.jetwal != o.natsSrv || !o.okJ || !o.okN {
			diffs[i] = jsonDiff(o.jetwal, o.natsSrv, 40)
			if o.okJ && o.okN && allow.allowed(o.feature, diffs[i]) {
				verdict = "no (known, allowed)"
			} else {
				verdict = "NO"
				failed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.feature, status(o.okJ), status(o.okN), verdict)
	}
	tw.Flush()
	for i, o := range results {
		if diffs[i] == nil && !verbose {
			continue
		}
		fmt.Fprintf(w, "\n== %s\n", o.feature)
		for _, d := range diffs[i] {
			note := "NOT ALLOWED"
			if reason, ok := allow[o.feature][d.path]; ok {
				note = "allowed: " + reason
			}
			fmt.Fprintf(w, "   %s\n      (%s)\n", d.text, note)
		}
		if verbose || !o.okJ || !o.okN {
			fmt.Fprintf(w, "   jetwal:      %s\n   nats-server: %s\n", clip(o.jetwal), clip(o.natsSrv))
		}
	}
	for feature, paths := range allow {
		for path := range paths {
			if !seen(results, diffs, feature, path) {
				fmt.Fprintf(w, "\nnote: allow-list entry %s %s did not occur in this run\n", feature, path)
			}
		}
	}
	return failed
}

// seen reports whether the run produced a difference of feature at path;
// entries for features not run this time count as seen.
func seen(results []outcome, diffs [][]difference, feature, path string) bool {
	ran := false
	for i, o := range results {
		if o.feature != feature {
			continue
		}
		ran = true
		for _, d := range diffs[i] {
			if d.path == path {
				return true
			}
		}
	}
	return !ran
}

func status(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "..."
	}
	return strings.TrimSpace(s)
}
