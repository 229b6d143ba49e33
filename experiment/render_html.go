package experiment

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
)

// WriteHTML writes a self-contained page: the verdicts on the primary metric, the variants'
// counts (id="summary-table") and metrics with intervals (id="metrics-table"), the
// comparisons table (id="comparison-table"), the SRM check, and the
// two plots as inline SVG (id="plot-precision", id="plot-posterior"). It loads nothing —
// no script, font, stylesheet or image — and says so in its Content-Security-Policy, so a
// browser would refuse anything injected. Every name in it is escaped by html/template (and
// inside the SVG by gonum/plot's SVG writer).
func WriteHTML(w io.Writer, r Report) error {
	pp, err := precisionPlot(r)
	if err != nil {
		return fmt.Errorf("experiment: precision plot: %w", err)
	}
	precisionSVG, err := svgOf(pp)
	if err != nil {
		return fmt.Errorf("experiment: precision plot: %w", err)
	}
	post, err := posteriorPlot(r)
	if err != nil {
		return fmt.Errorf("experiment: posterior plot: %w", err)
	}
	posteriorSVG, err := svgOf(post)
	if err != nil {
		return fmt.Errorf("experiment: posterior plot: %w", err)
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, htmlPage{
		R: r,
		// The SVG is our own drawing, with its text escaped by vgsvg; it is trusted as HTML.
		PrecisionSVG: template.HTML(precisionSVG), //nolint:gosec // generated here, text escaped
		PosteriorSVG: template.HTML(posteriorSVG), //nolint:gosec // generated here, text escaped
	})
	if err != nil {
		return fmt.Errorf("experiment: html: %w", err)
	}
	_, err = b.WriteTo(w)
	return err
}

type htmlPage struct {
	R            Report
	PrecisionSVG template.HTML
	PosteriorSVG template.HTML
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":       optPct,
	"ci":        ciPct,
	"diff":      optDiff,
	"cidiff":    ciDiff,
	"cimean":    ciMean,
	"label":     metricLabel,
	"p":         optP,
	"ms":        optMS,
	"f3":        func(x *float64) string { return optF(x, "%.3f") },
	"f5":        func(x *float64) string { return optF(x, "%.5f") },
	"fmtp":      fmtP,
	"share":     func(x float64) string { return fmt.Sprintf("%.2f", x) },
	"chi":       func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"color":     func(i int) string { c := colorOf(i); return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) },
	"isControl": func(i int) bool { return i == 0 },
}).Parse(pageSource))

const pageSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Experiment {{.R.Name}} — Salience</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #1d232b; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #5a6573; margin-top: 0; }
table { border-collapse: collapse; margin: .5rem 0; display: block; max-width: 100%; overflow-x: auto; } /* wide tables scroll, the page does not */
th, td { padding: .3rem .6rem; border-bottom: 1px solid #dde2e8; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f3f5f8; }
.swatch { display: inline-block; width: .75rem; height: .75rem; border-radius: 2px; margin-right: .4rem; vertical-align: -1px; }
.verdict { border-left: 4px solid #8a94a3; background: #f6f7f9; padding: .5rem .8rem; margin: .5rem 0; }
.verdict.better { border-color: #2e8b57; }
.verdict.worse { border-color: #b83232; }
.verdict.sample_ratio_mismatch { border-color: #b83232; background: #fbeeee; }
.srm.mismatch { color: #b83232; font-weight: 600; }
figure { margin: 1rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #5a6573; font-size: .9rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; color: #3b4450; }
dt { font-weight: 600; }
dd { margin: 0; }
</style>
</head>
<body>
<h1>Experiment {{.R.Name}}</h1>
<p class="meta">id {{.R.ExperimentID}} · {{.R.Status}} · created {{.R.CreatedAt.Format "2006-01-02 15:04 UTC"}}{{with .R.StoppedAt}} · stopped {{.Format "2006-01-02 15:04 UTC"}}{{end}} · as of {{.R.AsOf.Format "2006-01-02 15:04 UTC"}}</p>

<p id="primary-metric">Ranked by {{.R.Methods.PrimaryMetric}}.</p>
<section id="verdicts">
{{range .R.Comparisons}}<p class="verdict {{.Outcome}}">{{.Verdict}}</p>
{{else}}<p class="verdict">No treatment to compare with the control yet.</p>
{{end}}</section>

<h2>Variants</h2>
<table id="summary-table">
<thead><tr><th>variant</th><th>share</th><th>conversations</th><th>turns</th><th>empty turns</th><th>surfaced</th><th>used</th><th>helpful</th><th>ignored</th><th>dismissed</th><th>latency p50 (ms)</th><th>latency p95 (ms)</th></tr></thead>
<tbody>
{{range $i, $v := .R.Variants}}<tr><td><span class="swatch" style="background: {{color $i}}"></span>{{$v.Variant}}{{if isControl $i}} (control){{end}}</td><td>{{share $v.Share}}</td><td>{{$v.Conversations}}</td><td>{{$v.Turns}}</td><td>{{$v.EmptyTurns}}</td><td>{{$v.Surfaced}}</td><td>{{$v.Used}}</td><td>{{$v.Helpful}}</td><td>{{$v.Ignored}}</td><td>{{$v.Dismissed}}</td><td>{{ms $v.LatencyP50MS}}</td><td>{{ms $v.LatencyP95MS}}</td></tr>
{{end}}</tbody>
</table>

<h2>What each variant gains (95 % intervals)</h2>
<table id="metrics-table">
<thead><tr><th>variant</th><th>reward per turn</th><th>95 % CI</th><th>used per turn</th><th>95 % CI</th><th>surfaced per turn</th><th>95 % CI</th><th>precision</th><th>95 % CI</th><th>dismissal rate</th><th>95 % CI</th></tr></thead>
<tbody>
{{range $i, $v := .R.Variants}}<tr><td><span class="swatch" style="background: {{color $i}}"></span>{{$v.Variant}}{{if isControl $i}} (control){{end}}</td><td>{{f3 $v.RewardPerTurn}}</td><td>{{cimean $v.RewardPerTurnCI}}</td><td>{{f3 $v.UsedPerTurn}}</td><td>{{cimean $v.UsedPerTurnCI}}</td><td>{{f3 $v.SurfacedPerTurn}}</td><td>{{cimean $v.SurfacedPerTurnCI}}</td><td>{{pct $v.Precision}}</td><td>{{ci $v.PrecisionCI}}</td><td>{{pct $v.DismissalRate}}</td><td>{{ci $v.DismissalRateCI}}</td></tr>
{{end}}</tbody>
</table>

<h2>Against the control ({{.R.Control}}), on {{label .R.PrimaryMetric}}</h2>
<table id="comparison-table">
<thead><tr><th>variant</th><th>difference</th><th>95 % CI</th><th>z</th><th>p</th><th>relative lift</th><th>lift SE</th><th>chance to win (lift)</th><th>P(beat control)</th><th>expected loss if chosen</th><th>expected loss of control</th><th>always-valid p</th><th>always-valid lift CI</th><th>outcome</th></tr></thead>
<tbody>
{{range .R.Comparisons}}<tr><td>{{.Variant}}</td><td>{{diff .Metric .Difference}}</td><td>{{cidiff .Metric .DifferenceCI}}</td><td>{{f3 .Z}}</td><td>{{p .P}}</td><td>{{pct .RelativeLift}}</td><td>{{pct .RelativeLiftSE}}</td><td>{{pct .ChanceToWin}}</td><td>{{pct .ProbBeatControl}}</td><td>{{f5 .ExpectedLossVariant}}</td><td>{{f5 .ExpectedLossControl}}</td><td>{{p .SequentialP}}</td><td>{{ci .SequentialLiftCI}}</td><td>{{.Outcome}}</td></tr>
{{end}}</tbody>
</table>

{{with .R.SRM}}<p id="srm" class="srm{{if .Mismatch}} mismatch{{end}}">Sample ratio: χ² = {{chi .ChiSquare}}, df = {{.DF}}, p = {{fmtp .P}}{{if .Mismatch}} — mismatch: conversations do not follow the planned shares, so no comparison above is to be trusted{{else}} — conversations follow the planned shares{{end}}.</p>
{{else}}<p id="srm" class="srm">Sample ratio: not checked (needs two variants with planned shares and conversations).</p>
{{end}}
<h2>Precision over time</h2>
<figure id="plot-precision">
{{.PrecisionSVG}}
<figcaption>Daily precision of each variant with its Wilson 95 % band.</figcaption>
</figure>

<h2>Posterior of precision</h2>
<figure id="plot-posterior">
{{.PosteriorSVG}}
<figcaption>Beta posterior of each variant's precision (Beta(1,1) prior); where they overlap, the data cannot yet tell the variants apart.</figcaption>
</figure>

<h2>Methods</h2>
<dl>
<dt>primary metric</dt><dd>{{.R.Methods.PrimaryMetric}}</dd>
<dt>reward per turn</dt><dd>{{.R.Methods.RewardPerTurn}}</dd>
<dt>per turn</dt><dd>{{.R.Methods.PerTurn}}</dd>
<dt>precision</dt><dd>{{.R.Methods.Precision}}</dd>
<dt>dismissal rate</dt><dd>{{.R.Methods.DismissalRate}}</dd>
<dt>difference</dt><dd>{{.R.Methods.Difference}}</dd>
<dt>chance to win</dt><dd>{{.R.Methods.ChanceToWin}}</dd>
<dt>P(beat control)</dt><dd>{{.R.Methods.ProbBeatControl}}</dd>
<dt>expected loss</dt><dd>{{.R.Methods.ExpectedLoss}}</dd>
<dt>always-valid p</dt><dd>{{.R.Methods.Sequential}}</dd>
<dt>sample ratio</dt><dd>{{.R.Methods.SRM}}; flagged below p = {{.R.Methods.SRMAlpha}}</dd>
<dt>latency</dt><dd>{{.R.Methods.Latency}}</dd>
</dl>
</body>
</html>
`
