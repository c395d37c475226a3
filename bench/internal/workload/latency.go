package workload

import (
	"slices"
	"time"
)

// Latency summarises per-operation latencies.
type Latency struct {
	N    int
	P50  time.Duration
	P90  time.Duration
	P99  time.Duration
	P999 time.Duration
	Max  time.Duration
}

// Summarize sorts samples in place and returns their percentiles, or nil
// when there are none.
func Summarize(samples []time.Duration) *Latency {
	if len(samples) == 0 {
		return nil
	}
	slices.Sort(samples)
	return &Latency{
		N:    len(samples),
		P50:  quantile(samples, 0.50),
		P90:  quantile(samples, 0.90),
		P99:  quantile(samples, 0.99),
		P999: quantile(samples, 0.999),
		Max:  samples[len(samples)-1],
	}
}

// quantile returns the nearest-rank q-quantile of sorted samples.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}
