package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Reproduction commands, relative to the repository root.
const (
	cmdFull   = "make bench-compare"
	cmdQuick  = "make bench-compare-quick"
	cmdDirect = "cd bench && go run ./cmd/jetwal-bench -out results -jetwal ../.bin/jetwal -nats-server ../.bin/nats-server"
)

// md accumulates markdown; the first write error sticks.
type md struct {
	w   io.Writer
	err error
}

func (m *md) f(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

func (m *md) table(head []string, rows [][]string) {
	m.f("| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	for _, r := range rows {
		m.f("| %s |\n", strings.Join(r, " | "))
	}
	m.f("\n")
}

// WriteMarkdown writes REPORT.md for d; charts names the PNG files written
// next to it.
func WriteMarkdown(w io.Writer, d *Data, charts []string) error {
	m := &md{w: w}
	rows := Summarize(d)
	a, b := d.Meta.A.Name, d.Meta.B.Name
	mode := "full"
	if d.Meta.Quick {
		mode = "quick"
	}
	m.f("# %s vs %s: benchmark report\n\n", a, b)
	m.f("Generated %s by `jetwal-bench` in **%s** mode; the run took %s.\n", d.Meta.Started.Format(time.RFC3339), mode, d.Meta.Finished.Sub(d.Meta.Started).Round(time.Second))
	m.f("Every figure is the median of %d runs; the runs of the two servers alternate (A then B, then B then A). Ratios are %s / %s: above 1 means %s moved more messages per second (for latency rows: took longer). A ratio is the median of one server's runs over the median of the other's; the ratio per repetition, of the two runs of one repetition, shows how far this machine's noise moves it.\n\n", d.Meta.Reps, a, b, a)
	if d.Meta.Quick {
		m.f("> Quick mode: message counts and time caps are far smaller than in full mode, so the figures are noisy and the 1M-message targets are measured on a few thousand messages. Use `%s` for the real comparison.\n\n", cmdFull)
	}
	m.table([]string{"", "server", "version", "binary"}, [][]string{
		{"A", a, d.Meta.A.Version, "`" + d.Meta.A.Path + "`"},
		{"B", b, d.Meta.B.Version, "`" + d.Meta.B.Path + "`"},
	})
	h := d.Meta.Host
	m.f("Host: %s, %d cores, Linux %s, %s, %s. Other work on the machine adds noise; the ratios are what the targets are judged on.\n\n", h.CPU, h.Cores, h.Kernel, h.GoVersion, h.OS)

	writeReproduce(m, d)
	writeTargets(m, d, rows, a, b)
	for _, mo := range d.Meta.Modes {
		writeThroughput(m, rows, mo, a, b)
	}
	writeLatency(m, rows, a, b)
	writePeaks(m, d)
	writeDisk(m, d, rows)
	writeDurables(m, d)
	writeGrowth(m, d)
	if len(charts) > 0 {
		m.f("## Charts\n\n")
		if slices.Contains(charts, FileSizeChart) {
			m.f("The first chart shows payload throughput (MiB/s) against message size for every workload, both servers, solid lines in the default mode and dashed with both syncing always; the per-workload charts after it show the same runs in messages per second. Legends sit below each plot.\n\n")
		}
		for _, c := range charts {
			m.f("![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
		}
	}
	writeMethod(m, d)
	writeNotes(m, d)
	return m.err
}

func writeReproduce(m *md, d *Data) {
	m.f("## Reproduce\n\n```sh\n")
	m.f("%-28s # full mode: builds jetwal, installs nats-server v2.15.2, about 40 minutes on 2 cores\n", cmdFull)
	m.f("%-28s # quick mode, under 2 minutes\n", cmdQuick)
	m.f("%s [-quick]\n```\n\n", cmdDirect)
	m.f("This report came from `%s`. The servers were started as:\n\n", strings.Join(d.Meta.Command, " "))
	var rows [][]string
	for _, s := range []ServerInfo{d.Meta.A, d.Meta.B} {
		row := []string{s.Name}
		for _, mo := range d.Meta.Modes {
			row = append(row, "`"+s.Commands[mo]+"`")
		}
		rows = append(rows, row)
	}
	head := []string{"server"}
	for _, mo := range d.Meta.Modes {
		head = append(head, string(mo))
	}
	m.table(head, rows)
}

func writeTargets(m *md, d *Data, rows []Row, a, b string) {
	m.f("## Targets\n\nThe ratios %s aims for against %s, at 128 B messages and, for the JetStream workloads, at 16 KiB and 256 KiB. A throughput ratio above 1 means %s moved more messages per second; for the latency row, below 1 means %s answered sooner. CPU-µs per message is the server process's user plus system CPU time over the run (from /proc/PID/stat) divided by the messages moved: it shows the server's own cost even where the client is the bottleneck. Client CPU-µs per message is the same for the benchmark process, where the clients run (getrusage): when it is as large as the server's, the client bounds the throughput and a cheaper server cannot raise it much on this machine's cores. The server CPU time is counted in clock ticks of %s, so a run too short to use one shows as \"< bound\".\n\n", a, b, a, a, proc.CPUResolution)
	var out [][]string
	met := 0
	vs := Judge(rows)
	for _, v := range vs {
		status := v.Status()
		if v.Met {
			status = "**met**"
			met++
		}
		metric := "msgs/s"
		if v.Latency {
			metric = "p50 latency"
		}
		out = append(out, []string{v.Label, v.Measures, SizeLabel(v.Key.Size), string(v.Key.Mode), metric, ratioLabel(v.Ratio), verdictRangeLabel(v), v.Required(), status,
			cpuLabel(v.Row.A), cpuLabel(v.Row.B), cpuRatioLabel(v.Row), clientCPULabel(v.Row)})
	}
	m.table([]string{"target", "what is measured", "size", "mode", "metric", "ratio", "ratio per repetition (lowest–highest)", "required", "status", a + " CPU-µs/msg", b + " CPU-µs/msg", "CPU ratio", "client CPU-µs/msg (" + a + " / " + b + ")"}, out)
	m.f("%d of %d targets met.\n\n", met, len(vs))
	m.targetNotes(d, rows)
}

// targetNotes writes the paragraphs that follow a targets table (in the
// report and in the README): growth rate, memory, durable consumers and
// disk use, each when the data has it.
func (m *md) targetNotes(d *Data, rows []Row) {
	for _, l := range []string{growthRateLine(d), memoryLine(d), durableLine(d), diskLine(d, rows)} {
		if l != "" {
			m.f("%s\n\n", l)
		}
	}
}

func writeThroughput(m *md, rows []Row, mode proc.Mode, a, b string) {
	var out [][]string
	for _, r := range rows {
		if r.Mode != mode {
			continue
		}
		out = append(out, []string{
			string(r.Workload), SizeLabel(r.Size),
			countLabel(r.A.Msgs) + " / " + countLabel(r.B.Msgs),
			sideRate(r.A), sideRate(r.B),
			mbLabel(r.A.MBs), mbLabel(r.B.MBs),
			ratioLabel(r.Ratio), repRangeLabel(r),
			cpuLabel(r.A), cpuLabel(r.B), cpuRatioLabel(r),
			failures(r),
		})
	}
	if len(out) == 0 {
		return
	}
	m.f("## Throughput, %s mode\n\n", mode)
	m.f("CPU-µs/msg: server CPU time (user + system) per message moved, median over the runs; CPU ratio below 1 means %s spent less CPU per message.\n\n", a)
	m.table([]string{"workload", "size", "msgs per run (A / B)", a + " msgs/s", b + " msgs/s", a + " MiB/s", b + " MiB/s", "ratio", "ratio per repetition", a + " CPU-µs/msg", b + " CPU-µs/msg", "CPU ratio", "failed runs (A / B)"}, out)
}

// sideRate is a side's median rate, or "error" when all its runs failed.
func sideRate(s Side) string {
	if s.Broken() {
		return "error"
	}
	return rateLabel(s.Rate)
}

func failures(r Row) string {
	if r.A.Failed == 0 && r.B.Failed == 0 && r.A.Errors == 0 && r.B.Errors == 0 {
		return "0 / 0"
	}
	s := fmt.Sprintf("%d / %d", r.A.Failed, r.B.Failed)
	if r.A.Errors+r.B.Errors > 0 {
		s += fmt.Sprintf(" (errors %d / %d)", r.A.Errors, r.B.Errors)
	}
	if e := r.SideErr(); e != "" {
		s += "; " + e
	}
	return s
}

func writeLatency(m *md, rows []Row, a, b string) {
	var out [][]string
	for _, r := range rows {
		if !r.Latency {
			continue
		}
		out = append(out, []string{
			string(r.Workload), string(r.Mode), SizeLabel(r.Size),
			latencyCell(r.A), latencyCell(r.B), ratioLabel(r.LatencyRatio),
		})
	}
	if len(out) == 0 {
		return
	}
	m.f("## Latency\n\nOne operation outstanding at a time; medians over the runs of each percentile. The ratio compares p50 (below 1 means %s answered faster).\n\n", a)
	m.table([]string{"workload", "mode", "size", a + " p50 / p99 / p99.9", b + " p50 / p99 / p99.9", "p50 ratio"}, out)
}

func latencyCell(s Side) string {
	if s.P50 <= 0 {
		return "—"
	}
	return durLabel(s.P50) + " / " + durLabel(s.P99) + " / " + durLabel(s.P999)
}

func writePeaks(m *md, d *Data) {
	ps := SummarizePeaks(d)
	if len(ps) == 0 {
		return
	}
	m.f("## Peak memory\n\nPeak resident set size of each server process over one session (every workload at every size), from VmHWM in /proc/PID/status, sampled while it runs and just before it is stopped.\n\n")
	var out [][]string
	for _, p := range ps {
		out = append(out, []string{p.Server, string(p.Mode), bytesLabel(p.Median), bytesLabel(p.Max), fmt.Sprint(p.N)})
	}
	m.table([]string{"server", "mode", "median peak RSS", "max peak RSS", "sessions"}, out)
}

func writeGrowth(m *md, d *Data) {
	if len(d.Meta.GrowthTargets) == 0 {
		return
	}
	targets := make([]string, len(d.Meta.GrowthTargets))
	for i, t := range d.Meta.GrowthTargets {
		targets[i] = countLabel(float64(t))
	}
	m.f("## Growth\n\nOne stream grown by async publishes of %s messages to %s messages, each server in its default mode. At each size: memory and disk after the appends, then a clean stop (SIGTERM) and restart, then `kill -9` and restart. Restart time runs from exec until the stream answers a stream info request. RSS is VmRSS; \"anon\" is its anonymous part (RssAnon: heap and stacks), the rest being store file pages mapped into the process, which the kernel reclaims under memory pressure.\n\n", SizeLabel(d.Meta.GrowthSize), strings.Join(targets, ", "))
	if len(d.Growth) == 0 {
		m.f("No growth data was recorded (see the notes).\n\n")
		return
	}
	var out [][]string
	for _, g := range d.Growth {
		stream := countLabel(float64(g.Msgs))
		if g.Truncated {
			stream += fmt.Sprintf(" (of %s: time budget)", countLabel(float64(g.Target)))
		}
		rec := countLabel(float64(g.Recovered))
		if g.KillRestart <= 0 {
			rec = "—"
		}
		out = append(out, []string{
			g.Server, stream, rateLabel(g.AppendRate), rssLabel(g.RSS, g.AnonRSS), bytesLabel(g.Disk),
			durLabel(g.StopTime), durLabel(g.CleanRestart), rssLabel(g.RestartRSS, g.RestartAnonRSS), durLabel(g.KillRestart), rec,
		})
	}
	m.table([]string{"server", "stream msgs", "append msgs/s", "RSS after appends", "disk", "clean stop", "clean restart", "RSS after restart", "kill -9 restart", "msgs after kill -9"}, out)
}

func writeMethod(m *md, d *Data) {
	m.f("## How it was measured\n\n")
	m.f("- Both servers run on 127.0.0.1 as child processes of the bench binary, each with a fresh store directory from `os.MkdirTemp` and a port picked by listening on `:0`. Each repetition of each mode is a session with new servers; within a session every workload runs at every size against A and B in turn, alternating which goes first.\n")
	m.f("- Clients are nats.go in the bench process (new connections per run). Message counts scale with size and every run also has a time cap, so the tables show the messages actually measured per run. The read workloads read the messages both servers stored in the preceding async publish run, so both read the same amount.\n")
	m.f("- Before each timed run the bench calls sync(2) and waits for it, so the run starts with no dirty pages: a server that does not fsync leaves its writes in the page cache, and the kernel would otherwise write them back during the next run, which may be the other server's.\n")
	for _, s := range d.Meta.Settings {
		m.f("- %s\n", s)
	}
	m.f("- Server CPU: the server process's utime + stime from /proc/PID/stat (clock ticks of 10 ms, USER_HZ 100), read just before and just after each run, so it covers the run's connection set-up, consumer creation and every message; divided by the messages the run measured. A short run moves few ticks, so quick-mode CPU figures are coarse.\n")
	m.f("- Workloads that do not touch the store (core pub, pub+sub, request/reply) run in the default mode only.\n\n")
	var out [][]string
	for _, w := range workload.All() {
		out = append(out, []string{string(w.Name), w.Summary})
	}
	m.table([]string{"workload", "what it does"}, out)
}

func writeNotes(m *md, d *Data) {
	var failed []string
	for _, r := range d.Runs {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("rep %d %s %s %s %s: %s", r.Rep, r.Mode, r.Server, r.Workload, SizeLabel(r.Size), oneLine(r.Err)))
		}
	}
	if len(d.Meta.Notes) == 0 && len(failed) == 0 {
		return
	}
	m.f("## Notes\n\n")
	for _, n := range slices.Compact(slices.Clone(d.Meta.Notes)) {
		m.f("- %s\n", oneLine(n))
	}
	const show = 30
	for i, f := range failed {
		if i == show {
			m.f("- … and %d more failed runs (see runs.csv)\n", len(failed)-show)
			break
		}
		m.f("- failed: %s\n", f)
	}
	m.f("\n")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
