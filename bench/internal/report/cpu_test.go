package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

func TestCPUPerMsg(t *testing.T) {
	cases := []struct {
		cpu  time.Duration
		msgs int64
		want float64
	}{
		{2 * time.Second, 1_000_000, 2},       // 2 s over 1M messages: 2 µs each
		{10 * time.Millisecond, 4000, 2.5},    // one clock tick over 4000
		{1500 * time.Millisecond, 3, 500_000}, // large messages
		{0, 1000, 0},                          // under one tick
		{time.Second, 0, 0},                   // nothing moved
		{-time.Second, 10, 0},                 // a clock gone backwards
	}
	for _, c := range cases {
		if got := CPUPerMsg(c.cpu, c.msgs); got != c.want {
			t.Errorf("CPUPerMsg(%s, %d) = %v, want %v", c.cpu, c.msgs, got, c.want)
		}
	}
}

// cpuData has one row (js-pub-async, 128 B, default mode) with three runs
// per server; CPU per message is the median over the runs that have a
// reading.
func cpuData() *Data {
	d := &Data{Meta: Meta{A: ServerInfo{Name: "jetwal"}, B: ServerInfo{Name: "nats-server"}, Reps: 3, Sizes: []int{128}, Modes: []proc.Mode{proc.ModeDefault}}}
	add := func(server string, msgs int64, cpu time.Duration, measured bool) {
		d.Runs = append(d.Runs, Run{Mode: proc.ModeDefault, Rep: len(d.Runs) + 1, Server: server, Workload: workload.JSPubAsync, Size: 128,
			Result: workload.Result{Msgs: msgs, Bytes: msgs * 128, Elapsed: time.Second}, ServerCPU: cpu, CPUMeasured: measured,
			// The client used 2 µs per message in every run.
			ClientCPU: time.Duration(msgs) * 2 * time.Microsecond, ClientCPUMeasured: measured})
	}
	// jetwal: 3, 4 and 50 µs per message: median 4.
	add("jetwal", 100_000, 300*time.Millisecond, true)
	add("jetwal", 100_000, 400*time.Millisecond, true)
	add("jetwal", 10_000, 500*time.Millisecond, true)
	// nats-server: 8 and 10 µs per message, one run without a reading:
	// median 9 over two runs.
	add("nats-server", 100_000, 800*time.Millisecond, true)
	add("nats-server", 100_000, time.Second, true)
	add("nats-server", 100_000, 0, false)
	return d
}

func TestCPUSummarizedAndReported(t *testing.T) {
	d := cpuData()
	rows := Summarize(d)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.A.CPUPerMsg != 4 || r.A.CPURuns != 3 || r.B.CPUPerMsg != 9 || r.B.CPURuns != 2 {
		t.Fatalf("CPU per message A %v (%d runs), B %v (%d runs); want 4 (3), 9 (2)", r.A.CPUPerMsg, r.A.CPURuns, r.B.CPUPerMsg, r.B.CPURuns)
	}
	if want := 4.0 / 9; r.CPURatio < want-1e-9 || r.CPURatio > want+1e-9 {
		t.Fatalf("CPU ratio %v, want %v", r.CPURatio, want)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, d, nil); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| jetwal CPU-µs/msg | nats-server CPU-µs/msg | CPU ratio |",
		"| 1.00× | — | 4 | 9 | 0.44× | 0 / 0 |",      // throughput row (no repetition has both runs)
		"| ≥ 2× | not met | 4 | 9 | 0.44× | 2 / 2 |", // targets row
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	buf.Reset()
	if err := WritePerformance(&buf, d); err != nil {
		t.Fatal(err)
	}
	if p := buf.String(); !strings.Contains(p, "| not met | 4 | 9 |") || !strings.Contains(p, "| 1.00× | 4 | 9 | 0.44× |") {
		t.Errorf("performance section lacks CPU figures:\n%s", p)
	}
	buf.Reset()
	if err := WriteSummaryCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	if r.A.ClientCPUPerMsg != 2 || r.A.ClientCPURuns != 3 || r.B.ClientCPURuns != 2 {
		t.Errorf("client CPU A %v (%d runs), B %d runs; want 2 (3), 2 runs", r.A.ClientCPUPerMsg, r.A.ClientCPURuns, r.B.ClientCPURuns)
	}
	if !strings.Contains(buf.String(), ",4,9,0.4444") || !strings.Contains(buf.String(), ",2,2\n") {
		t.Errorf("summary.csv lacks CPU columns:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteRunsCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(buf.String(), "\n"); !strings.Contains(lines[1], ",0.3,3,2,") || !strings.Contains(lines[6], ",,,,") {
		t.Errorf("runs.csv CPU columns:\n%s", buf.String())
	}
}

func TestCPUMissingShowsDash(t *testing.T) {
	d := cpuData()
	for i := range d.Runs {
		if d.Runs[i].Server == "nats-server" {
			d.Runs[i].CPUMeasured = false
		}
	}
	r := Summarize(d)[0]
	if r.B.CPURuns != 0 || r.CPURatio != 0 {
		t.Fatalf("row without B readings: %+v", r)
	}
	if got := cpuLabel(r.B); got != "—" {
		t.Errorf("cpu label %q, want —", got)
	}
	// No tick in a run of 64 messages: under 10 ms / 64 = 156 µs each.
	if got := cpuLabel(Side{CPUPerMsg: 0, CPURuns: 2, Msgs: 64}); got != "< 156" {
		t.Errorf("cpu label of a zero reading %q", got)
	}
	if got := cpuLabel(Side{CPUPerMsg: 1234.4, CPURuns: 1}); got != "1234" {
		t.Errorf("cpu label %q, want 1234", got)
	}
}
