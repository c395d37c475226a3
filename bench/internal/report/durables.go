package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Absolute bounds for many durable consumers on one stream: idle CPU near
// zero and restart within 1 s. Near zero is taken as at most 1% of
// one core.
const (
	IdleCPUBound = 0.01
	RestartBound = 1.0 // seconds
)

// DurableVerdict is the durable-consumer bounds checked for one
// server.
type DurableVerdict struct {
	Point DurablePoint
	// IdleMet and RestartMet say whether the bounds hold; restart counts
	// both the clean and the kill -9 restart.
	IdleMet, RestartMet bool
}

// JudgeDurables checks the bounds for every server measured, A first.
func JudgeDurables(d *Data) []DurableVerdict {
	var out []DurableVerdict
	for _, name := range serverNames(d) {
		for _, p := range d.Durables {
			if p.Server != name {
				continue
			}
			v := DurableVerdict{Point: p}
			if p.Err == "" {
				v.IdleMet = p.IdleCPU <= IdleCPUBound
				v.RestartMet = p.CleanRestart.Seconds() <= RestartBound && p.KillRestart.Seconds() <= RestartBound
			}
			out = append(out, v)
		}
	}
	return out
}

func metLabel(ok bool, p DurablePoint) string {
	switch {
	case p.Err != "":
		return "not met (" + p.Server + ": error: " + shortErr(p.Err) + ")"
	case ok:
		return "met"
	}
	return "not met"
}

func pctLabel(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// writeDurables writes the durable-consumers section of REPORT.md.
func writeDurables(m *md, d *Data) {
	vs := JudgeDurables(d)
	if len(vs) == 0 {
		return
	}
	p0 := vs[0].Point
	m.f("## %s durable consumers on one stream\n\n", countLabel(float64(p0.Consumers)))
	m.f("%d durable pull consumers (explicit ack) created one at a time on one stream of %d messages, each server in its default mode; then nothing connected for %s while the server's CPU time is read from /proc/PID/stat; then a clean restart and a `kill -9` restart, each timed from exec until the last consumer answers a consumer info request. The bounds checked: idle CPU near zero (taken as ≤ 1%% of one core) and both restarts ≤ 1 s.\n\n",
		p0.Consumers, p0.Msgs, durLabel(p0.IdleWindow))
	var out [][]string
	for _, v := range vs {
		p := v.Point
		out = append(out, []string{
			p.Server, fmt.Sprint(p.Consumers), durLabel(p.CreateTime), pctLabel(p.IdleCPU), rssLabel(p.RSS, p.AnonRSS),
			durLabel(p.CleanRestart), durLabel(p.KillRestart), fmt.Sprint(p.After),
			metLabel(v.IdleMet, p), metLabel(v.RestartMet, p),
		})
	}
	m.table([]string{"server", "consumers", "create all", "idle CPU (of one core)", "RSS", "clean restart", "kill -9 restart", "consumers after kill -9", "idle CPU ≤ 1%", "restart ≤ 1 s"}, out)
}

// durableLine is the README's one-line summary of server A's verdict.
func durableLine(d *Data) string {
	vs := JudgeDurables(d)
	if len(vs) == 0 {
		return ""
	}
	var parts []string
	for _, v := range vs {
		p := v.Point
		if p.Err != "" {
			parts = append(parts, p.Server+": error: "+shortErr(p.Err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s idle CPU %s of a core (≤ 1%%: %s), restart %s clean / %s after kill -9 (≤ 1 s: %s)",
			p.Server, pctLabel(p.IdleCPU), metLabel(v.IdleMet, p), durLabel(p.CleanRestart), durLabel(p.KillRestart), metLabel(v.RestartMet, p)))
	}
	line := fmt.Sprintf("%s durable consumers on one stream: %s.", countLabel(float64(vs[0].Point.Consumers)), strings.Join(parts, "; "))
	if c := createLine(vs); c != "" {
		line += " " + c
	}
	return line
}

// createLine compares the time each server took to create the consumers,
// the target being that A (jetwal) is the faster; "" unless both created
// them all.
func createLine(vs []DurableVerdict) string {
	if len(vs) != 2 || vs[0].Point.Err != "" || vs[1].Point.Err != "" || vs[0].Point.CreateTime <= 0 || vs[1].Point.CreateTime <= 0 {
		return ""
	}
	a, b := vs[0].Point, vs[1].Point
	status := "not met"
	if a.CreateTime < b.CreateTime {
		status = "met"
	}
	return fmt.Sprintf("Creating them took %s on %s and %s on %s (%s faster than %s: %s).",
		durLabel(a.CreateTime), a.Server, durLabel(b.CreateTime), b.Server, a.Server, b.Server, status)
}

// WriteDurablesCSV writes one line per server of the durable-consumers test.
func WriteDurablesCSV(w io.Writer, d *Data) error {
	head := []string{"server", "consumers", "stream_msgs", "create_s", "idle_cpu_fraction", "idle_window_s", "rss_bytes", "anon_rss_bytes", "clean_restart_s", "kill_restart_s", "consumers_after_kill", "error"}
	var rows [][]string
	for _, p := range d.Durables {
		rows = append(rows, []string{
			p.Server, strconv.Itoa(p.Consumers), strconv.Itoa(p.Msgs), f64(p.CreateTime.Seconds()), f64(p.IdleCPU),
			f64(p.IdleWindow.Seconds()), strconv.FormatInt(int64(p.RSS), 10), strconv.FormatInt(int64(p.AnonRSS), 10), f64(p.CleanRestart.Seconds()),
			f64(p.KillRestart.Seconds()), strconv.Itoa(p.After), p.Err,
		})
	}
	return writeCSV(w, head, rows)
}
