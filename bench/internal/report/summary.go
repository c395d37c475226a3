package report

import (
	"slices"
	"strings"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Key identifies one row: a workload at a size in a mode.
type Key struct {
	Mode     proc.Mode
	Workload workload.Name
	Size     int
}

// Side is one server's medians for a row.
type Side struct {
	// OK is the number of runs that succeeded; Failed those that did not.
	OK, Failed int
	// Msgs is the median number of messages measured per run.
	Msgs float64
	// Rate is the median msgs/s; MBs the median MiB/s.
	Rate, MBs float64
	// Latency percentiles, medians over the runs (zero when not measured).
	P50, P90, P99, P999 time.Duration
	// CPUPerMsg is the median server CPU time per message, in µs, over
	// the CPURuns successful runs that have a CPU reading.
	CPUPerMsg float64
	CPURuns   int
	// ClientCPUPerMsg is the median CPU time per message, in µs, of the
	// benchmark process where the clients run, over ClientCPURuns runs.
	ClientCPUPerMsg float64
	ClientCPURuns   int
	// Errors sums the per-run error counts (nacks, dropped messages).
	Errors int64
	// Err is the error of the first failed run, "" when none failed.
	Err string
}

// Broken reports whether every run of the side failed.
func (s Side) Broken() bool { return s.OK == 0 && s.Failed > 0 }

// Row is one line of the comparison tables.
type Row struct {
	Key
	// AName and BName are the servers' names, for messages.
	AName, BName string
	A, B         Side
	// Ratio is A.Rate/B.Rate, or 0 when either side has no data.
	Ratio float64
	// CPURatio is A.CPUPerMsg/B.CPUPerMsg, or 0 when either side has no
	// CPU reading or B's is zero.
	CPURatio float64
	// LatencyRatio is A.P50/B.P50 for latency workloads, else 0.
	LatencyRatio float64
	Latency      bool
	// RepMin and RepMax are the lowest and highest ratio of one
	// repetition's pair of runs (A's rate over B's, as Ratio), over the
	// repetitions where both runs succeeded; 0 when there are none. They
	// show how much of a ratio is this machine's noise. LatRepMin and
	// LatRepMax are the same for the p50 latency (as LatencyRatio).
	RepMin, RepMax       float64
	LatRepMin, LatRepMax float64
}

// Summarize reduces the runs to one row per key, ordered by mode, workload
// (in workload.All order) and size.
func Summarize(d *Data) []Row {
	type acc struct{ a, b []Run }
	groups := make(map[Key]*acc)
	var keys []Key
	for _, r := range d.Runs {
		k := Key{r.Mode, r.Workload, r.Size}
		g, ok := groups[k]
		if !ok {
			g = &acc{}
			groups[k] = g
			keys = append(keys, k)
		}
		switch r.Server {
		case d.Meta.A.Name:
			g.a = append(g.a, r)
		case d.Meta.B.Name:
			g.b = append(g.b, r)
		}
	}
	slices.SortFunc(keys, compareKeys)
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		row := Row{Key: k, AName: d.Meta.A.Name, BName: d.Meta.B.Name, A: side(g.a), B: side(g.b)}
		if w, err := workload.Lookup(k.Workload); err == nil {
			row.Latency = w.Latency
		}
		if row.A.Rate > 0 && row.B.Rate > 0 {
			row.Ratio = row.A.Rate / row.B.Rate
		}
		if row.A.CPURuns > 0 && row.B.CPURuns > 0 && row.B.CPUPerMsg > 0 {
			row.CPURatio = row.A.CPUPerMsg / row.B.CPUPerMsg
		}
		if row.Latency && row.A.P50 > 0 && row.B.P50 > 0 {
			row.LatencyRatio = float64(row.A.P50) / float64(row.B.P50)
		}
		row.RepMin, row.RepMax = repRange(g.a, g.b, false)
		if row.Latency {
			row.LatRepMin, row.LatRepMax = repRange(g.a, g.b, true)
		}
		rows = append(rows, row)
	}
	return rows
}

// repRange returns the lowest and highest ratio of A's run to B's run of
// the same repetition, over the repetitions where both succeeded.
func repRange(a, b []Run, latency bool) (lo, hi float64) {
	value := func(r Run) float64 {
		if r.Err != "" || r.Result.Msgs == 0 {
			return 0
		}
		if latency {
			if r.Result.Latency == nil {
				return 0
			}
			return float64(r.Result.Latency.P50)
		}
		return r.Result.MsgsPerSec()
	}
	for _, ra := range a {
		for _, rb := range b {
			if ra.Rep != rb.Rep {
				continue
			}
			va, vb := value(ra), value(rb)
			if va <= 0 || vb <= 0 {
				continue
			}
			q := va / vb
			if lo == 0 || q < lo {
				lo = q
			}
			hi = max(hi, q)
		}
	}
	return lo, hi
}

