package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart sizes.
const (
	chartW, chartH = 9 * vg.Inch, 5.4 * vg.Inch
	legendPad      = vg.Length(6)
	legendGap      = vg.Length(28)
)

// legendItem is one entry of a chart's legend; column groups the entries
// drawn one under another (one column per server).
type legendItem struct {
	label  string
	column int
	thumbs []plot.Thumbnailer
}

// build turns the chart into a plot without a legend, and the legend
// entries to draw beside it. The legend is never drawn inside the plot
// area, where it would hide lines.
func (c chart) build(path string) (*plot.Plot, []legendItem, error) {
	p := plot.New()
	p.Title.Text = c.title
	p.X.Label.Text = c.xLabel
	p.Y.Label.Text = c.yLabel
	p.Add(plotter.NewGrid())
	var items []legendItem
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range c.lines {
		pts := positive(l.pts, c.logX, c.logY)
		if len(pts) == 0 {
			continue
		}
		line, dots, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, nil, fmt.Errorf("report: %s: series %s: %w", path, l.label, err)
		}
		line.Color = plotutil.Color(l.server)
		dots.Color = plotutil.Color(l.server)
		dots.Shape = plotutil.Shape(l.server)
		line.Width = vg.Points(1.5)
		if l.dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		p.Add(line, dots)
		items = append(items, legendItem{label: l.label, column: l.server, thumbs: []plot.Thumbnailer{line, dots}})
		for _, q := range pts {
			lo, hi = math.Min(lo, q.Y), math.Max(hi, q.Y)
		}
	}
	if c.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = denseLogTicks{}
		p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.1
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
	p.X.Tick.Marker = inRange{p.X.Tick.Marker}
	p.Y.Tick.Marker = inRange{p.Y.Tick.Marker}
	return p, items, nil
}

// denseLogTicks are log ticks that also label 2× and 5× a power of ten
// when the axis spans too little for more than one power of ten to show,
// so a narrow axis still reads.
type denseLogTicks struct{}

func (denseLogTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && t.Value >= lo && t.Value <= hi {
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	for i, t := range ticks {
		if t.Label != "" || t.Value <= 0 {
			continue
		}
		m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9))
		if math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6 {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
	}
	return ticks
}

// inRange drops the ticks a ticker puts outside the axis range: gonum/plot
// leaves room for their labels, which pushes the plot away from its title.
type inRange struct{ plot.Ticker }

func (t inRange) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, tk := range t.Ticker.Ticks(lo, hi) {
		if tk.Value >= lo && tk.Value <= hi {
			out = append(out, tk)
		}
	}
	return out
}

// save renders the chart as a PNG with its legend in a band below the
// plot. gonum/plot panics on some degenerate inputs; that is turned into
// an error.
func (c chart) save(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: render %s: %v", path, r)
		}
	}()
	p, items, err := c.build(path)
	if err != nil {
		return err
	}
	return writePNG(path, chartW, chartH, func(dc draw.Canvas) {
		// gonum/plot sets the title flush with the top of its canvas,
		// where the PNG cut the tops of its letters: leave a margin.
		p.Draw(draw.Crop(drawLegendBand(dc, items), 0, 0, 0, -titleMargin))
	})
}

// titleMargin is the blank band above a chart's title.
const titleMargin = vg.Length(6)

// writePNG renders draw onto a white canvas of w×h and writes it to path.
func writePNG(path string, w, h vg.Length, drawFn func(draw.Canvas)) error {
	cw, err := draw.NewFormattedCanvas(w, h, "png")
	if err != nil {
		return fmt.Errorf("report: canvas for %s: %w", path, err)
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	drawFn(dc)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: create %s: %w", path, err)
	}
	if _, err := cw.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: close %s: %w", path, err)
	}
	return nil
}

// drawLegendBand draws the legend entries in columns, centred along the
// bottom of dc, and returns the part of dc above them for the plot.
func drawLegendBand(dc draw.Canvas, items []legendItem) draw.Canvas {
	if len(items) == 0 {
		return dc
	}
	var cols []plot.Legend
	var keys []int
	for _, it := range items {
		k := -1
		for i, key := range keys {
			if key == it.column {
				k = i
			}
		}
		if k < 0 {
			l := plot.NewLegend()
			l.TextStyle.Font = font.From(plot.DefaultFont, 11)
			l.Top, l.Left = true, true
			l.Padding = 2
			cols, keys = append(cols, l), append(keys, it.column)
			k = len(cols) - 1
		}
		cols[k].Add(it.label, it.thumbs...)
	}
	widths := make([]vg.Length, len(cols))
	var total, height vg.Length
	for i := range cols {
		r := cols[i].Rectangle(dc)
		widths[i] = r.Max.X - r.Min.X
		total += widths[i]
		height = max(height, r.Max.Y-r.Min.Y)
	}
	total += legendGap * vg.Length(len(cols)-1)
	x := dc.Min.X + (dc.Max.X-dc.Min.X-total)/2
	for i := range cols {
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: dc.Min.Y + legendPad},
			Max: vg.Point{X: x + widths[i], Y: dc.Min.Y + legendPad + height},
		}}
		cols[i].Draw(area)
		x += widths[i] + legendGap
	}
	return draw.Crop(dc, 0, 0, height+2*legendPad, 0)
}
