package wal

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// clock hands out wall-clock nanoseconds for append timestamps, one per
// append, for less than time.Now costs. It is anchored to time.Now at
// most a second apart, so it follows clock adjustments within a second;
// between anchors it adds the time elapsed since the anchor:
//
//   - where the processor's time-stamp counter is the kernel's clock
//     source (tsc_amd64.go), from the counter: one instruction, about a third of
//     a monotonic clock read, scaled by the rate measured between the
//     last two anchors (or by another clock of the process, tscRate).
//     Until a rate is known, and after the counter went backwards, it
//     falls back to:
//   - time.Since the anchor: one monotonic clock read instead of
//     time.Now's two.
//
// Timestamps never go backwards in a store whichever the source
// (appendLocked keeps each one at least the last). Not safe for
// concurrent use: the store calls it under its lock.
type clock struct {
	wall int64     // wall-clock nanoseconds at the anchor
	mono time.Time // the anchor, with its monotonic reading
	tsc  uint64    // counter at the anchor; 0 when the counter is not used
	mult uint64    // nanoseconds per tick, 32.32 fixed point; 0 = not calibrated
	span uint64    // ticks in a second at that rate: the anchor's lifetime
}

func (c *clock) now() int64 {
	if c.mult != 0 {
		// d < span keeps d*mult near 1e9<<32, far from overflowing; a
		// counter that went backwards wraps d around and re-anchors.
		if d := readTSC() - c.tsc; d < c.span {
			return c.wall + int64(d*c.mult>>32)
		}
	} else if !c.mono.IsZero() {
		if d := time.Since(c.mono); d >= 0 && d <= time.Second {
			return c.wall + int64(d)
		}
	}
	return c.anchor()
}

// tscRate is the counter's last calibrated rate (mult, span), shared by
// every clock of the process: a store's first anchor takes it, so it need
// not count its first second with the monotonic clock.
var tscRate atomic.Pointer[[2]uint64]

// anchor re-reads the wall clock and, with the counter, recalibrates its
// rate over the time since the previous anchor (or takes the rate another
// clock measured).
func (c *clock) anchor() int64 {
	now := time.Now()
	if tscUsable() {
		t := readTSC()
		c.mult, c.span = 0, 0
		if c.tsc != 0 && t > c.tsc {
			var ok bool
			if c.mult, c.span, ok = calibrate(uint64(now.Sub(c.mono)), t-c.tsc); ok {
				tscRate.Store(&[2]uint64{c.mult, c.span})
			}
		}
		if r := tscRate.Load(); c.mult == 0 && r != nil && (c.tsc == 0 || t > c.tsc) {
			c.mult, c.span = r[0], r[1]
		}
		c.tsc = t
	}
	c.mono, c.wall = now, now.UnixNano()
	return c.wall
}

// calibrate returns the counter's rate as nanoseconds per tick in 32.32
// fixed point, and the ticks in one second, from ticks counted over ns
// nanoseconds. Intervals under half a second measure too coarsely (the
// reads at each end are tens of nanoseconds apart; anchors a span apart
// are about a second apart), and rates outside 1 MHz to 100 GHz are not a
// time-stamp counter: ok is false for both.
func calibrate(ns, ticks uint64) (mult, span uint64, ok bool) {
	if ns < uint64(time.Second/2) || ticks < ns/1000 || ticks/100 > ns {
		return 0, 0, false
	}
	// mult = ns<<32 / ticks: 128-bit dividend; the quotient fits, the
	// rate being at most 1000 ns a tick.
	mult, _ = bits.Div64(ns>>32, ns<<32, ticks)
	if mult == 0 {
		return 0, 0, false
	}
	span, _ = bits.Div64(0, uint64(time.Second)<<32, mult)
	return mult, span, true
}
