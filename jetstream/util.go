package jetstream

import (
	"math"

	"github.com/jetwal/jetwal/subject"
)

// matchFilter reports whether subj matches a store-style filter, where "" and
// ">" match everything.
func matchFilter(filter, subj string) bool {
	if filter == "" || filter == ">" {
		return true
	}
	return subject.Match(filter, subj)
}

// addSat adds two non-negative quantities (nanoseconds, bytes, counts) that
// come from requests, saturating at the largest int64 instead of wrapping.
func addSat(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// addSatU is addSat for unsigned totals.
func addSatU(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
