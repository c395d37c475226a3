package report

import (
	"fmt"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
)

// CPUPerMsg is the server CPU time a run used per message moved, in
// microseconds, or 0 when there were no messages or no CPU reading.
func CPUPerMsg(cpu time.Duration, msgs int64) float64 {
	if msgs <= 0 || cpu < 0 {
		return 0
	}
	return float64(cpu) / float64(time.Microsecond) / float64(msgs)
}

// runCPUPerMsg is CPUPerMsg of a run, with ok false when the run has no
// CPU reading.
func runCPUPerMsg(r Run) (float64, bool) {
	if !r.CPUMeasured || r.Result.Msgs <= 0 {
		return 0, false
	}
	return CPUPerMsg(r.ServerCPU, r.Result.Msgs), true
}

// cpuLabel renders CPU-µs per message with three significant figures; a
// side with no reading shows "—". A median of zero means the server used
// less than one clock tick in the run, so it is shown as the bound that
// gives: "< tick/msgs".
func cpuLabel(s Side) string {
	if s.CPURuns == 0 {
		return "—"
	}
	if s.CPUPerMsg <= 0 {
		if s.Msgs <= 0 {
			return "—"
		}
		return "< " + cpuNum(CPUPerMsg(proc.CPUResolution, int64(s.Msgs)))
	}
	return cpuNum(s.CPUPerMsg)
}

func cpuNum(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// cpuRatioLabel renders A's CPU per message over B's: below 1 means A
// spent less CPU per message.
func cpuRatioLabel(r Row) string { return ratioLabel(r.CPURatio) }

// clientCPULabel renders the client side's CPU-µs per message of both
// servers' runs as "A / B", or "—" when neither has a reading.
func clientCPULabel(r Row) string {
	if r.A.ClientCPURuns == 0 && r.B.ClientCPURuns == 0 {
		return "—"
	}
	side := func(s Side) string {
		if s.ClientCPURuns == 0 {
			return "—"
		}
		return cpuNum(s.ClientCPUPerMsg)
	}
	return side(r.A) + " / " + side(r.B)
}
