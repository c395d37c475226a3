package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}}
	for _, c := range cases {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("Median reordered its input: %v", in)
			}
		}
	}
}

func TestSizeLabel(t *testing.T) {
	for n, want := range map[int]string{16: "16 B", 128: "128 B", 1024: "1 KiB", 16384: "16 KiB", 262144: "256 KiB", 1500: "1500 B", 1 << 20: "1 MiB"} {
		if got := SizeLabel(n); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
}

// synthetic builds data where A is `factor` times faster than B on every
// throughput row, with latency ratio lat.
func synthetic(factor, lat float64) *Data {
	d := &Data{Meta: Meta{
		A: ServerInfo{Name: "jetwal"}, B: ServerInfo{Name: "nats-server"},
		Reps: 3, Sizes: []int{128}, Modes: proc.Modes, Started: time.Unix(0, 0), Finished: time.Unix(60, 0),
	}}
	for _, mode := range proc.Modes {
		for _, w := range workload.All() {
			for rep := 1; rep <= 3; rep++ {
				for i, name := range []string{"jetwal", "nats-server"} {
					el := time.Second
					p50 := 100 * time.Microsecond
					if i == 0 {
						el = time.Duration(float64(time.Second) / factor)
						p50 = time.Duration(float64(p50) * lat)
					}
					// One outlier rep per side must not move the median.
					if rep == 2 {
						el *= 10
					}
					res := workload.Result{Msgs: 1000, Bytes: 128000, Elapsed: el}
					if w.Latency {
						res.Latency = &workload.Latency{N: 1000, P50: p50, P90: p50, P99: p50, P999: p50, Max: p50}
					}
					d.Runs = append(d.Runs, Run{Mode: mode, Rep: rep, Server: name, Workload: w.Name, Size: 128, Count: 1000, Result: res})
				}
			}
		}
	}
	return d
}

func TestSummarizeAndJudge(t *testing.T) {
	rows := Summarize(synthetic(40, 1.1))
	if len(rows) != 2*len(workload.All()) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.A.OK != 3 || r.B.OK != 3 {
			t.Fatalf("row %+v: runs not counted", r.Key)
		}
		if r.Ratio < 39.9 || r.Ratio > 40.1 {
			t.Fatalf("row %+v ratio %v, want 40", r.Key, r.Ratio)
		}
		if r.B.Rate != 1000 {
			t.Fatalf("median rate %v, want 1000 (outlier excluded)", r.B.Rate)
		}
	}
	for _, v := range Judge(rows) {
		if !v.Have || !v.Met {
			t.Errorf("target %q: %+v, want met", v.Label, v)
		}
	}
	// A slower A and a slow reply meet nothing.
	for _, v := range Judge(Summarize(synthetic(0.5, 1.5))) {
		if !v.Have || v.Met {
			t.Errorf("target %q: %+v, want not met", v.Label, v)
		}
	}
	// Failed runs leave the row without a ratio.
	d := synthetic(2, 1)
	for i := range d.Runs {
		if d.Runs[i].Server == "nats-server" {
			d.Runs[i].Err = "boom"
		}
	}
	for _, v := range Judge(Summarize(d)) {
		if v.Have || v.Met {
			t.Errorf("target %q judged without B data: %+v", v.Label, v)
		}
	}
}

