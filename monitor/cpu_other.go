//go:build !unix

package monitor

import "time"

// processCPU is not measured on this platform: "cpu" stays 0.
func processCPU() (time.Duration, bool) { return 0, false }
