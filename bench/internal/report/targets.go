package report

import (
	"fmt"
	"strings"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Target is a ratio an earlier issue set for jetwal against nats-server.
type Target struct {
	// Issue is the number of the issue that set the target.
	Issue int
	Label string
	Key   Key
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

// Targets lists the targets, all at 128-byte messages.
func Targets() []Target {
	k := func(m proc.Mode, w workload.Name) Key { return Key{Mode: m, Workload: w, Size: 128} }
	d, s := proc.ModeDefault, proc.ModeSyncAlways
	return []Target{
		{Issue: 4, Label: "core pub, no subscriber", Key: k(d, workload.CorePub), Want: 1},
		{Issue: 4, Label: "core pub + sub", Key: k(d, workload.CorePubSub), Want: 1},
		{Issue: 4, Label: "request/reply p50 latency", Key: k(d, workload.ReqReply), Latency: true, Want: 1.2},
		{Issue: 5, Label: "JS publish async, each in its default mode (jetwal syncs always)", Key: k(d, workload.JSPubAsync), Want: 2},
		{Issue: 5, Label: "JS publish async, both sync always", Key: k(s, workload.JSPubAsync), Want: 30},
		{Issue: 5, Label: "JS sync publish, both sync always", Key: k(s, workload.JSPubSync), Want: 1},
		{Issue: 6, Label: "JS fetch", Key: k(d, workload.JSFetch), Want: 2},
		{Issue: 6, Label: "JS consume", Key: k(d, workload.JSConsume), Want: 1.5},
		{Issue: 6, Label: "JS ordered consumer", Key: k(d, workload.JSOrdered), Want: 1.5},
	}
}

// Judge checks every target against rows.
func Judge(rows []Row) []Verdict {
	byKey := make(map[Key]Row, len(rows))
	for _, r := range rows {
		byKey[r.Key] = r
	}
	var out []Verdict
	for _, t := range Targets() {
		v := Verdict{Target: t}
		if r, ok := byKey[t.Key]; ok {
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

// MemoryTarget is the stream size at which issue 5 asks for both servers'
// memory: "RSS of both servers after 1M stored messages".
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
	return fmt.Sprintf("Memory after %s stored %s messages (issue 5; from the growth test): RSS of %s.",
		countLabel(MemoryTarget), SizeLabel(d.Meta.GrowthSize), strings.Join(parts, "; "))
}
