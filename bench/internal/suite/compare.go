package suite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/report"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// startTimeout bounds starting a server with an empty store.
const startTimeout = time.Minute

// stallTimeout fails a run that makes no progress for this long.
const stallTimeout = 30 * time.Second

// pair is the two servers of one session; index 0 is A, 1 is B.
type pair [2]*proc.Server

// compare runs every session: each repetition of each mode with fresh
// servers.
func (r *runner) compare(ctx context.Context) {
	r.runsLeft = r.compareRuns()
	r.compareEnd = time.Now().Add(r.cfg.CompareBudget)
	for rep := 1; rep <= r.cfg.Reps; rep++ {
		for _, mode := range r.cfg.Modes {
			if ctx.Err() != nil {
				return
			}
			r.session(ctx, rep, mode)
		}
	}
}

func (r *runner) compareRuns() int {
	n := 0
	for range r.cfg.Sizes {
		for _, w := range r.cfg.workloads() {
			for _, m := range r.cfg.Modes {
				if runsIn(w, m) {
					n += 2
				}
			}
		}
	}
	return n * r.cfg.Reps
}

// sessionRuns is the number of runs one session of mode makes.
func (r *runner) sessionRuns(mode proc.Mode) int {
	n := 0
	for _, w := range r.cfg.workloads() {
		if runsIn(w, mode) {
			n += 2
		}
	}
	return n * len(r.cfg.Sizes)
}

// session starts both servers fresh, runs every size and workload against
// both, and records each server's peak memory.
func (r *runner) session(ctx context.Context, rep int, mode proc.Mode) {
	var srv pair
	defer func() {
		for _, s := range srv {
			if s != nil {
				if err := s.Remove(); err != nil {
					r.note("rep %d %s: cleanup: %v", rep, mode, err)
				}
			}
		}
	}()
	r.measureDisk(rep, mode)
	for i, spec := range []proc.Spec{r.a, r.b} {
		s, err := r.startFresh(ctx, spec, mode)
		if err != nil {
			r.note("rep %d %s: %v; session skipped", rep, mode, err)
			r.skip(r.sessionRuns(mode))
			return
		}
		srv[i] = s
	}
	for si, size := range r.cfg.Sizes {
		r.sizeRuns(ctx, rep, mode, srv, si, size)
	}
	for _, s := range srv {
		if err := s.Stop(stallTimeout); err != nil {
			r.note("rep %d %s: stop %s: %v", rep, mode, s.Spec().Name, err)
		}
		r.data.Peaks = append(r.data.Peaks, report.Peak{Server: s.Spec().Name, Mode: mode, Rep: rep, Peak: s.PeakRSS()})
	}
}

// measureDisk records the durable write rate of the disk under the store
// directories, with nothing else writing: the ceiling of a server that
// syncs before it acknowledges.
func (r *runner) measureDisk(rep int, mode proc.Mode) {
	total := int64(report.DiskMeasureBytes)
	if r.cfg.Quick {
		total = report.DiskMeasureBytesQuick
	}
	proc.SettleDisks()
	p := report.DiskPoint{Mode: mode, Rep: rep}
	rate, err := proc.MeasureDiskWrite(r.cfg.TmpDir, total)
	if err != nil {
		p.Err = err.Error()
		r.note("rep %d %s: %v", rep, mode, err)
	} else {
		p.MiBps = rate
	}
	r.data.Disk = append(r.data.Disk, p)
}

func (r *runner) startFresh(ctx context.Context, spec proc.Spec, mode proc.Mode) (*proc.Server, error) {
	s, err := proc.New(spec, mode, r.cfg.TmpDir)
	if err != nil {
		return nil, err
	}
	c, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.Start(c); err != nil {
		return nil, errors.Join(err, s.Remove())
	}
	return s, nil
}

// skip advances the progress and the run budget past n runs not made.
func (r *runner) skip(n int) {
	r.runsLeft -= n
	r.prog.Add(n)
}

// names of the streams and subjects one size uses.
type names struct {
	stream, subject         string // filled by async publish, read by readers
	syncStream, syncSubject string // sync publish
	core                    string // core subjects
}

func namesFor(size int) names {
	return names{
		stream:      fmt.Sprintf("BENCH_%d", size),
		subject:     fmt.Sprintf("bench.%d", size),
		syncStream:  fmt.Sprintf("SYNC_%d", size),
		syncSubject: fmt.Sprintf("sync.%d", size),
		core:        fmt.Sprintf("core.%d", size),
	}
}