// TestJudgeLargeSizes: the 16 KiB and 256 KiB targets are judged at the
// sizes a run covered, each against its own bound, and left out at sizes
// it did not run.
func TestJudgeLargeSizes(t *testing.T) {
	d := synthetic(1.4, 1)
	for _, r := range d.Runs {
		r.Size = 16 << 10
		d.Runs = append(d.Runs, r)
	}
	d.Meta.Sizes = []int{128, 16 << 10}
	got := map[Key]Verdict{}
	for _, v := range Judge(Summarize(d)) {
		if v.Key.Size == 256<<10 {
			t.Errorf("target %q judged at 256 KiB, which did not run", v.Label)
		}
		got[v.Key] = v
	}
	for _, c := range []struct {
		w    workload.Name
		want float64
		met  bool
	}{
		{workload.JSPubAsync, 1.5, false}, {workload.JSFetch, 1.2, true},
		{workload.JSConsume, 1.2, true}, {workload.JSOrdered, 1.2, true},
	} {
		v, ok := got[Key{Mode: proc.ModeDefault, Workload: c.w, Size: 16 << 10}]
		if !ok || !v.Have || v.Want != c.want || v.Met != c.met {
			t.Errorf("%s at 16 KiB: %+v (judged %v), want bound %g met %v", c.w, v, ok, c.want, c.met)
		}
	}
	if v := got[Key{Mode: proc.ModeDefault, Workload: workload.JSFetch, Size: 128}]; !v.Have || v.Met || v.Want != 2 {
		t.Errorf("fetch at 128 B: %+v, want judged against 2x and not met at 1.4x", v)
	}
}

