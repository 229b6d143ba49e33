package experiment

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/salience-ai/salience/models"
)

// methods is the Methods block every report carries: the words for what the numbers are.
var methods = Methods{
	Confidence:    1 - Alpha,
	Precision:     "(used + helpful) / surfaced with a Wilson score 95 % interval",
	DismissalRate: "dismissed / surfaced with a Wilson score 95 % interval; lower is better",
	PerTurn: "used per turn = (used + helpful) / turns and surfaced per turn = surfaced / turns, empty turns included, with a normal 95 % interval " +
		"from the Poisson variance m / turns (the tallies keep totals, not per-turn counts; a turn surfaces a few memories at most, so this is on the wide side)",
	RewardPerTurn: "the threshold bandit's reward averaged over turns: an empty turn earns 0.4, another the mean over its surfacings of helpful 1, used 0.8, " +
		"ignored or not yet reported 0.2, dismissed 0 (the variant's mean per surfacing, as the tallies keep outcomes per variant); " +
		"normal 95 % interval from r(1 − r) / turns, the largest variance a per-turn value in [0, 1] can have",
	Latency: "nearest-rank p50 and p95 of recall-turn latency",
	Difference: "metric(variant) − metric(control): unpooled Wald 95 % interval; for a rate the pooled two-proportion z-test, " +
		"for a per-turn mean the Wald z-test",
	Prior:       "Beta(1,1)",
	ChanceToWin: "Φ(lift / SE) on the relative lift (delta-method SE)",
	ProbBeatControl: "the chance the variant is better on the absolute difference: for a rate Beta(1,1) priors, exact sum; " +
		"for a per-turn mean Φ(difference / SE)",
	ExpectedLoss: "normal approximation of θ_variant − θ_control: σφ(μ/σ) − μΦ(−μ/σ)",
	Sequential:   "always-valid mixture SPRT on the relative lift (α = 0.05, N* = 5000); p is the minimum over the daily looks and now",
	SRM:          "χ² test of conversations per variant against the planned shares",
	SRMAlpha:     SRMAlpha,
}

// Analyze computes the report (pure, deterministic: same Input, same Report; nothing is
// random). Variants[0] is the control; with no variants the report has no rows. Counts that
// cannot be right (used + helpful above surfaced) are clamped inside the statistics, never
// turned into NaN.
func Analyze(in Input) Report {
	metric, ok := models.ParsePrimaryMetric(in.PrimaryMetric)
	if !ok {
		metric = models.DefaultPrimaryMetric // a snapshot of a future build; validated on create
	}
	m := methods
	m.PrimaryMetric = metricLabel(metric)
	if lowerIsBetter(metric) {
		m.PrimaryMetric += " (lower is better)"
	}
	r := Report{
		PrimaryMetric: metric,
		ExperimentID:  in.ExperimentID,
		Name:          in.Name,
		Status:        in.Status,
		CreatedAt:     in.CreatedAt.UTC(),
		AsOf:          in.AsOf.UTC(),
		Variants:      make([]VariantReport, 0, len(in.Variants)),
		Comparisons:   []Comparison{},
		Methods:       m,
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
		r.Comparisons = append(r.Comparisons, compare(in.Variants[0], v, metric, r.SRM, in.Status))
	}
	return r
}

