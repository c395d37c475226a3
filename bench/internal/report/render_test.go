package report

import (
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func labels(ts []plot.Tick) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestDenseLogTicks(t *testing.T) {
	// Less than a decade: 2× and 5× powers of ten get labels too.
	if got := labels(inRange{denseLogTicks{}}.Ticks(60_000, 250_000)); !slices.Equal(got, []string{"100000", "200000"}) {
		t.Errorf("narrow axis labels %v", got)
	}
	// Several decades: only powers of ten, and nothing outside the range.
	if got := labels(inRange{denseLogTicks{}}.Ticks(0.03, 13.6)); !slices.Equal(got, []string{"0.1", "1", "10"}) {
		t.Errorf("wide axis labels %v", got)
	}
}

// TestLegendBelowPlot checks that the legend takes a band at the bottom of
// the canvas and the plot is given only the area above it.
func TestLegendBelowPlot(t *testing.T) {
	dc := draw.New(vgimg.New(chartW, chartH))
	line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	items := []legendItem{
		{label: "jetwal default", column: 0, thumbs: []plot.Thumbnailer{line}},
		{label: "jetwal sync-always", column: 0, thumbs: []plot.Thumbnailer{line}},
		{label: "nats-server default", column: 1, thumbs: []plot.Thumbnailer{line}},
	}
	area := drawLegendBand(dc, items)
	band := area.Min.Y - dc.Min.Y
	if area.Max != dc.Max || area.Min.X != dc.Min.X {
		t.Fatalf("plot area %+v of canvas %+v: only the bottom may be taken", area.Rectangle, dc.Rectangle)
	}
	// Two rows of 11-point text and padding: between 20 and 60 points.
	if band < vg.Points(20) || band > vg.Points(60) {
		t.Fatalf("legend band %v points high", band)
	}
	if got := drawLegendBand(dc, nil); got != dc {
		t.Fatal("no legend must leave the whole canvas to the plot")
	}
}
