package suite

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
)

// runner carries one comparison's state. It is used by one goroutine.
type runner struct {
	cfg  Config
	a, b proc.Spec
	prog Progress
	data *report.Data

	// compareEnd is when the comparison phase should be over; runsLeft
	// counts the runs not yet done, to share the time left between them.
	compareEnd time.Time
	runsLeft   int

	// noConsumers maps a server name to the error of the consumer API
	// request it left unanswered; its read runs are then recorded as
	// errors without waiting for the API again.
	noConsumers map[string]string
}

// Run executes cfg against servers a and b and returns what it measured.
// Failures of single runs are recorded in the data and do not stop the
// suite; an error is returned only for an invalid config or a cancelled ctx.
func Run(ctx context.Context, cfg Config, a, b proc.Spec, prog Progress) (*report.Data, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, s := range []proc.Spec{a, b} {
		if err := s.Validate(); err != nil {
			return nil, err
		}
	}
	if a.Name == b.Name {
		return nil, fmt.Errorf("suite: both servers are named %q", a.Name)
	}
	if prog == nil {
		prog = NopProgress{}
	}
	if cfg.ClientGOGC != 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(cfg.ClientGOGC))
	}
	r := &runner{cfg: cfg, a: a, b: b, prog: prog, data: &report.Data{}, noConsumers: make(map[string]string)}
	r.data.Meta = r.meta(ctx)
	if !cfg.GrowthOnly {
		r.compare(ctx)
		if err := ctx.Err(); err != nil {
			return r.data, err
		}
		r.durables(ctx)
		if err := ctx.Err(); err != nil {
			return r.data, err
		}
	}
	r.growth(ctx)
	r.data.Meta.Finished = time.Now()
	return r.data, ctx.Err()
}

// note records a caveat for the report.
func (r *runner) note(format string, args ...any) {
	r.data.Meta.Notes = append(r.data.Meta.Notes, fmt.Sprintf(format, args...))
}
