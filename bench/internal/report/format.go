package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
)

// SizeLabel renders a payload size: "16 B", "1 KiB", "256 KiB".
func SizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// countLabel renders a message count compactly: 950, 20k, 1M, 2.5M.
func countLabel(n float64) string {
	switch {
	case n >= 1e6:
		return trimFloat(n/1e6) + "M"
	case n >= 1e4:
		return trimFloat(n/1e3) + "k"
	}
	return fmt.Sprintf("%.0f", n)
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// rateLabel renders msgs/s with three significant figures.
func rateLabel(v float64) string {
	switch {
	case v <= 0:
		return "—"
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

func mbLabel(v float64) string {
	if v <= 0 {
		return "—"
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func ratioLabel(v float64) string {
	if v <= 0 {
		return "—"
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

// repRangeLabel renders the range of per-repetition throughput ratios,
// "0.81–1.37×", one value when they agree, or "—" when there are none.
func repRangeLabel(r Row) string { return rangeLabel(r.RepMin, r.RepMax) }

// verdictRangeLabel renders the per-repetition range of the ratio a target
// is judged on: p50 latency for latency targets, else throughput.
func verdictRangeLabel(v Verdict) string {
	if v.Latency {
		return rangeLabel(v.Row.LatRepMin, v.Row.LatRepMax)
	}
	return repRangeLabel(v.Row)
}

func rangeLabel(lo, hi float64) string {
	if lo <= 0 {
		return "—"
	}
	l, h := ratioLabel(lo), ratioLabel(hi)
	if l == h {
		return l
	}
	return strings.TrimSuffix(l, "×") + "–" + h
}

// durLabel renders a duration with a unit suited to its size.
func durLabel(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

// rssLabel renders a resident set size with its anonymous part, e.g.
// "2.33 GiB (anon 80 MiB)"; the rest is store file pages mapped in.
func rssLabel(rss, anon proc.Bytes) string {
	if anon <= 0 || rss <= 0 {
		return bytesLabel(rss)
	}
	return bytesLabel(rss) + " (anon " + bytesLabel(anon) + ")"
}

func bytesLabel(b proc.Bytes) string {
	switch {
	case b <= 0:
		return "—"
	case b >= 10<<30:
		return fmt.Sprintf("%.0f GiB", float64(b)/(1<<30))
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", b.MiB())
}
