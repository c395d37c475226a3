package report

import (
	"fmt"
	"strings"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Target is a ratio jetwal aims for against nats-server on one workload.
type Target struct {
	// Label names the target in a few words; Measures says what is
	// measured, for a reader who knows NATS but not this project.
	Label    string
	Measures string
	Key      Key
	// Latency compares median p50 latency (lower is better) instead of
	// throughput.
	Latency bool
	// Want is the bound on the ratio: at least Want for throughput, at most
	// Want for latency.
	Want float64
}

// Verdict is a target checked against a run.
type Verdict struct {
	Target
	// Row is the table row the target was judged on (zero when missing).
	Row   Row
	Ratio float64
	// Have is false when the row is missing or a side has no data.
	Have bool
	Met  bool
	// Err explains a missing ratio when a side's runs all failed, as
	// "<server>: error: …".
	Err string
}

// Status renders the verdict: "met", "not met", "not met (jetwal: error:
// …)" or "no data".
func (v Verdict) Status() string {
	switch {
	case v.Met:
		return "met"
	case v.Have:
		return "not met"
	case v.Err != "":
		return "not met (" + v.Err + ")"
	}
	return "no data"
}

// Required renders the bound, e.g. "≥ 2×".
func (t Target) Required() string {
	if t.Latency {
		return fmt.Sprintf("≤ %g×", t.Want)
	}
	return fmt.Sprintf("≥ %g×", t.Want)
}

// Targets lists the targets: the main ones at 128-byte messages, then the
// large-message ones (16 KiB and 256 KiB) for the JetStream workloads.
func Targets() []Target {
	k := func(m proc.Mode, w workload.Name) Key { return Key{Mode: m, Workload: w, Size: 128} }
	d, s := proc.ModeDefault, proc.ModeSyncAlways
	out := []Target{
		{Label: "core publish, no subscriber", Key: k(d, workload.CorePub), Want: 1,
			Measures: "messages per second one client publishes with core NATS (no JetStream) while nobody subscribes"},
		{Label: "core publish to one subscriber", Key: k(d, workload.CorePubSub), Want: 1,
			Measures: "messages per second delivered from one core NATS publisher to one subscriber on another connection"},
		{Label: "request/reply latency", Key: k(d, workload.ReqReply), Latency: true, Want: 1.2,
			Measures: "median round trip of a core NATS request answered by a responder on another connection, one request at a time (lower is better)"},
		{Label: "JetStream async publish, default settings", Key: k(d, workload.JSPubAsync), Want: 2,
			Measures: "acknowledged messages per second stored by async publishes, each server in its default durability: jetwal fsyncs before it acknowledges, nats-server acknowledges first and syncs to disk every 2 minutes"},
		{Label: "JetStream async publish, both fsync every write", Key: k(s, workload.JSPubAsync), Want: 30,
			Measures: "acknowledged messages per second stored by async publishes, both servers set to fsync before acknowledging (nats-server sync_interval: always)"},
		{Label: "JetStream publish one at a time, both fsync every write", Key: k(s, workload.JSPubSync), Want: 1,
			Measures: "messages per second when each publish waits for its acknowledgement before the next is sent, both servers fsyncing before acknowledging"},
		{Label: "JetStream pull consumer, Fetch", Key: k(d, workload.JSFetch), Want: 2,
			Measures: "messages per second a pull consumer (ephemeral) reads from a stored stream with Fetch batches of up to 1000, acknowledging each message"},
		{Label: "JetStream pull consumer, Consume", Key: k(d, workload.JSConsume), Want: 1.5,
			Measures: "messages per second nats.go's Consume callback reads from a stored stream, acknowledging each message"},
		{Label: "JetStream ordered consumer", Key: k(d, workload.JSOrdered), Want: 1.5,
			Measures: "messages per second an ordered consumer (no acknowledgements) reads from a stored stream"},
	}
	// Large messages: the same workloads at 16 KiB and 256 KiB, where the
	// cost is moving bytes (copies, system calls, the disk) rather than
	// handling messages.
	byName := map[workload.Name]Target{}
	for _, t := range out {
		if t.Key.Mode == d {
			byName[t.Key.Workload] = t
		}
	}
	large := []struct {
		w    workload.Name
		size int
		want float64
	}{
		{workload.JSPubAsync, 16 << 10, 1.5}, {workload.JSPubAsync, 256 << 10, 1.2},
		{workload.JSFetch, 16 << 10, 1.2}, {workload.JSFetch, 256 << 10, 1.2},
		{workload.JSConsume, 16 << 10, 1.2}, {workload.JSConsume, 256 << 10, 1.2},
		{workload.JSOrdered, 16 << 10, 1.2}, {workload.JSOrdered, 256 << 10, 1.2},
	}
	for _, l := range large {
		t := byName[l.w]
		t.Key.Size, t.Want = l.size, l.want
		out = append(out, t)
	}
	return out
}

// Judge checks the targets against rows: every target at a message size
// the rows cover (a run restricted to some sizes is judged on those).
func Judge(rows []Row) []Verdict {
	byKey := make(map[Key]Row, len(rows))
	sizes := map[int]bool{}
	for _, r := range rows {
		byKey[r.Key] = r
		sizes[r.Key.Size] = true
	}
	var out []Verdict
	for _, t := range Targets() {
		if !sizes[t.Key.Size] {
			continue
		}
		v := Verdict{Target: t}
		if r, ok := byKey[t.Key]; ok {
			v.Row = r
			if t.Latency {
				v.Ratio = r.LatencyRatio
			} else {
				v.Ratio = r.Ratio
			}
			v.Have = v.Ratio > 0
			if v.Have {
				v.Met = (t.Latency && v.Ratio <= t.Want) || (!t.Latency && v.Ratio >= t.Want)
			} else {
				v.Err = r.SideErr()
			}
		}
		out = append(out, v)
	}
	return out
}

// MemoryTarget is the stream size at which the report gives both servers'
// memory (RSS after 1M stored messages).
const MemoryTarget = 1_000_000

// MemoryAt returns, per server in A, B order, the growth point of the
// growth test's target stream size, or nil where that point is missing or
// failed.
func MemoryAt(d *Data, target int64) [2]*GrowthPoint {
	var out [2]*GrowthPoint
	for i, name := range serverNames(d) {
		for j := range d.Growth {
			g := &d.Growth[j]
			if g.Server == name && g.Target == target && g.Err == "" && !g.Truncated {
				out[i] = g
			}
		}
	}
	return out
}

// growthRateLine compares the append rates of the growth test at
// MemoryTarget messages, the target being at least 1×; "" unless both
// servers reached it.
func growthRateLine(d *Data) string {
	pts := MemoryAt(d, MemoryTarget)
	if pts[0] == nil || pts[1] == nil || pts[0].AppendRate <= 0 || pts[1].AppendRate <= 0 {
		return ""
	}
	names := serverNames(d)
	ratio := pts[0].AppendRate / pts[1].AppendRate
	status := "not met"
	if ratio >= 1 {
		status = "met"
	}
	return fmt.Sprintf("Append rate of the growth test up to %s messages: %s %s/s, %s %s/s (%s; ≥ 1×: %s).",
		countLabel(MemoryTarget), names[0], rateLabel(pts[0].AppendRate), names[1], rateLabel(pts[1].AppendRate), ratioLabel(ratio), status)
}

// memoryLine renders the RSS of both servers after MemoryTarget stored
// messages, or "" when the growth test did not reach it.
func memoryLine(d *Data) string {
	pts := MemoryAt(d, MemoryTarget)
	if pts[0] == nil && pts[1] == nil {
		return ""
	}
	var parts []string
	for i, name := range serverNames(d) {
		v := "not measured"
		if g := pts[i]; g != nil {
			v = fmt.Sprintf("%s after the appends and %s after a clean restart", rssLabel(g.RSS, g.AnonRSS), rssLabel(g.RestartRSS, g.RestartAnonRSS))
		}
		parts = append(parts, name+" "+v)
	}
	return fmt.Sprintf("Memory after %s stored %s messages (from the growth test): RSS of %s.",
		countLabel(MemoryTarget), SizeLabel(d.Meta.GrowthSize), strings.Join(parts, "; "))
}
