package consumerstate

import (
	"flag"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("consumerstate.seed", 0, "seed for randomized tests (0: time-based)")

// testSeed returns the seed for a randomized test and logs how to replay it.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test -run '^%s$' ./consumerstate/ -consumerstate.seed=%d)", seed, t.Name(), seed)
	return seed
}
