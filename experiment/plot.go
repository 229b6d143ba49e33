package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The report's two plots, drawn with gonum/plot: precision over time with its Wilson band,
// and the Beta posteriors of the variants' precision.

// Plot names for WritePNG (and the ?plot= a server passes through).
const (
	PlotPrecision = "precision"
	PlotPosterior = "posterior"
)

// ErrUnknownPlot is returned (wrapped) by WritePNG for a plot name other than PlotPrecision
// and PlotPosterior.
var ErrUnknownPlot = errors.New("unknown plot")

const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 3.5 * vg.Inch
	// posteriorPoints is the number of points each posterior density is drawn with: enough
	// for a smooth curve at the plot's width, few enough to keep the SVG small.
	posteriorPoints = 240
	// posteriorSpan is how many posterior standard deviations either side of the extreme
	// means the density plot shows.
	posteriorSpan = 5
)

// palette gives each variant a colour by its position (control first); it repeats after
// eight variants.
var palette = []color.RGBA{
	{0x33, 0x5c, 0x99, 0xff}, // control: blue
	{0xd9, 0x6a, 0x1e, 0xff}, // orange
	{0x2e, 0x8b, 0x57, 0xff}, // green
	{0xa0, 0x3c, 0x8c, 0xff}, // purple
	{0xb8, 0x32, 0x32, 0xff}, // red
	{0x6b, 0x6b, 0x6b, 0xff}, // grey
	{0x1f, 0x9e, 0xa8, 0xff}, // teal
	{0x8c, 0x6d, 0x1f, 0xff}, // brown
}

func colorOf(i int) color.RGBA { return palette[i%len(palette)] }

// translucent is c at a quarter opacity, for CI bands (premultiplied, as color.RGBA is).
func translucent(c color.RGBA) color.RGBA {
	const a = 0x40
	return color.RGBA{uint8(uint16(c.R) * a / 0xff), uint8(uint16(c.G) * a / 0xff), uint8(uint16(c.B) * a / 0xff), a}
}

