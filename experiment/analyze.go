package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// methods is the Methods block every report carries: the words for what the numbers are.
var methods = Methods{
	Confidence:      1 - Alpha,
	Precision:       "(used + helpful) / surfaced with a Wilson score 95 % interval",
	Latency:         "nearest-rank p50 and p95 of recall-turn latency",
	Difference:      "precision(variant) − precision(control): unpooled Wald 95 % interval, pooled two-proportion z-test",
	Prior:           "Beta(1,1)",
	ChanceToWin:     "Φ(lift / SE) on the relative lift (delta-method SE)",
	ProbBeatControl: "P(θ_variant > θ_control) on the absolute precision, Beta(1,1) priors, exact sum",
	ExpectedLoss:    "normal approximation of θ_variant − θ_control: σφ(μ/σ) − μΦ(−μ/σ)",
	Sequential:      "always-valid mixture SPRT on the relative lift (α = 0.05, N* = 5000); p is the minimum over the daily looks and now",
	SRM:             "χ² test of conversations per variant against the planned shares",
	SRMAlpha:        SRMAlpha,
}

// Analyze computes the report (pure, deterministic: same Input, same Report; nothing is
// random). Variants[0] is the control; with no variants the report has no rows. Counts that
// cannot be right (used + helpful above surfaced) are clamped inside the statistics, never
// turned into NaN.
func Analyze(in Input) Report {
	r := Report{
		ExperimentID: in.ExperimentID,
		Name:         in.Name,
		Status:       in.Status,
		CreatedAt:    in.CreatedAt.UTC(),
		AsOf:         in.AsOf.UTC(),
		Variants:     make([]VariantReport, 0, len(in.Variants)),
		Comparisons:  []Comparison{},
		Methods:      methods,
	}
	if !in.StoppedAt.IsZero() {
		s := in.StoppedAt.UTC()
		r.StoppedAt = &s
	}
	for _, v := range in.Variants {
		r.Variants = append(r.Variants, analyzeVariant(v))
	}
	if len(in.Variants) == 0 {
		return r
	}
	r.Control = in.Variants[0].Variant
	r.SRM = srm(in.Variants)
	for _, v := range in.Variants[1:] {
		r.Comparisons = append(r.Comparisons, compare(in.Variants[0], v, r.SRM, in.Status))
	}
	return r
}

func analyzeVariant(t Tally) VariantReport {
	v := VariantReport{
		Variant:       t.Variant,
		Share:         finite(t.Share),
		Conversations: t.Conversations,
		Turns:         t.Turns,
		Surfaced:      t.Surfaced,
		Used:          t.Used,
		Helpful:       t.Helpful,
		Ignored:       t.Ignored,
		Dismissed:     t.Dismissed,
		Days:          make([]DayReport, 0, len(t.Days)),
	}
	v.Precision, v.PrecisionCI = precision(t.Used+t.Helpful, t.Surfaced)
	if d, ok := DismissalRate(t.Dismissed, t.Surfaced); ok {
		v.DismissalRate = &d
	}
	if p50, p95, ok := Percentiles(t.LatenciesMS); ok {
		v.LatencyP50MS, v.LatencyP95MS = &p50, &p95
	}
	for _, d := range sortedDays(t.Days) {
		dr := DayReport{
			Day: d.Day.UTC(), Turns: d.Turns, Surfaced: d.Surfaced, Used: d.Used,
			Helpful: d.Helpful, Ignored: d.Ignored, Dismissed: d.Dismissed,
		}
		dr.Precision, dr.PrecisionCI = precision(d.Used+d.Helpful, d.Surfaced)
		v.Days = append(v.Days, dr)
	}
	return v
}

// precision is x/n with its Wilson interval, both nil when n = 0.
func precision(x, n int) (*float64, *Interval) {
	p, ok := rate(x, n)
	if !ok {
		return nil, nil
	}
	iv, _ := Wilson(x, n, Alpha)
	return &p, &iv
}

// sortedDays returns the days ascending without touching the caller's slice: the contract
// asks the store for ascending days, and the report does not depend on it.
func sortedDays(ds []DayTally) []DayTally {
	if slices.IsSortedFunc(ds, cmpDay) {
		return ds
	}
	s := slices.Clone(ds)
	slices.SortStableFunc(s, cmpDay)
	return s
}

func cmpDay(a, b DayTally) int { return a.Day.Compare(b.Day) }

// srm checks conversations against planned shares; nil when it cannot be computed.
func srm(vs []Tally) *SRM {
	obs := make([]int, len(vs))
	w := make([]float64, len(vs))
	for i, v := range vs {
		obs[i], w[i] = v.Conversations, v.Share
	}
	t, ok := SampleRatio(obs, w)
	if !ok {
		return nil
	}
	return &SRM{Observed: obs, Expected: t.Expected, ChiSquare: t.ChiSquare, DF: t.DF, P: t.P, Mismatch: t.P < SRMAlpha}
}

// successes is the tally's precision numerator.
func successes(t Tally) int { return t.Used + t.Helpful }

