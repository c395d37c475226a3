package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"
)

func f64(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func us(d time.Duration) string { return f64(float64(d) / float64(time.Microsecond)) }

func writeCSV(w io.Writer, head []string, rows [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("report: csv header: %w", err)
	}
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("report: csv rows: %w", err)
	}
	return nil
}

// WriteRunsCSV writes one line per run.
func WriteRunsCSV(w io.Writer, d *Data) error {
	head := []string{"mode", "rep", "server", "workload", "size_bytes", "count_requested", "cap_s", "msgs", "bytes", "elapsed_s", "msgs_per_s", "mib_per_s", "errors", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "server_cpu_s", "server_cpu_us_per_msg", "client_cpu_us_per_msg", "error"}
	rows := make([][]string, 0, len(d.Runs))
	for _, r := range d.Runs {
		res := r.Result
		row := []string{
			string(r.Mode), strconv.Itoa(r.Rep), r.Server, string(r.Workload), strconv.Itoa(r.Size),
			strconv.Itoa(r.Count), f64(r.Cap.Seconds()), strconv.FormatInt(res.Msgs, 10), strconv.FormatInt(res.Bytes, 10),
			f64(res.Elapsed.Seconds()), f64(res.MsgsPerSec()), f64(res.MBPerSec()), strconv.FormatInt(res.Errors, 10),
		}
		if l := res.Latency; l != nil {
			row = append(row, us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max))
		} else {
			row = append(row, "", "", "", "", "")
		}
		if c, ok := runCPUPerMsg(r); ok {
			row = append(row, f64(r.ServerCPU.Seconds()), f64(c))
		} else {
			row = append(row, "", "")
		}
		if r.ClientCPUMeasured && res.Msgs > 0 {
			row = append(row, f64(CPUPerMsg(r.ClientCPU, res.Msgs)))
		} else {
			row = append(row, "")
		}
		rows = append(rows, append(row, r.Err))
	}
	return writeCSV(w, head, rows)
}

// WriteSummaryCSV writes one line per table row with both servers' medians
// and the ratio.
func WriteSummaryCSV(w io.Writer, d *Data) error {
	head := []string{"mode", "workload", "size_bytes",
		"a_server", "a_runs_ok", "a_msgs", "a_msgs_per_s", "a_mib_per_s", "a_p50_us", "a_p99_us",
		"b_server", "b_runs_ok", "b_msgs", "b_msgs_per_s", "b_mib_per_s", "b_p50_us", "b_p99_us",
		"ratio", "latency_ratio", "a_cpu_us_per_msg", "b_cpu_us_per_msg", "cpu_ratio",
		"a_client_cpu_us_per_msg", "b_client_cpu_us_per_msg"}
	var rows [][]string
	for _, r := range Summarize(d) {
		rows = append(rows, []string{
			string(r.Mode), string(r.Workload), strconv.Itoa(r.Size),
			d.Meta.A.Name, strconv.Itoa(r.A.OK), f64(r.A.Msgs), f64(r.A.Rate), f64(r.A.MBs), us(r.A.P50), us(r.A.P99),
			d.Meta.B.Name, strconv.Itoa(r.B.OK), f64(r.B.Msgs), f64(r.B.Rate), f64(r.B.MBs), us(r.B.P50), us(r.B.P99),
			f64(r.Ratio), f64(r.LatencyRatio), cpuCSV(r.A), cpuCSV(r.B), f64(r.CPURatio),
			clientCPUCSV(r.A), clientCPUCSV(r.B),
		})
	}
	return writeCSV(w, head, rows)
}

// WriteGrowthCSV writes one line per growth point.
func WriteGrowthCSV(w io.Writer, d *Data) error {
	head := []string{"server", "target_msgs", "msgs", "truncated", "append_msgs_per_s", "append_mib_per_s", "rss_bytes", "hwm_bytes", "anon_rss_bytes", "disk_bytes", "stop_s", "clean_restart_s", "restart_rss_bytes", "restart_anon_rss_bytes", "kill_restart_s", "recovered_msgs", "error"}
	var rows [][]string
	for _, g := range d.Growth {
		rows = append(rows, []string{
			g.Server, strconv.FormatInt(g.Target, 10), strconv.FormatInt(g.Msgs, 10), strconv.FormatBool(g.Truncated),
			f64(g.AppendRate), f64(g.AppendMBs), strconv.FormatInt(int64(g.RSS), 10), strconv.FormatInt(int64(g.HWM), 10),
			strconv.FormatInt(int64(g.AnonRSS), 10), strconv.FormatInt(int64(g.Disk), 10), f64(g.StopTime.Seconds()), f64(g.CleanRestart.Seconds()),
			strconv.FormatInt(int64(g.RestartRSS), 10), strconv.FormatInt(int64(g.RestartAnonRSS), 10), f64(g.KillRestart.Seconds()), strconv.FormatInt(g.Recovered, 10), g.Err,
		})
	}
	return writeCSV(w, head, rows)
}

// cpuCSV is a side's median CPU-µs per message, empty without a reading.
func cpuCSV(s Side) string {
	if s.CPURuns == 0 {
		return ""
	}
	return f64(s.CPUPerMsg)
}

// clientCPUCSV is a side's median client CPU-µs per message, empty without
// a reading.
func clientCPUCSV(s Side) string {
	if s.ClientCPURuns == 0 {
		return ""
	}
	return f64(s.ClientCPUPerMsg)
}
