// Command raftbench-table turns the output of the raftstore comparison
// benchmarks (go test -bench in raftstore/bench) into a markdown table: one
// row per benchmark, one column per store, and the speed-up of jetwal over
// each peer with its target beside it.
//
//	go test -run '^$' -bench . ./ | tee raw.txt | raftbench-table -o raftstore.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var stores = []string{"jetwal", "raftwal", "boltdb"}

// result is one benchmark line's numbers, by unit.
type result map[string]float64

var lineRE = regexp.MustCompile(`^(Benchmark\S+?)/store=(\w+)(?:-\d+)?\s+\d+\s+(.*)$`)

func parse(r io.Reader) (rows map[string]map[string]result, order []string, header []string, err error) {
	rows = map[string]map[string]result{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "goos:") || strings.HasPrefix(line, "goarch:") || strings.HasPrefix(line, "cpu:") {
			header = append(header, line)
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, store, fields := m[1], m[2], strings.Fields(m[3])
		res := result{}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err == nil {
				res[fields[i+1]] = v
			}
		}
		if rows[name] == nil {
			rows[name] = map[string]result{}
			order = append(order, name)
		}
		rows[name][store] = res
	}
	return rows, order, header, sc.Err()
}

// metric picks the unit a row is compared on, and whether higher is better.
func metric(name string) (unit string, higher bool) {
	switch {
	case strings.HasPrefix(name, "BenchmarkStoreLogs/"):
		return "entries/s", true
	case strings.HasPrefix(name, "BenchmarkOpen/"):
		return "ms/open", false
	default:
		return "ns/op", false
	}
}

// target returns the target for a row against a peer, or 0.
func target(name, peer string) float64 {
	switch {
	case strings.HasPrefix(name, "BenchmarkStoreLogs/") && peer == "raftwal":
		return 1.5
	case strings.HasPrefix(name, "BenchmarkStoreLogs/") && peer == "boltdb":
		return 5
	case strings.HasPrefix(name, "BenchmarkGetLog/") && peer == "raftwal":
		return 2
	}
	return 0
}

func format(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func main() {
	out := flag.String("o", "", "write the table here (default stdout)")
	title := flag.String("title", "jetwal raft store vs raft-wal v0.4.0 vs raft-boltdb/v2 v2.3.1", "table title")
	flag.Parse()
	rows, order, header, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(rows) == 0 {
		fmt.Fprintln(os.Stderr, "raftbench-table: no benchmark lines on stdin")
		os.Exit(1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", *title)
	for _, h := range header {
		fmt.Fprintf(&b, "`%s` ", h)
	}
	b.WriteString("\n\nAll stores on the real disk, durable (each StoreLogs synced before it returns), one `go test -bench` run. " +
		"StoreLogs rows compare entries/s (higher is better); other rows ns/op (lower is better). " +
		"The ×-columns are jetwal's speed-up over each peer, with the target in brackets.\n\n")
	b.WriteString("| benchmark | unit | jetwal | raft-wal | raft-boltdb | × raft-wal | × raft-boltdb |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, name := range order {
		unit, higher := metric(name)
		r := rows[name]
		cells := []string{strings.TrimPrefix(name, "Benchmark"), unit}
		for _, s := range stores {
			if v, ok := r[s][unit]; ok {
				cells = append(cells, format(v))
			} else {
				cells = append(cells, "–")
			}
		}
		ours, okOurs := r["jetwal"][unit]
		for _, peer := range stores[1:] {
			theirs, ok := r[peer][unit]
			if !ok || !okOurs || ours == 0 || theirs == 0 {
				cells = append(cells, "–")
				continue
			}
			ratio := theirs / ours
			if higher {
				ratio = ours / theirs
			}
			cell := fmt.Sprintf("%.2f×", ratio)
			if t := target(name, peer); t > 0 {
				verdict := "met"
				if ratio < t {
					verdict = "missed"
				}
				cell += fmt.Sprintf(" (≥%.1f× %s)", t, verdict)
			}
			cells = append(cells, cell)
		}
		if strings.HasPrefix(name, "BenchmarkOpen/") && okOurs {
			verdict := "met"
			if ours > 200 {
				verdict = "missed"
			}
			cells[len(cells)-2] = fmt.Sprintf("target ≤200 ms: %s", verdict)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	if *out == "" {
		fmt.Print(b.String())
		return
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
