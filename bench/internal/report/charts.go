package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/jetwal/jetwal/bench/internal/proc"
	"github.com/jetwal/jetwal/bench/internal/workload"
)

// series is one line of a chart.
type series struct {
	label  string
	server int // 0 for A, 1 for B: picks the colour
	dashed bool
	pts    plotter.XYs
}

// chart is a line chart with optional log axes.
type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	xTicks                plot.Ticker
	lines                 []series
}

// WriteCharts renders every chart d has data for into dir and returns the
// file names written.
func WriteCharts(dir string, d *Data) ([]string, error) {
	rows := Summarize(d)
	var charts []struct {
		name string
		c    chart
	}
	add := func(name string, c chart) {
		if c.hasData() {
			charts = append(charts, struct {
				name string
				c    chart
			}{name, c})
		}
	}
	for _, w := range workload.All() {
		add("throughput-"+string(w.Name)+".png", throughputChart(d, rows, w))
	}
	for _, w := range workload.All() {
		if w.Latency {
			add("latency-"+string(w.Name)+".png", latencyChart(d, rows, w))
		}
	}
	add("restart.png", restartChart(d))
	add("growth-append.png", growthChart(d, "append throughput vs stream size", "msgs/s", func(g GrowthPoint) float64 { return g.AppendRate }))
	add("growth-memory.png", growthMemoryChart(d))
	var names []string
	for _, c := range charts {
		if err := c.c.save(filepath.Join(dir, c.name)); err != nil {
			return names, err
		}
		names = append(names, c.name)
	}
	return names, nil
}

func serverNames(d *Data) [2]string { return [2]string{d.Meta.A.Name, d.Meta.B.Name} }

func throughputChart(d *Data, rows []Row, w workload.Workload) chart {
	c := chart{
		title:  fmt.Sprintf("%s: throughput vs message size", w.Name),
		xLabel: "message size", yLabel: "msgs/s (median)",
		logX: true, logY: true, xTicks: sizeTicks(d.Meta.Sizes),
	}
	for _, mode := range d.Meta.Modes {
		for i, name := range serverNames(d) {
			s := series{label: name + " " + string(mode), server: i, dashed: mode != proc.ModeDefault}
			for _, r := range rows {
				if r.Workload != w.Name || r.Mode != mode {
					continue
				}
				rate := r.A.Rate
				if i == 1 {
					rate = r.B.Rate
				}
				s.pts = append(s.pts, plotter.XY{X: float64(r.Size), Y: rate})
			}
			c.lines = append(c.lines, s)
		}
	}
	return c
}

func latencyChart(d *Data, rows []Row, w workload.Workload) chart {
	size := 128
	if !slices.Contains(d.Meta.Sizes, size) && len(d.Meta.Sizes) > 0 {
		size = d.Meta.Sizes[0]
	}
	labels := []string{"p50", "p90", "p99", "p99.9"}
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(i + 1), Label: l}
	}
	c := chart{
		title:  fmt.Sprintf("%s latency percentiles, %s messages", w.Name, SizeLabel(size)),
		xLabel: "percentile", yLabel: "latency (µs)", logY: true, xTicks: ticks,
	}
	for _, mode := range d.Meta.Modes {
		for i, name := range serverNames(d) {
			s := series{label: name + " " + string(mode), server: i, dashed: mode != proc.ModeDefault}
			for _, r := range rows {
				if r.Workload != w.Name || r.Mode != mode || r.Size != size {
					continue
				}
				sd := r.A
				if i == 1 {
					sd = r.B
				}
				for j, p := range []float64{float64(sd.P50), float64(sd.P90), float64(sd.P99), float64(sd.P999)} {
					s.pts = append(s.pts, plotter.XY{X: float64(j + 1), Y: p / 1e3})
				}
			}
			c.lines = append(c.lines, s)
		}
	}
	return c
}

func restartChart(d *Data) chart {
	c := chart{title: "restart time vs stream size", xLabel: "messages in stream", yLabel: "seconds until the stream answers", logX: true, logY: true, xTicks: countTicks(d)}
	for i, name := range serverNames(d) {
		clean := series{label: name + " clean restart", server: i}
		kill := series{label: name + " after kill -9", server: i, dashed: true}
		for _, g := range d.Growth {
			if g.Server != name {
				continue
			}
			clean.pts = append(clean.pts, plotter.XY{X: float64(g.Msgs), Y: g.CleanRestart.Seconds()})
			kill.pts = append(kill.pts, plotter.XY{X: float64(g.Msgs), Y: g.KillRestart.Seconds()})
		}
		c.lines = append(c.lines, clean, kill)
	}
	return c
}

