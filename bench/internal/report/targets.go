package report

import (
	"fmt"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Target is a ratio an earlier issue set for jetwal against nats-server.
type Target struct {
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
		{Label: "core pub, no subscriber", Key: k(d, workload.CorePub), Want: 1},
		{Label: "core pub + sub", Key: k(d, workload.CorePubSub), Want: 1},
		{Label: "request/reply p50 latency", Key: k(d, workload.ReqReply), Latency: true, Want: 1.2},
		{Label: "JS publish async, each in its default mode (jetwal syncs always)", Key: k(d, workload.JSPubAsync), Want: 2},
		{Label: "JS publish async, both sync always", Key: k(s, workload.JSPubAsync), Want: 30},
		{Label: "JS sync publish, both sync always", Key: k(s, workload.JSPubSync), Want: 1},
		{Label: "JS fetch", Key: k(d, workload.JSFetch), Want: 2},
		{Label: "JS consume", Key: k(d, workload.JSConsume), Want: 1.5},
		{Label: "JS ordered consumer", Key: k(d, workload.JSOrdered), Want: 1.5},
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
			}
		}
		out = append(out, v)
	}
	return out
}
