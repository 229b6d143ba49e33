package experiment

import (
	"image/color"
	"math"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// marksAt reports whether the recorded drawing strokes or fills, in colour c, a visible mark
// — an arc (a dot) centred within tol of pt, or a line segment of some length ending there.
// A path of a lone move draws nothing, which is what a one-point line is.
func marksAt(actions []recorder.Action, c color.Color, pt vg.Point, tol vg.Length) bool {
	near := func(q vg.Point) bool { return math.Hypot(float64(q.X-pt.X), float64(q.Y-pt.Y)) <= float64(tol) }
	var cur color.Color
	for _, a := range actions {
		var path vg.Path
		switch a := a.(type) {
		case *recorder.SetColor:
			cur = a.Color
			continue
		case *recorder.Stroke:
			path = a.Path
		case *recorder.Fill:
			path = a.Path
		default:
			continue
		}
		if cur == nil || cur != c {
			continue
		}
		var prev vg.Point
		for _, pc := range path {
			switch pc.Type {
			case vg.ArcComp:
				if near(pc.Pos) && pc.Radius > 0 {
					return true
				}
			case vg.LineComp:
				if prev != pc.Pos && (near(pc.Pos) || near(prev)) {
					return true
				}
			}
			prev = pc.Pos
		}
	}
	return false
}

// drawPrecision draws r's precision plot into a recorder and returns the actions and where
// the day's point (day, y) falls on the canvas.
func drawPrecision(t *testing.T, r Report, day time.Time, y float64) ([]recorder.Action, vg.Point) {
	t.Helper()
	p, err := precisionPlot(r)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	dc := draw.NewCanvas(rec, plotWidth, plotHeight)
	p.Draw(dc)
	da := p.DataCanvas(dc)
	fx, fy := p.Transforms(&da)
	return rec.Actions, vg.Point{X: fx(float64(day.Unix())), Y: fy(y)}
}

// TestPrecisionPlotShowsTheFirstDay: on an experiment's first day each variant's precision
// is a visible mark at its point (issue 39: a one-point line and a one-day band drew
// nothing), and the day is inside the axis.
func TestPrecisionPlotShowsTheFirstDay(t *testing.T) {
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	prec := []float64{0.3, 0.5}
	r := Report{Variants: []VariantReport{
		{Variant: "control", Days: []DayReport{{Day: day, Surfaced: 10, Used: 3, Precision: &prec[0], PrecisionCI: &Interval{Low: 0.11, High: 0.6}}}},
		{Variant: "fresh", Days: []DayReport{{Day: day, Surfaced: 10, Used: 5, Precision: &prec[1], PrecisionCI: &Interval{Low: 0.24, High: 0.76}}}},
	}}
	for i, y := range prec {
		actions, pt := drawPrecision(t, r, day, y)
		if !marksAt(actions, colorOf(i), pt, vg.Points(1)) {
			t.Errorf("variant %d: no mark at its first day's precision %v (%v on the canvas)", i, y, pt)
		}
	}
	p, err := precisionPlot(r)
	if err != nil {
		t.Fatal(err)
	}
	if x := float64(day.Unix()); p.X.Min >= x || p.X.Max <= x || p.X.Max-p.X.Min < 3600 {
		t.Errorf("x axis %v..%v, want the day %v well inside it", p.X.Min, p.X.Max, x)
	}
}

// TestPrecisionPlotShowsEveryDay: with several days the dots mark each day's point, the last
// included, and a day with nothing surfaced has none.
func TestPrecisionPlotShowsEveryDay(t *testing.T) {
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	a, b := 0.2, 0.4
	r := Report{Variants: []VariantReport{{Variant: "control", Days: []DayReport{
		{Day: day, Surfaced: 5, Used: 1, Precision: &a, PrecisionCI: &Interval{Low: 0.04, High: 0.62}},
		{Day: day.AddDate(0, 0, 1)},
		{Day: day.AddDate(0, 0, 2), Surfaced: 5, Used: 2, Precision: &b, PrecisionCI: &Interval{Low: 0.12, High: 0.77}},
	}}}}
	for _, c := range []struct {
		day time.Time
		y   float64
	}{{day, a}, {day.AddDate(0, 0, 2), b}} {
		actions, pt := drawPrecision(t, r, c.day, c.y)
		if !marksAt(actions, colorOf(0), pt, vg.Points(1)) {
			t.Errorf("no mark at %s, %v", c.day.Format("2006-01-02"), c.y)
		}
	}
}