func TestMarkdownAndPerformance(t *testing.T) {
	d := synthetic(3, 0.9)
	d.Meta.Notes = []string{"a note"}
	d.Growth = []GrowthPoint{{Server: "jetwal", Target: 1000, Msgs: 1000, AppendRate: 5000, RSS: 10 << 20, CleanRestart: time.Second, KillRestart: 2 * time.Second, Recovered: 1000}}
	d.Meta.GrowthTargets = []int64{1000}
	d.Meta.GrowthSize = 128
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, []string{"restart.png"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"| JetStream pull consumer, Fetch | messages per second a pull consumer (ephemeral) reads from a stored stream with Fetch batches of up to 1000, acknowledging each message | 128 B | default | msgs/s | 3.00× | 3.00× | ≥ 2× | **met** |",
		"| JetStream async publish, both fsync every write | acknowledged messages per second stored by async publishes, both servers set to fsync before acknowledging (nats-server sync_interval: always) | 128 B | sync-always | msgs/s | 3.00× | 3.00× | ≥ 30× | not met |",
		"8 of 9 targets met", "![restart](restart.png)", "- a note", "make bench-compare"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	buf.Reset()
	if err := WritePerformance(&buf, d); err != nil {
		t.Fatal(err)
	}
	if p := buf.String(); !strings.HasPrefix(p, "## Performance") || !strings.Contains(p, "bench/results/REPORT.md") || !strings.Contains(p, "jetwal at 1000 messages") {
		t.Errorf("performance section:\n%s", p)
	}
}

func TestSpliceReadme(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte("# x\n\nintro\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SpliceReadme(path, []byte("## Performance\n\nv1\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(mustRead(t, path), "\n## After\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SpliceReadme(path, []byte("## Performance\n\nv2\n")); err != nil {
		t.Fatal(err)
	}
	got := string(mustRead(t, path))
	want := "# x\n\nintro\n\n" + ReadmeBegin + "\n## Performance\n\nv2\n" + ReadmeEnd + "\n\n## After\n"
	if got != want {
		t.Fatalf("README:\n%q\nwant\n%q", got, want)
	}
	if err := os.WriteFile(path, []byte(ReadmeEnd+"\n"+ReadmeBegin+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SpliceReadme(path, []byte("x")); err == nil {
		t.Fatal("unbalanced markers accepted")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestChartsSkipEmptyData(t *testing.T) {
	d := synthetic(2, 1)
	dir := t.TempDir()
	names, err := WriteCharts(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	// No growth data: no restart or growth charts; the size overview, 8
	// throughput, 2 latency.
	if len(names) != 11 || names[0] != FileSizeChart {
		t.Fatalf("charts %v", names)
	}
	for _, n := range names {
		b := mustRead(t, filepath.Join(dir, n))
		if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%s is not a PNG", n)
		}
	}
}

// TestBrokenSideReportedAsError checks that a workload whose runs all failed
// on one server shows as an error naming that server, in the tables and in
// the targets, rather than as a missing number.
func TestBrokenSideReportedAsError(t *testing.T) {
	d := synthetic(2, 1)
	for i := range d.Runs {
		if r := &d.Runs[i]; r.Server == "jetwal" && r.Workload == workload.JSFetch {
			r.Err = "workload: create consumer on BENCH_128: consumer API did not answer"
			r.Result = workload.Result{}
		}
	}
	var fetch Verdict
	for _, v := range Judge(Summarize(d)) {
		if v.Key.Workload == workload.JSFetch {
			fetch = v
		}
	}
	if fetch.Have || fetch.Met || fetch.Status() != "not met (jetwal: error: create consumer on BENCH_128: consumer API did not answer)" {
		t.Fatalf("fetch verdict %+v, status %q", fetch, fetch.Status())
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| js-fetch | 128 B | 0 / 1000 | error | 1k |",
		"| 3 / 0; jetwal: error: create consumer on BENCH_128: consumer API did not answer |",
		"| default | msgs/s | — | — | ≥ 2× | not met (jetwal: error: create consumer",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestMemoryLine(t *testing.T) {
	d := synthetic(1, 1)
	d.Meta.GrowthSize = 128
	if memoryLine(d) != "" {
		t.Fatal("memory line without growth data")
	}
	d.Growth = []GrowthPoint{
		{Server: "jetwal", Target: MemoryTarget, Msgs: MemoryTarget, RSS: 40 << 20, AnonRSS: 10 << 20, RestartRSS: 20 << 20},
		{Server: "nats-server", Target: MemoryTarget, Msgs: 600_000, Truncated: true, RSS: 90 << 20},
	}
	want := "Memory after 1M stored 128 B messages (from the growth test): RSS of jetwal 40 MiB (anon 10 MiB) after the appends and 20 MiB after a clean restart; nats-server not measured."
	if got := memoryLine(d); got != want {
		t.Fatalf("memory line\n%q\nwant\n%q", got, want)
	}
	if got := growthRateLine(d); got != "" {
		t.Fatalf("growth rate line %q with nats-server short of 1M", got)
	}
	d.Growth[0].AppendRate = 250_000
	d.Growth[1] = GrowthPoint{Server: "nats-server", Target: MemoryTarget, Msgs: MemoryTarget, AppendRate: 100_000}
	if got, want := growthRateLine(d), "Append rate of the growth test up to 1M messages: jetwal 250k/s, nats-server 100k/s (2.50×; ≥ 1×: met)."; got != want {
		t.Fatalf("growth rate line\n%q\nwant\n%q", got, want)
	}
	d.Growth[0].AppendRate = 90_000
	if got := growthRateLine(d); !strings.HasSuffix(got, "(0.90×; ≥ 1×: not met).") {
		t.Fatalf("growth rate line for a slower jetwal %q", got)
	}
}

func TestDurablesJudgedAndReported(t *testing.T) {
	d := synthetic(1, 1)
	d.Durables = []DurablePoint{
		{Server: "jetwal", Consumers: 1000, Msgs: 10000, IdleCPU: 0.002, IdleWindow: 5 * time.Second, CleanRestart: 300 * time.Millisecond, KillRestart: 400 * time.Millisecond, After: 1000, CreateTime: 800 * time.Millisecond},
		{Server: "nats-server", Consumers: 1000, Msgs: 10000, IdleCPU: 0.05, IdleWindow: 5 * time.Second, CleanRestart: 2 * time.Second, KillRestart: 3 * time.Second, After: 1000, CreateTime: 1200 * time.Millisecond},
	}
	vs := JudgeDurables(d)
	if len(vs) != 2 || !vs[0].IdleMet || !vs[0].RestartMet || vs[1].IdleMet || vs[1].RestartMet {
		t.Fatalf("verdicts %+v", vs)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	if got := createLine(vs); got != "Creating them took 800 ms on jetwal and 1.2 s on nats-server (jetwal faster than nats-server: met)." {
		t.Errorf("create line %q", got)
	}
	slow := []DurableVerdict{vs[0], vs[1]}
	slow[0].Point.CreateTime = 2 * time.Second
	if got := createLine(slow); !strings.HasSuffix(got, ": not met).") {
		t.Errorf("create line for a slower jetwal %q", got)
	}
	for _, want := range []string{"## 1000 durable consumers on one stream", "| jetwal | 1000 | 800 ms | 0.20% |", "| 300 ms | 400 ms | 1000 | met | met |", "| 5.00% |", "| not met | not met |",
		"1000 durable consumers on one stream: jetwal idle CPU 0.20% of a core (≤ 1%: met)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	d.Durables[0].Err = "create durable D00000 (1 of 1000) on DURABLES: consumer API did not answer"
	if got := durableLine(d); !strings.Contains(got, "jetwal: error: create durable D00000") {
		t.Errorf("error line %q", got)
	}
	buf.Reset()
	if err := WriteDurablesCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "\n") != 3 {
		t.Errorf("csv:\n%s", buf.String())
	}
}

// The ratio per repetition pairs the two servers' runs of the same
// repetition; a repetition where either run failed is left out.
func TestRepRange(t *testing.T) {
	d := &Data{Meta: Meta{A: ServerInfo{Name: "jetwal"}, B: ServerInfo{Name: "nats-server"}, Reps: 4, Sizes: []int{128}, Modes: []proc.Mode{proc.ModeDefault}}}
	add := func(rep int, server string, msgs int64, errText string) {
		d.Runs = append(d.Runs, Run{Mode: proc.ModeDefault, Rep: rep, Server: server, Workload: workload.JSPubAsync, Size: 128, Err: errText,
			Result: workload.Result{Msgs: msgs, Bytes: msgs * 128, Elapsed: time.Second}})
	}
	add(1, "jetwal", 1000, "")
	add(1, "nats-server", 1000, "") // 1.00
	add(2, "nats-server", 1000, "")
	add(2, "jetwal", 2500, "") // 2.50, B first
	add(3, "jetwal", 1500, "")
	add(3, "nats-server", 1000, "") // 1.50
	add(4, "jetwal", 9000, "")
	add(4, "nats-server", 0, "workload: stalled") // left out
	rows := Summarize(d)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	if r := rows[0]; r.RepMin != 1 || r.RepMax != 2.5 {
		t.Fatalf("per-repetition range %v-%v, want 1-2.5", r.RepMin, r.RepMax)
	}
	if got := repRangeLabel(rows[0]); got != "1.00–2.50×" {
		t.Fatalf("label %q", got)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	if want := "| 1.00–2.50× |"; !strings.Contains(buf.String(), want) {
		t.Fatalf("report lacks %q:\n%s", want, buf.String())
	}
}

// A workload that records latency is judged on p50 only for a latency
// target; its throughput rows (and throughput targets) show the rate range.
func TestRepRangeLatencyWorkload(t *testing.T) {
	d := &Data{Meta: Meta{A: ServerInfo{Name: "jetwal"}, B: ServerInfo{Name: "nats-server"}, Reps: 1, Sizes: []int{128}, Modes: []proc.Mode{proc.ModeDefault}}}
	for i, name := range []string{"jetwal", "nats-server"} {
		el, p50 := time.Second, 100*time.Microsecond
		if i == 0 {
			el, p50 = el/2, p50/2 // twice the rate, half the latency
		}
		d.Runs = append(d.Runs, Run{Mode: proc.ModeDefault, Rep: 1, Server: name, Workload: workload.ReqReply, Size: 128,
			Result: workload.Result{Msgs: 1000, Bytes: 128000, Elapsed: el, Latency: &workload.Latency{N: 1000, P50: p50, P90: p50, P99: p50, P999: p50, Max: p50}}})
	}
	rows := Summarize(d)
	if got := repRangeLabel(rows[0]); got != "2.00×" {
		t.Fatalf("throughput range %q, want 2.00×", got)
	}
	for _, v := range Judge(rows) {
		if v.Key.Workload == workload.ReqReply {
			if got := verdictRangeLabel(v); got != "0.50×" {
				t.Fatalf("latency target range %q, want 0.50×", got)
			}
			return
		}
	}
	t.Fatal("no request/reply verdict")
}
