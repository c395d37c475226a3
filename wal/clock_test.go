package wal

import (
	"testing"
	"time"
)

// TestCalibrate: the counter's rate from an interval, at counter rates a
// machine may have, and the intervals and rates it refuses.
func TestCalibrate(t *testing.T) {
	for _, hz := range []uint64{1e6, 100e6, 1e9, 2_596_100_000, 3e9, 100e9} {
		for _, ns := range []uint64{uint64(time.Second / 2), uint64(time.Second), uint64(time.Hour)} {
			ticks := hz * (ns / 1e6) / 1e3 // hz * ns/1e9, exact for these values
			mult, span, ok := calibrate(ns, ticks)
			if !ok {
				t.Fatalf("%d Hz over %d ns refused", hz, ns)
			}
			// A second's ticks convert back to a second, within a
			// nanosecond per 2^32 of rounding in mult.
			if got := hz * mult >> 32; got > 1e9 || 1e9-got > 1+hz>>32 {
				t.Errorf("%d Hz over %d ns: a second's ticks read %d ns", hz, ns, got)
			}
			if span < hz-hz/1e6-1 || span > hz+hz/1e6+1 {
				t.Errorf("%d Hz over %d ns: span %d ticks, want about %d", hz, ns, span, hz)
			}
			// The largest product now() forms stays clear of overflow.
			if hi := (span * mult) >> 62; hi != 0 {
				t.Errorf("%d Hz: span*mult = %d near overflow", hz, span*mult)
			}
		}
	}
	for _, c := range []struct{ ns, ticks uint64 }{
		{uint64(time.Second/2) - 1, 1e9}, // too short to measure
		{1e9, 999_999},                   // under 1 MHz
		{1e9, 100e9 + 100},               // over 100 GHz
		{1e9, 0},
	} {
		if _, _, ok := calibrate(c.ns, c.ticks); ok {
			t.Errorf("calibrate(%d ns, %d ticks) accepted", c.ns, c.ticks)
		}
	}
}

// TestClockFollowsWallClock: over more than two anchors (so that, where
// the counter is usable, the clock calibrates and then counts with it),
// every timestamp lies within a millisecond of time.Now read next to it.
func TestClockFollowsWallClock(t *testing.T) {
	var c clock
	end := time.Now().Add(2200 * time.Millisecond)
	for n := 0; ; n++ {
		before := time.Now().UnixNano()
		got := c.now()
		after := time.Now().UnixNano()
		if got < before-int64(time.Millisecond) || got > after+int64(time.Millisecond) {
			t.Fatalf("call %d: clock %d, wall clock between %d and %d", n, got, before, after)
		}
		if time.Now().After(end) {
			break
		}
		if n%1000 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if tscUsable() && c.mult == 0 {
		t.Fatal("the time-stamp counter is usable here, and the clock did not calibrate it in 2.2 s")
	}
	// A new clock (a store opened later) counts with the rate at once.
	var c2 clock
	before := time.Now().UnixNano()
	got := c2.now()
	if after := time.Now().UnixNano(); got < before || got > after {
		t.Fatalf("new clock: %d, wall clock between %d and %d", got, before, after)
	}
	if tscUsable() && c2.mult == 0 {
		t.Fatal("a new clock did not take the rate the first one measured")
	}
}
