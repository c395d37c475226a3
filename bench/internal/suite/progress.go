package suite

import (
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
