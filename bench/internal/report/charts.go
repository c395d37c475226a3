package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

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
	if g := sizeOverview(d, rows); g.hasData() {
		if err := g.save(filepath.Join(dir, FileSizeChart)); err != nil {
			return names, err
		}
		names = append(names, FileSizeChart)
	}
	for _, c := range charts {
		if err := c.c.save(filepath.Join(dir, c.name)); err != nil {
			return names, err
		}
		names = append(names, c.name)
	}
	return names, nil
}

func serverNames(d *Data) [2]string { return [2]string{d.Meta.A.Name, d.Meta.B.Name} }

// sizeSeries is one line per mode and server of workload w against message
// size, with the figure metric picks from each row's side.
func sizeSeries(d *Data, rows []Row, w workload.Name, metric func(Side) float64) []series {
	var out []series
	for _, mode := range d.Meta.Modes {
		for i, name := range serverNames(d) {
			s := series{label: name + " " + string(mode), server: i, dashed: mode != proc.ModeDefault}
			for _, r := range rows {
				if r.Workload != w || r.Mode != mode {
					continue
				}
				side := r.A
				if i == 1 {
					side = r.B
				}
				s.pts = append(s.pts, plotter.XY{X: float64(r.Size), Y: metric(side)})
			}
			out = append(out, s)
		}
	}
	return out
}

func throughputChart(d *Data, rows []Row, w workload.Workload) chart {
	c := chart{
		title:  fmt.Sprintf("%s: throughput vs message size", w.Name),
		xLabel: "message size", yLabel: "msgs/s (median)",
		logX: true, logY: true, xTicks: sizeTicks(d.Meta.Sizes),
	}
	c.lines = sizeSeries(d, rows, w.Name, func(s Side) float64 { return s.Rate })
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
	return growthLines(d, "restart time vs stream size (exec until the stream answers)", "restart time (s)",
		growthLine{suffix: " clean restart", y: func(g GrowthPoint) float64 { return g.CleanRestart.Seconds() }},
		growthLine{suffix: " after kill -9", dashed: true, y: func(g GrowthPoint) float64 { return g.KillRestart.Seconds() }})
}

func growthChart(d *Data, title, yLabel string, y func(GrowthPoint) float64) chart {
	return growthLines(d, title, yLabel, growthLine{y: y})
}

// growthMemoryChart plots RSS after the appends (solid) and its anonymous
// part (dashed) against stream size.
func growthMemoryChart(d *Data) chart {
	return growthLines(d, "memory vs stream size", "MiB after appends",
		growthLine{suffix: " RSS", y: func(g GrowthPoint) float64 { return g.RSS.MiB() }},
		growthLine{suffix: " anonymous RSS", dashed: true, y: func(g GrowthPoint) float64 { return g.AnonRSS.MiB() }})
}

// growthLine is one line per server of a chart against stream size.
type growthLine struct {
	suffix string // after the server's name in the legend
	dashed bool
	y      func(GrowthPoint) float64
}

// growthLines charts the growth points against stream size, both axes
// logarithmic: for each server in turn, one series per line.
func growthLines(d *Data, title, yLabel string, lines ...growthLine) chart {
	c := chart{title: title, xLabel: "messages in stream", yLabel: yLabel, logX: true, logY: true, xTicks: countTicks(d)}
	for i, name := range serverNames(d) {
		for _, l := range lines {
			s := series{label: name + l.suffix, server: i, dashed: l.dashed}
			for _, g := range d.Growth {
				if g.Server == name {
					s.pts = append(s.pts, plotter.XY{X: float64(g.Msgs), Y: l.y(g)})
				}
			}
			c.lines = append(c.lines, s)
		}
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
