package monitor

import (
	"github.com/jetwal/jetwal/internal/proccpu"
	"runtime"
	"testing"
	"time"
)

// TestCPU: the figure is the CPU time used over the wall time since the
// previous sample (the first one: since start), and a sample younger than
// the window is served again.
func TestCPU(t *testing.T) {
	used, ok := proccpu.Used()
	for ok && used < 50*time.Millisecond {
		burn()
		used, ok = proccpu.Used()
	}
	if !ok {
		t.Fatalf("processCPU not measured on %s", runtime.GOOS)
	}
	var c cpuMeter
	// The process used `used` over a wall time ten times as long (and a
	// little more by now): about 10%, never 0 nor more than every core.
	pct := c.percent(time.Now().Add(-10 * used))
	if pct <= 0 || pct > 100*float64(runtime.NumCPU()) {
		t.Fatalf("cpu %v%%, want about 10", pct)
	}
	if again := c.percent(time.Now()); again != pct {
		t.Errorf("a second sample within the window: %v, want %v again", again, pct)
	}
}

func burn() {
	x := 0
	for i := range 10_000_000 {
		x ^= i
	}
	_ = x
}
