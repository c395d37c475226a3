package suite

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress receives progress as the suite runs. Calls come from one
// goroutine.
type Progress interface {
	// Describe names the step about to run.
	Describe(step string)
	// Add marks n steps done.
	Add(n int)
}

// NopProgress discards progress.
type NopProgress struct{}

// Describe does nothing.
func (NopProgress) Describe(string) {}

// Add does nothing.
func (NopProgress) Add(int) {}

// Bar is a terminal progress bar.
type Bar struct{ b *progressbar.ProgressBar }

// NewBar draws a progress bar of total steps on w.
func NewBar(w io.Writer, total int) *Bar {
	return &Bar{b: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionOnCompletion(func() { _, _ = io.WriteString(w, "\n") }),
	)}
}

// Describe shows the current step after the bar.
func (b *Bar) Describe(step string) { b.b.Describe(step) }

// Add advances the bar.
func (b *Bar) Add(n int) { _ = b.b.Add(n) }

// Finish fills the bar.
func (b *Bar) Finish() { _ = b.b.Finish() }

// Steps is the number of progress steps a run of cfg reports.
func Steps(cfg Config) int {
	n := 0
	for range cfg.Reps {
		for _, mode := range cfg.Modes {
			for range cfg.Sizes {
				for _, w := range cfg.workloads() {
					if runsIn(w, mode) {
						n += 2
					}
				}
			}
		}
	}
	if cfg.Durables > 0 {
		n += 2
	}
	return n + 2*growthSteps(cfg)
}

// growthSteps is the number of steps the growth test takes per server.
func growthSteps(cfg Config) int {
	if len(cfg.GrowthTargets) == 0 {
		return 0
	}
	last := cfg.GrowthTargets[len(cfg.GrowthTargets)-1]
	chunks := int((last + int64(cfg.GrowthChunk) - 1) / int64(cfg.GrowthChunk))
	return chunks + 2*len(cfg.GrowthTargets)
}

// Lines reports progress as plain lines, at most one per interval, for
// output that is not a terminal (a log file, CI), where a redrawn bar would
// pile up.
type Lines struct {
	w        io.Writer
	total    int
	done     int
	step     string
	every    time.Duration
	last     time.Time
	started  time.Time
	lastDone int
}

// NewLines reports progress of total steps on w, one line per interval.
func NewLines(w io.Writer, total int, interval time.Duration) *Lines {
	now := time.Now()
	return &Lines{w: w, total: total, every: interval, started: now, last: now}
}

// Describe remembers the current step for the next line.
func (l *Lines) Describe(step string) { l.step = step }

// Add counts n steps done and prints a line when the interval has passed.
func (l *Lines) Add(n int) {
	l.done += n
	if time.Since(l.last) >= l.every {
		l.print()
	}
}

// Finish prints the final count.
func (l *Lines) Finish() {
	if l.done != l.lastDone {
		l.print()
	}
}

func (l *Lines) print() {
	l.last = time.Now()
	l.lastDone = l.done
	_, _ = fmt.Fprintf(l.w, "jetwal-bench: %d/%d steps, %s elapsed: %s\n", l.done, l.total, time.Since(l.started).Round(time.Second), l.step)
}
