package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Durable-consumers test names.
const (
	durableStream  = "DURABLES"
	durableSubject = "durables"
)

// durables runs the durable-consumers test against A, then B: many durable
// consumers on one stream, their idle CPU, and restart times.
func (r *runner) durables(ctx context.Context) {
	if r.cfg.Durables == 0 {
		return
	}
	for _, spec := range []proc.Spec{r.a, r.b} {
		if ctx.Err() != nil {
			return
		}
		pt := r.durablesOne(ctx, spec)
		if pt.Err != "" {
			r.note("durable consumers %s: %s", spec.Name, pt.Err)
		}
		r.data.Durables = append(r.data.Durables, pt)
		r.prog.Add(1)
	}
}

func (r *runner) durablesOne(ctx context.Context, spec proc.Spec) report.DurablePoint {
	pt := report.DurablePoint{Server: spec.Name, Consumers: r.cfg.Durables, Msgs: r.cfg.DurableMsgs, IdleWindow: r.cfg.IdleWindow}
	fail := func(format string, args ...any) report.DurablePoint {
		pt.Err = fmt.Sprintf(format, args...)
		return pt
	}
	r.prog.Describe(fmt.Sprintf("durable consumers %s: create %d", spec.Name, r.cfg.Durables))
	s, err := r.startFresh(ctx, spec, proc.ModeDefault)
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		if err := s.Remove(); err != nil {
			r.note("durable consumers %s: cleanup: %v", spec.Name, err)
		}
	}()
	if err := workload.CreateStream(ctx, s.URL(), durableStream, durableSubject); err != nil {
		return fail("%v", err)
	}
	if _, err := workload.PubAsync(ctx, workload.Params{URL: s.URL(), Size: 128, Count: r.cfg.DurableMsgs, Stall: stallTimeout, Subject: durableSubject}); err != nil {
		return fail("fill stream: %v", err)
	}
	proc.SettleDisks() // the fill's writeback is not the creation's
	if pt.CreateTime, err = workload.CreateDurables(ctx, s.URL(), durableStream, r.cfg.Durables); err != nil {
		return fail("%v", err)
	}
	if n, err := workload.StreamConsumers(ctx, s.URL(), durableStream); err != nil || n != r.cfg.Durables {
		return fail("stream info after creating %d consumers: %d consumers, %v", r.cfg.Durables, n, err)
	}

	// The measurement window: the consumers sit idle, nobody is connected.
	// A short pause first lets writes the creation queued settle.
	r.prog.Describe(fmt.Sprintf("durable consumers %s: idle CPU over %s", spec.Name, r.cfg.IdleWindow))
	if err := pause(ctx, r.cfg.IdleWindow/4); err != nil {
		return fail("%v", err)
	}
	cpu0, err := s.CPUTime()
	if err != nil {
		return fail("%v", err)
	}
	t0 := time.Now()
	if err := pause(ctx, r.cfg.IdleWindow); err != nil {
		return fail("%v", err)
	}
	cpu1, err := s.CPUTime()
	if err != nil {
		return fail("%v", err)
	}
	pt.IdleCPU = float64(cpu1-cpu0) / float64(time.Since(t0))
	if m, err := s.Memory(); err == nil {
		pt.RSS, pt.AnonRSS = m.RSS, m.Anon
	}

	r.prog.Describe(fmt.Sprintf("durable consumers %s: restarts", spec.Name))
	if err := s.Stop(restartTimeout); err != nil {
		return fail("clean stop: %v", err)
	}
	if pt.CleanRestart, err = r.restartDurables(ctx, s); err != nil {
		return fail("clean restart: %v", err)
	}
	if err := s.Kill(); err != nil {
		return fail("kill: %v", err)
	}
	if pt.KillRestart, err = r.restartDurables(ctx, s); err != nil {
		return fail("restart after kill -9: %v", err)
	}
	if pt.After, err = workload.StreamConsumers(ctx, s.URL(), durableStream); err != nil {
		return fail("stream info after kill -9 restart: %v", err)
	}
	if pt.After != r.cfg.Durables {
		pt.Err = fmt.Sprintf("%d of %d consumers back after kill -9", pt.After, r.cfg.Durables)
	}
	return pt
}

// restartDurables starts a stopped server and times it until the last
// durable consumer answers a consumer info request.
func (r *runner) restartDurables(ctx context.Context, s *proc.Server) (time.Duration, error) {
	c, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	last := workload.DurableName(r.cfg.Durables - 1)
	t0 := time.Now()
	if err := s.Start(c); err != nil {
		return 0, err
	}
	for {
		_, err := workload.ConsumerInfo(c, s.URL(), durableStream, last)
		if err == nil {
			return time.Since(t0), nil
		}
		if perr := pause(c, 10*time.Millisecond); perr != nil {
			return 0, fmt.Errorf("consumer %s not back: %w (last error: %v)", last, perr, err)
		}
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