func analyzeVariant(t Tally) VariantReport {
	v := VariantReport{
		Variant:       t.Variant,
		Share:         finite(t.Share),
		Conversations: t.Conversations,
		Turns:         t.Turns,
		EmptyTurns:    t.EmptyTurns,
		Surfaced:      t.Surfaced,
		Used:          t.Used,
		Helpful:       t.Helpful,
		Ignored:       t.Ignored,
		Dismissed:     t.Dismissed,
		Days:          make([]DayReport, 0, len(t.Days)),
	}
	v.Precision, v.PrecisionCI = precision(t.Used+t.Helpful, t.Surfaced)
	v.DismissalRate, v.DismissalRateCI = precision(t.Dismissed, t.Surfaced)
	v.UsedPerTurn, v.UsedPerTurnCI = perTurn(models.MetricUsedPerTurn, t, false)
	v.SurfacedPerTurn, v.SurfacedPerTurnCI = perTurn(metricSurfacedPerTurn, t, false)
	v.RewardPerTurn, v.RewardPerTurnCI = perTurn(models.MetricRewardPerTurn, t, true)
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

// perTurn is a per-turn metric with its normal interval, both nil without turns.
func perTurn(metric string, t Tally, bounded bool) (*float64, *Interval) {
	e, ok := MetricOf(metric, t)
	if !ok {
		return nil, nil
	}
	iv := meanInterval(e, bounded)
	return &e.Mean, &iv
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

func compare(a, b Tally, metric string, s *SRM, status string) Comparison {
	c := Comparison{Variant: b.Variant, Control: a.Variant, Metric: metric}
	eA, okA := MetricOf(metric, a)
	eB, okB := MetricOf(metric, b)
	if !okA || !okB {
		c.Outcome = "not_enough_data"
		if isRate(metric) {
			c.Verdict = fmt.Sprintf("Not enough data: %s has surfaced %d memories and %s %d; %s needs surfacings in both.",
				a.Variant, a.Surfaced, b.Variant, b.Surfaced, metricLabel(metric))
		} else {
			c.Verdict = fmt.Sprintf("Not enough data: %s has %d turns and %s %d; %s needs turns in both.",
				a.Variant, a.Turns, b.Variant, b.Turns, metricLabel(metric))
		}
		return c
	}
	if isRate(metric) {
		compareRates(&c, a, b, metric)
	} else {
		compareMeans(&c, a, b, metric, eA, eB)
	}
	c.Outcome, c.Verdict = verdict(c, a, b, eA.Mean, eB.Mean, s, status)
	return c
}

// compareRates fills c for a rate of surfacings (precision, dismissal rate): the two-
// proportion test, Beta posteriors and the sequential test on the relative lift.
func compareRates(c *Comparison, a, b Tally, metric string) {
	xA, nA := rateCounts(metric, a)
	xB, nB := rateCounts(metric, b)
	zt, _ := TwoProportion(xA, nA, xB, nB, Alpha) // nA, nB > 0: MetricOf was ok
	c.Difference, c.DifferenceCI = ptr(zt.Diff), &zt.DiffCI
	if zt.ZOK {
		c.Z, c.P = ptr(zt.Z), ptr(zt.P)
	}
	xA, xB = min(max(xA, 0), nA), min(max(xB, 0), nB)
	aA, bA := float64(1+xA), float64(1+nA-xA)
	aB, bB := float64(1+xB), float64(1+nB-xB)
	gain := zt.Diff
	if lowerIsBetter(metric) {
		c.ProbBeatControl = ptr(1 - ProbBBeatsA(aA, bA, aB, bB))
		gain = -gain
	} else {
		c.ProbBeatControl = ptr(ProbBBeatsA(aA, bA, aB, bB))
	}
	c.ExpectedLossVariant = ptr(ExpectedLossNormal(gain, zt.SE))
	c.ExpectedLossControl = ptr(ExpectedLossNormal(-gain, zt.SE))

	mA, mB := float64(xA)/float64(nA), float64(xB)/float64(nB)
	l, lok := RelativeLift(mA, nA, mB, nB)
	if lok {
		setLift(c, metric, l, nA+nB)
		var lks []Look
		for _, cum := range cumulative(a, b) {
			x1, n1 := rateCounts(metric, cum[0])
			x2, n2 := rateCounts(metric, cum[1])
			lks = append(lks, clampLook(Look{XA: x1, NA: n1, XB: x2, NB: n2}))
		}
		if p, ok := SequentialLiftP(lks, Alpha, SequentialTuning); ok {
			c.SequentialP = ptr(p)
		}
	}
}

// compareMeans fills c for a per-turn mean: a Wald difference, normal approximations of
// the chance to beat and the losses, and the sequential test on the relative lift over the
// same daily looks as a rate.
func compareMeans(c *Comparison, a, b Tally, metric string, eA, eB Estimate) {
	diff := eB.Mean - eA.Mean
	se := math.Sqrt(eA.Var + eB.Var)
	h := zCrit(Alpha) * se
	c.Difference, c.DifferenceCI = ptr(diff), &Interval{Low: diff - h, High: diff + h}
	if se > 0 {
		z := diff / se
		c.Z, c.P = ptr(z), ptr(twoSidedP(z))
		c.ProbBeatControl = ptr(unitNormal.CDF(z))
	}
	c.ExpectedLossVariant = ptr(ExpectedLossNormal(diff, se))
	c.ExpectedLossControl = ptr(ExpectedLossNormal(-diff, se))
	l, lok := LiftOfMeans(eA.Mean, eA.Var, eB.Mean, eB.Var)
	if !lok {
		return
	}
	setLift(c, metric, l, eA.N+eB.N)
	p, seen := 1.0, false
	for _, cum := range cumulative(a, b) {
		ca, okA := MetricOf(metric, cum[0])
		cb, okB := MetricOf(metric, cum[1])
		if !okA || !okB {
			continue
		}
		if lk, ok := LiftOfMeans(ca.Mean, ca.Var, cb.Mean, cb.Var); ok {
			p, seen = min(p, SequentialP(lk.Z, ca.N+cb.N, Alpha, SequentialTuning)), true
		}
	}
	if seen {
		c.SequentialP = ptr(p)
	}
}

// setLift records the relative lift and its always-valid interval; the chance to win
// counts a fall as the win when lower is better.
func setLift(c *Comparison, metric string, l Lift, n int) {
	c.RelativeLift, c.RelativeLiftSE, c.RelativeLiftP = ptr(l.L), ptr(l.SE), ptr(l.P)
	if lowerIsBetter(metric) {
		c.ChanceToWin = ptr(1 - l.ChanceToWin)
	} else {
		c.ChanceToWin = ptr(l.ChanceToWin)
	}
	if hw, ok := SequentialHalfWidth(l.SE, n, Alpha, SequentialTuning); ok {
		c.SequentialHalfWidth = ptr(hw)
		c.SequentialLiftCI = &Interval{Low: l.L - hw, High: l.L + hw}
	}
}

// cumulative are the control's and the treatment's cumulative tallies at the end of each
// day either arm has, then the totals (the report's own look, which also covers data the
// days do not, if a store sends none): the looks of the sequential test.
func cumulative(a, b Tally) [][2]Tally {
	byDay := map[time.Time]*[2]Tally{}
	var keys []time.Time
	add := func(arm int, days []DayTally) {
		for _, d := range days {
			k := d.Day.UTC()
			e, ok := byDay[k]
			if !ok {
				e = &[2]Tally{}
				byDay[k] = e
				keys = append(keys, k)
			}
			t := &e[arm]
			t.Turns += d.Turns
			t.EmptyTurns += d.EmptyTurns
			t.Surfaced += d.Surfaced
			t.Used += d.Used
			t.Helpful += d.Helpful
			t.Ignored += d.Ignored
			t.Dismissed += d.Dismissed
		}
	}
	add(0, a.Days)
	add(1, b.Days)
	slices.SortFunc(keys, time.Time.Compare)
	out := make([][2]Tally, 0, len(keys)+1)
	var cum [2]Tally
	for _, k := range keys {
		d := byDay[k]
		for i := range cum {
			cum[i].Turns += d[i].Turns
			cum[i].EmptyTurns += d[i].EmptyTurns
			cum[i].Surfaced += d[i].Surfaced
			cum[i].Used += d[i].Used
			cum[i].Helpful += d[i].Helpful
			cum[i].Ignored += d[i].Ignored
			cum[i].Dismissed += d[i].Dismissed
		}
		out = append(out, cum)
	}
	return append(out, [2]Tally{a, b})
}

func clampLook(l Look) Look {
	l.XA, l.XB = min(max(l.XA, 0), l.NA), min(max(l.XB, 0), l.NB)
	return l
}

// verdict is the comparison in plain words. It calls a variant better or worse only when
// the always-valid p is below α (so repeated reading of the report cannot manufacture a
// win) and the difference's 95 % interval excludes zero; otherwise it says the difference
// is not yet reliable, with the numbers that say why. For a metric where lower is better
// (dismissal rate) a difference below zero is the win. A sample-ratio mismatch overrides
// everything: the assignment is broken, so no comparison is trusted.
func verdict(c Comparison, a, b Tally, mA, mB float64, s *SRM, status string) (string, string) {
	m := c.Metric
	nums := fmt.Sprintf("%s %s vs %s (difference %s%s, 95 %% CI %s to %s)", metricLabel(m),
		fmtMetric(m, mB), fmtMetric(m, mA), fmtDiff(m, *c.Difference), diffUnit(m),
		fmtDiff(m, c.DifferenceCI.Low), fmtDiff(m, c.DifferenceCI.High))
	if lowerIsBetter(m) {
		nums += ", lower is better"
	}
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
	up, down := c.DifferenceCI.Low > 0, c.DifferenceCI.High < 0
	if lowerIsBetter(m) {
		up, down = down, up
	}
	switch {
	case ps < Alpha && up:
		return "better", fmt.Sprintf("%s is better than %s: %s; always-valid p = %s.",
			b.Variant, a.Variant, nums, fmtP(ps))
	case ps < Alpha && down:
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
