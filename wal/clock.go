package wal

import "time"

// clock hands out wall-clock nanoseconds for append timestamps with one
// monotonic clock read per call instead of time.Now's two, re-anchoring to
// the wall clock every second so it follows clock adjustments.
type clock struct {
	wall int64     // wall-clock nanoseconds at anchor
	mono time.Time // anchor, carrying a monotonic reading
}

func (c *clock) now() int64 {
	d := time.Since(c.mono)
	if c.mono.IsZero() || d > time.Second || d < 0 {
		c.mono = time.Now()
		c.wall = c.mono.UnixNano()
		return c.wall
	}
	return c.wall + int64(d)
}