// SideErr describes the sides whose runs all failed, as "jetwal: error:
// …", or returns "" when both sides have data.
func (r Row) SideErr() string {
	var parts []string
	for _, sd := range []struct {
		name string
		s    Side
	}{{r.AName, r.A}, {r.BName, r.B}} {
		if sd.s.Broken() {
			parts = append(parts, sd.name+": error: "+shortErr(sd.s.Err))
		}
	}
	return strings.Join(parts, "; ")
}

// shortErr trims an error message to one short line for a table cell.
func shortErr(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimPrefix(s, "workload: ")
	s = strings.ReplaceAll(s, "|", "/")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

func compareKeys(x, y Key) int {
	if c := modeIndex(x.Mode) - modeIndex(y.Mode); c != 0 {
		return c
	}
	if c := workloadIndex(x.Workload) - workloadIndex(y.Workload); c != 0 {
		return c
	}
	return x.Size - y.Size
}

func modeIndex(m proc.Mode) int {
	if i := slices.Index(proc.Modes, m); i >= 0 {
		return i
	}
	return len(proc.Modes)
}

func workloadIndex(n workload.Name) int {
	for i, w := range workload.All() {
		if w.Name == n {
			return i
		}
	}
	return len(workload.All())
}

func side(runs []Run) Side {
	var s Side
	var msgs, rates, mbs, cpu, clientCPU []float64
	var p50, p90, p99, p999 []time.Duration
	for _, r := range runs {
		if r.Err != "" || r.Result.Msgs == 0 {
			s.Failed++
			if s.Err == "" {
				s.Err = r.Err
				if s.Err == "" {
					s.Err = "no messages measured"
				}
			}
			continue
		}
		s.OK++
		s.Errors += r.Result.Errors
		msgs = append(msgs, float64(r.Result.Msgs))
		rates = append(rates, r.Result.MsgsPerSec())
		mbs = append(mbs, r.Result.MBPerSec())
		if c, ok := runCPUPerMsg(r); ok {
			cpu = append(cpu, c)
		}
		if r.ClientCPUMeasured && r.Result.Msgs > 0 {
			clientCPU = append(clientCPU, CPUPerMsg(r.ClientCPU, r.Result.Msgs))
		}
		if l := r.Result.Latency; l != nil {
			p50 = append(p50, l.P50)
			p90 = append(p90, l.P90)
			p99 = append(p99, l.P99)
			p999 = append(p999, l.P999)
		}
	}
	s.Msgs, s.Rate, s.MBs = Median(msgs), Median(rates), Median(mbs)
	s.CPUPerMsg, s.CPURuns = Median(cpu), len(cpu)
	s.ClientCPUPerMsg, s.ClientCPURuns = Median(clientCPU), len(clientCPU)
	s.P50, s.P90, s.P99, s.P999 = medianDur(p50), medianDur(p90), medianDur(p99), medianDur(p999)
	return s
}

// Median returns the median of v (the mean of the middle two for an even
// count), or 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func medianDur(v []time.Duration) time.Duration {
	f := make([]float64, len(v))
	for i, d := range v {
		f[i] = float64(d)
	}
	return time.Duration(Median(f))
}

// PeakSummary is one server's peak memory in one mode.
type PeakSummary struct {
	Server string
	Mode   proc.Mode
	Median proc.Bytes
	Max    proc.Bytes
	N      int
}

// SummarizePeaks reduces the per-session peaks to a median and a maximum per
// server and mode, A before B.
func SummarizePeaks(d *Data) []PeakSummary {
	var out []PeakSummary
	for _, m := range d.Meta.Modes {
		for _, name := range []string{d.Meta.A.Name, d.Meta.B.Name} {
			var v []float64
			var hi proc.Bytes
			for _, p := range d.Peaks {
				if p.Server == name && p.Mode == m && p.Peak > 0 {
					v = append(v, float64(p.Peak))
					hi = max(hi, p.Peak)
				}
			}
			if len(v) > 0 {
				out = append(out, PeakSummary{Server: name, Mode: m, Median: proc.Bytes(Median(v)), Max: hi, N: len(v)})
			}
		}
	}
	return out
}
