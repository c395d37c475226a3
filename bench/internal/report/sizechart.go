package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/jetwal/jetwal/bench/internal/workload"
)

// FileSizeChart is the overview chart: payload throughput against message
// size, one panel per workload, both servers in every mode.
const FileSizeChart = "throughput-vs-size.png"

// panels is a grid of charts sharing one title and one legend.
type panels struct {
	title  string
	charts []chart
}

// sizeOverview plots MiB/s of payload against message size for every
// workload measured. MiB/s (not msgs/s) keeps small and large messages on
// one readable scale; the per-workload charts show msgs/s.
func sizeOverview(d *Data, rows []Row) panels {
	out := panels{title: fmt.Sprintf("Throughput against message size: %s vs %s (MiB/s of payload, medians)", d.Meta.A.Name, d.Meta.B.Name)}
	for _, w := range workload.All() {
		c := chart{title: string(w.Name), xLabel: "message size", yLabel: "MiB/s", logX: true, logY: true, xTicks: sizeTicks(d.Meta.Sizes)}
		c.lines = sizeSeries(d, rows, w.Name, func(s Side) float64 { return s.MBs })
		if c.hasData() {
			out.charts = append(out.charts, c)
		}
	}
	return out
}

func (g panels) hasData() bool { return len(g.charts) > 0 }

// save renders the panels in a grid of up to four columns, the title
// above and the legend of the first panel below (every panel has the same
// series).
func (g panels) save(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: render %s: %v", path, r)
		}
	}()
	if len(g.charts) == 0 {
		return fmt.Errorf("report: %s: no panels", path)
	}
	cols := min(4, len(g.charts))
	nrows := (len(g.charts) + cols - 1) / cols
	plots := make([]*plot.Plot, len(g.charts))
	var items []legendItem
	for i, c := range g.charts {
		p, it, err := c.build(path)
		if err != nil {
			return err
		}
		plots[i] = p
		if len(it) > len(items) {
			items = it
		}
	}
	w := vg.Length(cols) * 3.6 * vg.Inch
	h := vg.Length(nrows)*3.2*vg.Inch + 1.2*vg.Inch
	return writePNG(path, w, h, func(dc draw.Canvas) {
		sty := plot.New().Title.TextStyle
		sty.Font.Size = vg.Points(14)
		top := sty.Rectangle(g.title).Size().Y + 8
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y - 4}, g.title)
		area := draw.Crop(drawLegendBand(dc, items), 0, 0, 0, -top)
		t := draw.Tiles{Rows: nrows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(14), PadLeft: vg.Points(4), PadRight: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
		for i, p := range plots {
			p.Draw(t.At(area, i%cols, i/cols))
		}
	})
}