// sizeRuns runs every workload at one size against both servers,
// alternating which goes first.
func (r *runner) sizeRuns(ctx context.Context, rep int, mode proc.Mode, srv pair, si, size int) {
	n := namesFor(size)
	ok := [2]bool{true, true}
	for i, s := range srv {
		if err := r.makeStreams(ctx, s, n); err != nil {
			r.note("rep %d %s size %d: %v", rep, mode, size, err)
			ok[i] = false
		}
	}
	for wi, w := range r.cfg.workloads() {
		if !runsIn(w, mode) {
			continue
		}
		readCount := 0
		if w.Reads {
			readCount = r.readable(ctx, srv, n.stream)
		}
		order := [2]int{0, 1}
		if (rep+si+wi)%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, i := range order {
			run := report.Run{Mode: mode, Rep: rep, Server: srv[i].Spec().Name, Workload: w.Name, Size: size, Count: r.cfg.count(w, size)}
			if w.Reads {
				run.Count = min(run.Count, readCount)
			}
			run.Cap = r.nextCap()
			r.prog.Describe(fmt.Sprintf("rep %d/%d %s %s %s %dB", rep, r.cfg.Reps, mode, run.Server, w.Name, size))
			_, noCons := r.noConsumers[run.Server]
			switch {
			case !ok[i]:
				run.Err = "server unavailable or streams not created"
			case w.Reads && noCons:
				run.Err = "not run: " + workload.ErrConsumerAPI.Error() + " in an earlier run"
			case w.Reads && run.Count == 0:
				run.Err = "no messages stored by both servers to read"
			default:
				proc.SettleDisks() // the previous run's writeback is not this run's
				cpu0, cpuErr0 := srv[i].CPUTime()
				self0, selfErr0 := proc.SelfCPUTime()
				res, err := w.Run(ctx, r.params(srv[i], w, n, size, run.Count, run.Cap))
				self1, selfErr1 := proc.SelfCPUTime()
				cpu1, cpuErr1 := srv[i].CPUTime()
				if selfErr0 == nil && selfErr1 == nil && self1 >= self0 {
					run.ClientCPU, run.ClientCPUMeasured = self1-self0, true
				}
				run.Result = res
				if cpuErr0 == nil && cpuErr1 == nil && cpu1 >= cpu0 {
					run.ServerCPU, run.CPUMeasured = cpu1-cpu0, true
				}
				if err != nil {
					run.Err = err.Error()
					if errors.Is(err, workload.ErrConsumerAPI) {
						r.noConsumers[run.Server] = err.Error()
						r.note("%s did not answer the consumer API (rep %d %s %s %dB: %v); its later read runs are recorded as errors without running", run.Server, rep, mode, w.Name, size, err)
					}
					ok[i] = r.recover(ctx, srv[i], rep, mode, w.Name, size)
				}
			}
			r.data.Runs = append(r.data.Runs, run)
			r.runsLeft--
			r.prog.Add(1)
		}
	}
	for i, s := range srv {
		if !ok[i] {
			continue
		}
		for _, st := range []string{n.stream, n.syncStream} {
			if err := workload.DeleteStream(ctx, s.URL(), st); err != nil {
				r.note("rep %d %s: %s: %v", rep, mode, s.Spec().Name, err)
			}
		}
	}
}

func (r *runner) makeStreams(ctx context.Context, s *proc.Server, n names) error {
	if err := workload.CreateStream(ctx, s.URL(), n.stream, n.subject); err != nil {
		return fmt.Errorf("%s: %w", s.Spec().Name, err)
	}
	if err := workload.CreateStream(ctx, s.URL(), n.syncStream, n.syncSubject); err != nil {
		return fmt.Errorf("%s: %w", s.Spec().Name, err)
	}
	return nil
}

// readable is the number of messages both servers hold in stream, so the
// read workloads read the same amount from each.
func (r *runner) readable(ctx context.Context, srv pair, stream string) int {
	least := -1
	for _, s := range srv {
		got, err := workload.StreamMsgs(ctx, s.URL(), stream)
		if err != nil {
			return 0
		}
		if least < 0 || int(got) < least {
			least = int(got)
		}
	}
	return max(least, 0)
}

func (r *runner) params(s *proc.Server, w workload.Workload, n names, size, count int, cap time.Duration) workload.Params {
	p := workload.Params{URL: s.URL(), Size: size, Count: count, MaxTime: cap, Stall: stallTimeout, Stream: n.stream, Subject: n.subject, Window: r.cfg.AsyncWindow}
	switch {
	case w.Name == workload.JSPubSync:
		p.Stream, p.Subject = n.syncStream, n.syncSubject
	case !w.JetStream:
		p.Subject = n.core
	}
	return p
}

// nextCap is the time cap of the next run: twice the comparison budget left
// per remaining run, within [MinRunCap, RunCap].
func (r *runner) nextCap() time.Duration {
	left := time.Until(r.compareEnd)
	per := left / time.Duration(max(r.runsLeft, 1))
	return max(r.cfg.MinRunCap, min(2*per, r.cfg.RunCap))
}

// recover restarts a server that died during a run. It reports whether the
// server is usable again.
func (r *runner) recover(ctx context.Context, s *proc.Server, rep int, mode proc.Mode, w workload.Name, size int) bool {
	if !s.Exited() {
		return true
	}
	c, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.Start(c); err != nil {
		r.note("rep %d %s: %s exited during %s %dB and did not restart: %v", rep, mode, s.Spec().Name, w, size, err)
		return false
	}
	r.note("rep %d %s: %s exited during %s %dB and was restarted on the same store", rep, mode, s.Spec().Name, w, size)
	return true
}
