package wal

import (
	"os"
	"strings"
	"sync"
)

// readTSC returns the processor's time-stamp counter (RDTSC, tsc_amd64.s).
func readTSC() uint64

// tscUsable reports whether clock may count with the time-stamp counter:
// only where the kernel uses it as its clock source, which it does only
// once it found the counter constant-rate and in step on every processor
// (on a virtual machine as on hardware). Elsewhere the counter may drift
// between processors or with the processor's frequency.
var tscUsable = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
})