// precisionPlot is each variant's daily precision as a line through a dot a day over its
// Wilson 95 % band. Days with nothing surfaced have no precision and are left out. The dots
// are what show a lone day: a line needs two points and a band two days, so on an
// experiment's first day the plot used to be empty; that day also gets its interval as an
// error bar, and the axis half a day either side.
func precisionPlot(r Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Precision per day (95 % Wilson band)"
	p.X.Label.Text = "day (UTC)"
	p.Y.Label.Text = "precision"
	p.X.Tick.Marker = plot.TimeTicks{Format: "2006-01-02"}
	p.Legend.Top = true
	drawn := false
	top := 0.0                               // the highest upper bound drawn
	first, last := math.Inf(1), math.Inf(-1) // the days drawn, as Unix seconds
	for i, v := range r.Variants {
		var line, upper, lower plotter.XYs
		for _, d := range v.Days {
			if d.Precision == nil {
				continue
			}
			x := float64(d.Day.Unix())
			line = append(line, plotter.XY{X: x, Y: *d.Precision})
			upper = append(upper, plotter.XY{X: x, Y: d.PrecisionCI.High})
			lower = append(lower, plotter.XY{X: x, Y: d.PrecisionCI.Low})
			top = max(top, d.PrecisionCI.High)
			first, last = min(first, x), max(last, x)
		}
		if len(line) == 0 {
			continue
		}
		drawn = true
		// The band is the upper bounds left to right, then the lower bounds back.
		ring := make(plotter.XYs, 0, 2*len(line))
		ring = append(ring, upper...)
		for j := len(lower) - 1; j >= 0; j-- {
			ring = append(ring, lower[j])
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		band.Color = translucent(colorOf(i))
		band.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.Color = colorOf(i)
		l.Width = vg.Points(1.5)
		dots, err := plotter.NewScatter(line)
		if err != nil {
			return nil, err
		}
		dots.GlyphStyle = draw.GlyphStyle{Color: colorOf(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(band, l, dots)
		if len(line) == 1 { // no band without a second day: the interval as an error bar
			ci := plotter.YErrors{{Low: line[0].Y - lower[0].Y, High: upper[0].Y - line[0].Y}}
			bar, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{line, ci})
			if err != nil {
				return nil, err
			}
			bar.Color = colorOf(i)
			p.Add(bar)
		}
		p.Legend.Add(v.Variant, l, dots)
	}
	if drawn && first == last {
		// One day: gonum would widen the axis by a second either side, under one date.
		p.X.Min, p.X.Max = first-12*3600, last+12*3600
	}
	if !drawn {
		p.Title.Text = "Precision per day: nothing surfaced yet"
		p.X.Tick.Marker = plot.DefaultTicks{}
	}
	// From zero, so differences are seen at their true scale, up to the next tenth above the
	// highest band (precision is often low: a 0–1 axis would flatten the lines).
	p.Y.Min, p.Y.Max = 0, min(1, math.Ceil((top+0.02)*10)/10)
	return p, nil
}

// posteriorPlot is the Beta(1 + used + helpful, 1 + surfaced − used − helpful) density of
// each variant's precision, over the range where they have their mass.
func posteriorPlot(r Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Posterior of precision, Beta(1,1) prior"
	p.X.Label.Text = "precision"
	p.Y.Label.Text = "density"
	p.Legend.Top = true
	type post struct {
		i    int
		name string
		d    distuv.Beta
	}
	var ps []post
	lo, hi := 1.0, 0.0
	for i, v := range r.Variants {
		if v.Surfaced <= 0 {
			continue
		}
		x := min(max(v.Used+v.Helpful, 0), v.Surfaced)
		d := distuv.Beta{Alpha: float64(1 + x), Beta: float64(1 + v.Surfaced - x)}
		ps = append(ps, post{i, v.Variant, d})
		m, sd := d.Mean(), d.StdDev()
		lo, hi = min(lo, m-posteriorSpan*sd), max(hi, m+posteriorSpan*sd)
	}
	if len(ps) == 0 {
		p.Title.Text = "Posterior of precision: nothing surfaced yet"
		return p, nil
	}
	lo, hi = max(lo, 0), min(hi, 1)
	p.Y.Min = 0
	for _, q := range ps {
		xy := make(plotter.XYs, posteriorPoints)
		for j := range xy {
			x := lo + (hi-lo)*float64(j)/float64(posteriorPoints-1)
			y := q.d.Prob(x)
			if math.IsNaN(y) || math.IsInf(y, 0) {
				y = 0 // Beta(1, n) at x = 0 and the like: a finite stand-in keeps the path valid
			}
			xy[j] = plotter.XY{X: x, Y: y}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = colorOf(q.i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(q.name, l)
	}
	return p, nil
}

// plotFor builds the named plot.
func plotFor(r Report, name string) (*plot.Plot, error) {
	switch name {
	case PlotPrecision:
		return precisionPlot(r)
	case PlotPosterior:
		return posteriorPlot(r)
	}
	return nil, fmt.Errorf("experiment: %w %q (want %q or %q)", ErrUnknownPlot, name, PlotPrecision, PlotPosterior)
}

// svgOf draws p as an SVG element for inlining into HTML: vgsvg's output without its XML
// declaration and generator comment, which do not belong inside a page. Text in the SVG
// (variant names in the legend) is escaped by vgsvg.
func svgOf(p *plot.Plot) ([]byte, error) {
	c := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i >= 0 {
		out = out[i:]
	}
	return out, nil
}

// WritePNG draws one plot as PNG; plot is PlotPrecision or PlotPosterior, anything else an
// error wrapping ErrUnknownPlot.
func WritePNG(w io.Writer, r Report, name string) error {
	p, err := plotFor(r, name)
	if err != nil {
		return err
	}
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(110))}
	p.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}
