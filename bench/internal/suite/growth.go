package suite

import (
	"context"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// Growth test constants.
const (
	growthStream  = "GROWTH"
	growthSubject = "growth"
	// restartTimeout bounds one restart of a large store.
	restartTimeout = 10 * time.Minute
	// restartShare is the part of a server's growth budget kept for the
	// restarts rather than appends.
	restartShare = 0.2
)

// growth runs the growth test against A, then B, each with half of what is
// left of the growth budget (with GrowthOnly, against A alone).
func (r *runner) growth(ctx context.Context) {
	if len(r.cfg.GrowthTargets) == 0 {
		return
	}
	end := time.Now().Add(r.cfg.GrowthBudget)
	specs := []proc.Spec{r.a, r.b}
	if r.cfg.GrowthOnly {
		specs = specs[:1]
	}
	for i, spec := range specs {
		if ctx.Err() != nil {
			return
		}
		share := time.Until(end) / time.Duration(len(specs)-i)
		r.growOne(ctx, spec, time.Now().Add(share))
	}
}

// growOne grows one server's stream through every target, measuring memory,
// disk and restart times at each, until its deadline.
func (r *runner) growOne(ctx context.Context, spec proc.Spec, deadline time.Time) {
	steps := growthSteps(r.cfg)
	defer func() { r.skip(steps) }() // whatever was not reached
	r.prog.Describe(fmt.Sprintf("growth %s: start", spec.Name))
	s, err := r.startFresh(ctx, spec, proc.ModeDefault)
	if err != nil {
		r.note("growth %s: %v", spec.Name, err)
		return
	}
	defer func() {
		if err := s.Remove(); err != nil {
			r.note("growth %s: cleanup: %v", spec.Name, err)
		}
	}()
	if err := workload.CreateStream(ctx, s.URL(), growthStream, growthSubject); err != nil {
		r.note("growth %s: %v", spec.Name, err)
		return
	}
	proc.SettleDisks() // the other server's writeback is not this one's
	appendEnd := deadline.Add(-time.Duration(restartShare * float64(time.Until(deadline))))
	var have int64
	for _, target := range r.cfg.GrowthTargets {
		pt := report.GrowthPoint{Server: spec.Name, Target: target}
		var msgs int64
		var took time.Duration
		for have < target {
			if !time.Now().Before(appendEnd) {
				pt.Truncated = true
				break
			}
			n := min(int64(r.cfg.GrowthChunk), target-have)
			r.prog.Describe(fmt.Sprintf("growth %s: append %d/%d", spec.Name, have, target))
			res, err := workload.PubAsync(ctx, workload.Params{
				URL: s.URL(), Size: r.cfg.GrowthSize, Count: int(n),
				MaxTime: time.Until(appendEnd), Stall: stallTimeout, Subject: growthSubject, Window: r.cfg.AsyncWindow,
			})
			if res.Msgs == n {
				steps--
				r.prog.Add(1)
			}
			if err != nil {
				pt.Err = err.Error()
				break
			}
			have += res.Msgs
			msgs += res.Msgs
			took += res.Elapsed
		}
		if took > 0 {
			pt.AppendRate = float64(msgs) / took.Seconds()
			pt.AppendMBs = pt.AppendRate * float64(r.cfg.GrowthSize) / (1 << 20)
		}
		ok := r.measurePoint(ctx, s, &pt)
		steps -= 2
		r.prog.Add(2)
		r.data.Growth = append(r.data.Growth, pt)
		if !ok || pt.Truncated || pt.Err != "" {
			if pt.Truncated {
				r.note("growth %s: time budget ended appends at %d of %d messages", spec.Name, pt.Msgs, target)
			}
			return
		}
	}
}

// measurePoint samples memory and disk, then restarts the server cleanly
// and after SIGKILL, timing each until the stream answers. It reports
// whether the server is still usable.
func (r *runner) measurePoint(ctx context.Context, s *proc.Server, pt *report.GrowthPoint) bool {
	name := s.Spec().Name
	fail := func(format string, args ...any) bool {
		msg := fmt.Sprintf(format, args...)
		if pt.Err == "" {
			pt.Err = msg
		}
		r.note("growth %s at %d: %s", name, pt.Target, msg)
		return false
	}
	got, err := workload.StreamMsgs(ctx, s.URL(), growthStream)
	if err != nil {
		return fail("%v", err)
	}
	pt.Msgs = int64(got)
	if m, err := s.Memory(); err == nil {
		pt.RSS, pt.HWM, pt.AnonRSS = m.RSS, m.HWM, m.Anon
	}
	if d, err := proc.DirSize(s.StoreDir()); err == nil {
		pt.Disk = d
	}

	r.prog.Describe(fmt.Sprintf("growth %s: clean restart at %d", name, pt.Msgs))
	t0 := time.Now()
	if err := s.Stop(restartTimeout); err != nil {
		return fail("clean stop: %v", err)
	}
	pt.StopTime = time.Since(t0)
	took, n, err := r.restart(ctx, s)
	if err != nil {
		return fail("clean restart: %v", err)
	}
	pt.CleanRestart = took
	if n != pt.Msgs {
		r.note("growth %s: clean restart at %d messages came back with %d", name, pt.Msgs, n)
	}
	if m, err := s.Memory(); err == nil {
		pt.RestartRSS, pt.RestartAnonRSS = m.RSS, m.Anon
	}

	r.prog.Describe(fmt.Sprintf("growth %s: kill -9 restart at %d", name, pt.Msgs))
	if err := s.Kill(); err != nil {
		return fail("kill: %v", err)
	}
	took, n, err = r.restart(ctx, s)
	if err != nil {
		return fail("restart after kill -9: %v", err)
	}
	pt.KillRestart, pt.Recovered = took, n
	return true
}

// restart starts a stopped server and times it until the growth stream
// answers, returning the message count it reports.
func (r *runner) restart(ctx context.Context, s *proc.Server) (time.Duration, int64, error) {
	c, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	t0 := time.Now()
	if err := s.Start(c); err != nil {
		return 0, 0, err
	}
	for {
		got, err := workload.StreamMsgs(c, s.URL(), growthStream)
		if err == nil {
			return time.Since(t0), int64(got), nil
		}
		select {
		case <-c.Done():
			return 0, 0, fmt.Errorf("stream %s not back after %s: %w", growthStream, restartTimeout, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