func growthChart(d *Data, title, yLabel string, y func(GrowthPoint) float64) chart {
	c := chart{title: title, xLabel: "messages in stream", yLabel: yLabel, logX: true, logY: true, xTicks: countTicks(d)}
	for i, name := range serverNames(d) {
		s := series{label: name, server: i}
		for _, g := range d.Growth {
			if g.Server == name {
				s.pts = append(s.pts, plotter.XY{X: float64(g.Msgs), Y: y(g)})
			}
		}
		c.lines = append(c.lines, s)
	}
	return c
}

// growthMemoryChart plots RSS after the appends (solid) and its anonymous
// part (dashed) against stream size.
func growthMemoryChart(d *Data) chart {
	c := chart{title: "memory vs stream size", xLabel: "messages in stream", yLabel: "MiB after appends", logX: true, logY: true, xTicks: countTicks(d)}
	for i, name := range serverNames(d) {
		rss := series{label: name + " RSS", server: i}
		anon := series{label: name + " anonymous RSS", server: i, dashed: true}
		for _, g := range d.Growth {
			if g.Server == name {
				rss.pts = append(rss.pts, plotter.XY{X: float64(g.Msgs), Y: g.RSS.MiB()})
				anon.pts = append(anon.pts, plotter.XY{X: float64(g.Msgs), Y: g.AnonRSS.MiB()})
			}
		}
		c.lines = append(c.lines, rss, anon)
	}
	return c
}

func sizeTicks(sizes []int) plot.Ticker {
	t := make(plot.ConstantTicks, 0, len(sizes))
	for _, s := range sizes {
		t = append(t, plot.Tick{Value: float64(s), Label: SizeLabel(s)})
	}
	return t
}

// countTicks labels the stream sizes the growth test reached.
func countTicks(d *Data) plot.Ticker {
	var vals []int64
	for _, g := range d.Growth {
		if g.Msgs > 0 && !slices.Contains(vals, g.Msgs) {
			vals = append(vals, g.Msgs)
		}
	}
	slices.Sort(vals)
	t := make(plot.ConstantTicks, 0, len(vals))
	for _, v := range vals {
		t = append(t, plot.Tick{Value: float64(v), Label: countLabel(float64(v))})
	}
	return t
}

// positive keeps the points a log axis can show.
func positive(pts plotter.XYs, logX, logY bool) plotter.XYs {
	var out plotter.XYs
	for _, p := range pts {
		if (logX && p.X <= 0) || (logY && p.Y <= 0) || math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (c chart) hasData() bool {
	for _, l := range c.lines {
		if len(positive(l.pts, c.logX, c.logY)) > 0 {
			return true
		}
	}
	return false
}

// save renders the chart as a PNG. gonum/plot panics on some degenerate
// inputs; that is turned into an error.
func (c chart) save(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: render %s: %v", path, r)
		}
	}()
	p := plot.New()
	p.Title.Text = c.title
	p.X.Label.Text = c.xLabel
	p.Y.Label.Text = c.yLabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range c.lines {
		pts := positive(l.pts, c.logX, c.logY)
		if len(pts) == 0 {
			continue
		}
		line, dots, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("report: %s: series %s: %w", path, l.label, err)
		}
		line.Color = plotutil.Color(l.server)
		dots.Color = plotutil.Color(l.server)
		dots.Shape = plotutil.Shape(l.server)
		line.Width = vg.Points(1.5)
		if l.dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(line, dots)
		p.Legend.Add(l.label, line, dots)
		for _, q := range pts {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
	}
	if c.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		// Leave room above for the legend and below for the smallest point.
		p.Y.Min, p.Y.Max = lo/2, hi*8
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.4
	}
	if c.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if c.xTicks != nil {
		p.X.Tick.Marker = c.xTicks
	}
	switch {
	case c.logX:
		p.X.Min, p.X.Max = p.X.Min/1.6, p.X.Max*1.6
	case p.X.Min == p.X.Max:
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
	if c.xTicks != nil && !c.logX {
		p.X.Min, p.X.Max = 0.5, p.X.Max+0.5
	}
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("report: save %s: %w", path, err)
	}
	return nil
}
