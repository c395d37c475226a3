package suite

import (
	"fmt"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Config says what a comparison runs. Use Full, Quick or Smoke and adjust.
type Config struct {
	// Quick marks the quick preset in the report.
	Quick bool
	// Reps is how many times each mode's session is repeated (A and B
	// alternate inside each).
	Reps int
	// Sizes are the payload sizes in bytes.
	Sizes []int
	// Modes are the durability modes to run.
	Modes []proc.Mode
	// Workloads to run; nil means all. Read workloads need JSPubAsync.
	Workloads []workload.Name

	// BytesBudget is the payload volume of one publish or read run; the
	// message count is BytesBudget/size, clamped to [MinCount, MaxCount].
	// Payloads of LargeSize and up take LargeBytesBudget instead (0: the
	// same): at 16 KiB and 256 KiB, 512 MiB went by in about 0.6 s, and
	// one writeback burst moved a repetition's ratio from 1.6x to 1.06x.
	BytesBudget      int64
	LargeBytesBudget int64
	LargeSize        int
	MinCount         int
	MaxCount         int
	// CoreMaxCount caps the core publish workloads, which get twice the
	// bytes budget.
	CoreMaxCount int
	// OneAtATimeCount caps the sync publish and request/reply workloads.
	OneAtATimeCount int
	// AsyncWindow caps the async publish window (0: nats.go's 4000, scaled
	// down for large payloads). A server that fsyncs every message drains
	// a full window slowly, so the quick preset uses a smaller one.
	AsyncWindow int
	// ClientGOGC is the garbage collector's target (GOGC) of this process,
	// whose clients generate the load; the servers keep their own. nats.go
	// allocates every message it receives, and at Go's default of 100 the
	// client's collector made the client the bound of the large-message
	// reads (0: leave the process's setting).
	ClientGOGC int

	// RunCap and MinRunCap bound the time cap of one run; within them the
	// cap is twice the budget left per remaining run.
	RunCap    time.Duration
	MinRunCap time.Duration
	// CompareBudget is the time the comparison phase aims to stay within.
	CompareBudget time.Duration

	// GrowthTargets are the stream sizes of the growth test; empty skips it.
	GrowthTargets []int64
	// GrowthSize is the payload size of growth appends.
	GrowthSize int
	// GrowthChunk is how many messages one append call publishes.
	GrowthChunk int
	// GrowthBudget bounds the whole growth test (both servers).
	GrowthBudget time.Duration
	// GrowthOnly skips the comparison and the durable consumers and runs
	// the growth test against server A alone, with the whole growth budget
	// (to measure one server's memory and restarts quickly).
	GrowthOnly bool

	// Durables is the number of durable consumers the durable-consumers
	// test creates on one stream of DurableMsgs messages; 0 skips it.
	Durables    int
	DurableMsgs int
	// IdleWindow is how long the idle CPU of the consumers is measured.
	IdleWindow time.Duration

	// TmpDir holds the servers' store directories; "" means os.TempDir.
	TmpDir string
}

// DefaultSizes are the payload sizes of the comparison.
var DefaultSizes = []int{16, 128, 1 << 10, 16 << 10, 256 << 10}

// Full is the complete comparison, about 40 minutes on two cores: 1M
// messages per run at 16 B and 128 B and 512 MiB of payload per run above
// (runs of 128 MiB lasted a quarter of a second at 16 KiB and 256 KiB, so a
// consumer's first pull or one scheduling hiccup moved a ratio by tens of
// percent between runs; the per-run time cap still bounds the slow ones),
// 15 minutes of comparison runs, about a minute of durable consumers, and a
// growth test of 24 minutes that aims at 1M, 10M and 100M messages and
// stops appending when its budget ends (marked "of 100M: time budget" in
// the report).
func Full() Config {
	return Config{
		Reps:             3,
		Sizes:            DefaultSizes,
		Modes:            proc.Modes,
		BytesBudget:      512 << 20,
		LargeBytesBudget: 1536 << 20,
		LargeSize:        16 << 10,
		MinCount:         500,
		MaxCount:         1_000_000,
		CoreMaxCount:     2_000_000,
		OneAtATimeCount:  50_000,
		RunCap:           8 * time.Second,
		MinRunCap:        2 * time.Second,
		CompareBudget:    15 * time.Minute,
		GrowthTargets:    []int64{1_000_000, 10_000_000, 100_000_000},
		GrowthSize:       128,
		GrowthChunk:      500_000,
		GrowthBudget:     24 * time.Minute, // 100M each: 4m47s jetwal, 6m1s nats-server on a quiet 2-core machine
		Durables:         1000,
		DurableMsgs:      10_000,
		IdleWindow:       5 * time.Second,
		ClientGOGC:       400,
	}
}

// Quick is a reduced comparison that finishes in under two minutes.
func Quick() Config {
	c := Full()
	c.Quick = true
	c.BytesBudget = 1 << 20
	c.LargeBytesBudget = 0
	c.MinCount = 50
	c.MaxCount = 20_000
	c.CoreMaxCount = 50_000
	c.OneAtATimeCount = 2_000
	c.AsyncWindow = 512
	c.RunCap = 400 * time.Millisecond
	c.MinRunCap = 150 * time.Millisecond
	c.CompareBudget = 70 * time.Second
	c.GrowthTargets = []int64{20_000, 100_000}
	c.GrowthChunk = 20_000
	c.GrowthBudget = 25 * time.Second
	c.DurableMsgs = 1000
	c.IdleWindow = time.Second
	return c
}

// Smoke is the few-second run of the smoke test: one repetition, one size,
// a few hundred messages per run, a tiny growth test.
func Smoke() Config {
	c := Quick()
	c.Reps = 1
	c.Sizes = []int{128}
	c.MinCount = 20
	c.MaxCount = 300
	c.CoreMaxCount = 600
	c.OneAtATimeCount = 100
	c.AsyncWindow = 64
	c.RunCap = 200 * time.Millisecond
	c.MinRunCap = 50 * time.Millisecond
	c.CompareBudget = 5 * time.Second
	c.GrowthTargets = []int64{500, 1500}
	c.GrowthChunk = 500
	c.GrowthBudget = 10 * time.Second
	c.Durables = 50
	c.DurableMsgs = 100
	c.IdleWindow = 300 * time.Millisecond
	return c
}

// Validate reports a config that cannot run.
func (c Config) Validate() error {
	switch {
	case c.Reps < 1:
		return fmt.Errorf("suite: Reps %d < 1", c.Reps)
	case len(c.Sizes) == 0:
		return fmt.Errorf("suite: no message sizes")
	case len(c.Modes) == 0:
		return fmt.Errorf("suite: no modes")
	case c.BytesBudget <= 0 || c.MinCount < 1 || c.MaxCount < c.MinCount:
		return fmt.Errorf("suite: bad counts: budget %d, min %d, max %d", c.BytesBudget, c.MinCount, c.MaxCount)
	case c.ClientGOGC < 0:
		return fmt.Errorf("suite: ClientGOGC %d < 0 (it would turn the clients' garbage collector off)", c.ClientGOGC)
	case c.CoreMaxCount < 1 || c.OneAtATimeCount < 1 || c.AsyncWindow < 0:
		return fmt.Errorf("suite: bad core, one-at-a-time or window counts")
	case c.RunCap <= 0 || c.MinRunCap <= 0 || c.MinRunCap > c.RunCap:
		return fmt.Errorf("suite: bad run caps %s..%s", c.MinRunCap, c.RunCap)
	case len(c.GrowthTargets) > 0 && (c.GrowthSize < 1 || c.GrowthChunk < 1 || c.GrowthBudget <= 0):
		return fmt.Errorf("suite: bad growth settings")
	case c.Durables < 0 || (c.Durables > 0 && (c.DurableMsgs < 1 || c.IdleWindow <= 0)):
		return fmt.Errorf("suite: bad durable-consumers settings")
	}
	for _, s := range c.Sizes {
		if s < 1 {
			return fmt.Errorf("suite: message size %d < 1", s)
		}
	}
	for i, g := range c.GrowthTargets {
		if g < 1 || (i > 0 && g <= c.GrowthTargets[i-1]) {
			return fmt.Errorf("suite: growth targets must increase: %v", c.GrowthTargets)
		}
	}
	for _, n := range c.Workloads {
		if _, err := workload.Lookup(n); err != nil {
			return err
		}
	}
	return nil
}

// workloads returns the selected workloads in report order.
func (c Config) workloads() []workload.Workload {
	all := workload.All()
	if c.Workloads == nil {
		return all
	}
	var out []workload.Workload
	for _, w := range all {
		for _, n := range c.Workloads {
			if w.Name == n {
				out = append(out, w)
			}
		}
	}
	return out
}

// count is the number of messages a run of w at size asks for.
func (c Config) count(w workload.Workload, size int) int {
	switch {
	case w.Latency:
		return c.OneAtATimeCount
	case !w.JetStream:
		return clamp(int(2*c.BytesBudget/int64(size)), c.MinCount, c.CoreMaxCount)
	default:
		return clamp(int(c.budget(size)/int64(size)), c.MinCount, c.MaxCount)
	}
}

// budget is the payload volume of a JetStream run at size.
func (c Config) budget(size int) int64 {
	if c.LargeBytesBudget > 0 && c.LargeSize > 0 && size >= c.LargeSize {
		return c.LargeBytesBudget
	}
	return c.BytesBudget
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// runsIn reports whether w runs in mode: workloads that do not touch the
// store run only in the default mode.
func runsIn(w workload.Workload, mode proc.Mode) bool {
	return w.JetStream || mode == proc.ModeDefault
}

// clientGC describes the clients' garbage collector setting.
func clientGC(gogc int) string {
	if gogc == 0 {
		return "Clients (nats.go, in the benchmark process): the process's own GOGC."
	}
	return fmt.Sprintf("Clients (nats.go, in the benchmark process): GOGC %d, so that their garbage collection weighs less on the client-bound runs; the servers run with their defaults.", gogc)
}

// settings describes the counts and caps for the report.
func (c Config) settings() []string {
	window := "nats.go's default 4000"
	if c.AsyncWindow > 0 {
		window = fmt.Sprint(c.AsyncWindow)
	}
	large := ""
	if c.budget(c.LargeSize) != c.BytesBudget {
		large = fmt.Sprintf(" (%d MiB at %s and up)", c.LargeBytesBudget>>20, report.SizeLabel(c.LargeSize))
	}
	return []string{
		fmt.Sprintf("JetStream publish and read runs: %d MiB of payload per run%s, clamped to %d–%d messages; core publish runs: twice that, at most %d messages; sync publish and request/reply: at most %d operations.",
			c.BytesBudget>>20, large, c.MinCount, c.MaxCount, c.CoreMaxCount, c.OneAtATimeCount),
		fmt.Sprintf("Time cap per run: twice the comparison budget (%s) left per remaining run, between %s and %s. A capped publish run still waits for every acknowledgement it is owed.",
			c.CompareBudget, c.MinRunCap, c.RunCap),
		fmt.Sprintf("Async publish: batches of %s messages, lowered so at most 64 MiB is in flight (256 at 256 KiB); each batch is published, then all its acknowledgements awaited, as `nats bench js pub async --batch` does. Pull batches: 1000 messages, at most 8 MiB (32 at 256 KiB); consumers ack explicitly with MaxAckPending 65536.", window),
		clientGC(c.ClientGOGC),
		fmt.Sprintf("Growth test: %d B messages, appended %d per call, budget %s for both servers (a fifth of each server's share is kept for restarts).",
			c.GrowthSize, c.GrowthChunk, c.GrowthBudget),
		fmt.Sprintf("Durable consumers: %d durable pull consumers created one at a time on a stream of %d messages of 128 B, idle CPU measured from /proc/PID/stat over %s after a settling pause of a quarter of that.",
			c.Durables, c.DurableMsgs, c.IdleWindow),
	}
}