func compare(a, b Tally, s *SRM, status string) Comparison {
	c := Comparison{Variant: b.Variant, Control: a.Variant}
	xA, nA, xB, nB := successes(a), a.Surfaced, successes(b), b.Surfaced
	zt, ok := TwoProportion(xA, nA, xB, nB, Alpha)
	if !ok {
		c.Outcome = "not_enough_data"
		c.Verdict = fmt.Sprintf("Not enough data: %s has surfaced %d memories and %s %d; precision needs surfacings in both.",
			a.Variant, nA, b.Variant, nB)
		return c
	}
	c.Difference, c.DifferenceCI = ptr(zt.Diff), &zt.DiffCI
	if zt.ZOK {
		c.Z, c.P = ptr(zt.Z), ptr(zt.P)
	}
	xA, xB = min(max(xA, 0), nA), min(max(xB, 0), nB)
	aA, bA := float64(1+xA), float64(1+nA-xA)
	aB, bB := float64(1+xB), float64(1+nB-xB)
	c.ProbBeatControl = ptr(ProbBBeatsA(aA, bA, aB, bB))
	c.ExpectedLossVariant = ptr(ExpectedLossNormal(zt.Diff, zt.SE))
	c.ExpectedLossControl = ptr(ExpectedLossNormal(-zt.Diff, zt.SE))

	mA, mB := float64(xA)/float64(nA), float64(xB)/float64(nB)
	l, lok := RelativeLift(mA, nA, mB, nB)
	if lok {
		c.RelativeLift, c.RelativeLiftSE, c.RelativeLiftP = ptr(l.L), ptr(l.SE), ptr(l.P)
		c.ChanceToWin = ptr(l.ChanceToWin)
		if hw, ok := SequentialHalfWidth(l.SE, nA+nB, Alpha, SequentialTuning); ok {
			c.SequentialHalfWidth = ptr(hw)
			c.SequentialLiftCI = &Interval{Low: l.L - hw, High: l.L + hw}
		}
		if p, ok := SequentialLiftP(looks(a, b), Alpha, SequentialTuning); ok {
			c.SequentialP = ptr(p)
		}
	}
	c.Outcome, c.Verdict = verdict(c, a, b, mA, mB, s, status)
	return c
}

// looks are the cumulative counts at the end of each day either arm has, then the totals
// (the report's own look, which also covers data the days do not, if a store sends none).
func looks(a, b Tally) []Look {
	type day struct{ xA, nA, xB, nB int }
	byDay := map[time.Time]*day{}
	var keys []time.Time
	get := func(t time.Time) *day {
		t = t.UTC()
		d, ok := byDay[t]
		if !ok {
			d = &day{}
			byDay[t] = d
			keys = append(keys, t)
		}
		return d
	}
	for _, d := range a.Days {
		e := get(d.Day)
		e.xA += d.Used + d.Helpful
		e.nA += d.Surfaced
	}
	for _, d := range b.Days {
		e := get(d.Day)
		e.xB += d.Used + d.Helpful
		e.nB += d.Surfaced
	}
	slices.SortFunc(keys, time.Time.Compare)
	out := make([]Look, 0, len(keys)+1)
	var cum Look
	for _, k := range keys {
		d := byDay[k]
		cum.XA, cum.NA = cum.XA+d.xA, cum.NA+d.nA
		cum.XB, cum.NB = cum.XB+d.xB, cum.NB+d.nB
		out = append(out, clampLook(cum))
	}
	return append(out, clampLook(Look{XA: successes(a), NA: a.Surfaced, XB: successes(b), NB: b.Surfaced}))
}

func clampLook(l Look) Look {
	l.XA, l.XB = min(max(l.XA, 0), l.NA), min(max(l.XB, 0), l.NB)
	return l
}

// verdict is the comparison in plain words. It calls a variant better or worse only when
// the always-valid p is below α (so repeated reading of the report cannot manufacture a
// win) and the difference's 95 % interval excludes zero; otherwise it says the difference
// is not yet reliable, with the numbers that say why. A sample-ratio mismatch overrides
// everything: the assignment is broken, so no comparison is trusted.
func verdict(c Comparison, a, b Tally, mA, mB float64, s *SRM, status string) (string, string) {
	nums := fmt.Sprintf("precision %s vs %s (difference %s points, 95 %% CI %s to %s)",
		pct(mB), pct(mA), signedPoints(*c.Difference), signedPoints(c.DifferenceCI.Low), signedPoints(c.DifferenceCI.High))
	if s != nil && s.Mismatch {
		return "sample_ratio_mismatch", fmt.Sprintf(
			"Do not trust this comparison: conversations per variant do not match the planned shares (SRM p = %s). Fix the assignment first; %s: %s.",
			fmtP(s.P), b.Variant, nums)
	}
	if c.SequentialP == nil {
		return "not_enough_data", fmt.Sprintf(
			"Not enough data to compare %s with %s: the relative lift and its test are undefined at these counts; %s.",
			b.Variant, a.Variant, nums)
	}
	ps := *c.SequentialP
	switch {
	case ps < Alpha && c.DifferenceCI.Low > 0:
		return "better", fmt.Sprintf("%s is better than %s: %s; always-valid p = %s.",
			b.Variant, a.Variant, nums, fmtP(ps))
	case ps < Alpha && c.DifferenceCI.High < 0:
		return "worse", fmt.Sprintf("%s is worse than %s: %s; always-valid p = %s.",
			b.Variant, a.Variant, nums, fmtP(ps))
	}
	next := "keep the experiment running"
	if status == "stopped" {
		next = "the experiment stopped before one was shown"
	}
	return "no_difference_yet", fmt.Sprintf(
		"No reliable difference yet between %s and %s: %s; always-valid p = %s, not below %s, so %s.",
		b.Variant, a.Variant, nums, fmtP(ps), fmtP(Alpha), next)
}

// finite is x, or 0 for NaN and ±Inf, which JSON cannot carry.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func ptr(x float64) *float64 { return &x }

// pct writes a rate as a percentage with one decimal.
func pct(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

// signedPoints writes a difference of rates in percentage points with its sign.
func signedPoints(x float64) string { return fmt.Sprintf("%+.1f", 100*x) }

// fmtP writes a p-value with three significant digits, or "< 0.0001".
func fmtP(p float64) string {
	if p < 1e-4 {
		return "< 0.0001"
	}
	return fmt.Sprintf("%.3g", p)
}
