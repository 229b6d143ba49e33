package experiment

import (
	"fmt"
	"math"

	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// The metrics a report shows per variant, and the one it ranks by. Precision alone favours
// silence (a variant that surfaces less is right more often and helps less), so every
// report also shows what a bot gains per turn, and an experiment ranks by reward per turn
// unless it declared another primary metric.

// Estimate is a metric's value for one variant with the variance of that value (the
// squared standard error) and the observations behind it (turns or surfacings).
type Estimate struct {
	Mean, Var float64
	N         int
}

// lowerIsBetter reports whether a smaller value of the metric is the better one.
func lowerIsBetter(metric string) bool { return metric == models.MetricDismissalRate }

// isRate reports whether the metric is a proportion of surfacings (a Wilson interval and
// the Beta and two-proportion machinery apply) rather than a mean per turn.
func isRate(metric string) bool {
	return metric == models.MetricPrecision || metric == models.MetricDismissalRate
}

// rateCounts returns the x and n of a rate metric.
func rateCounts(metric string, t Tally) (x, n int) {
	if metric == models.MetricDismissalRate {
		return t.Dismissed, t.Surfaced
	}
	return successes(t), t.Surfaced
}

// MetricOf is the metric's estimate for a tally; ok is false when it is undefined (no
// surfacings for a rate, no turns for a per-turn mean). The variances:
//   - rates: p(1 − p)/n, the binomial variance;
//   - used and surfaced per turn: m/turns, the Poisson variance of a count per turn. The
//     tallies keep totals, not per-turn counts, so the per-turn variance is not known; a
//     turn's count is at most the few memories it may surface, which makes it less
//     dispersed than a Poisson count, so this errs on the wide side;
//   - reward per turn: r(1 − r)/turns, the largest variance a per-turn value in [0, 1] with
//     mean r can have (all turns at 0 or 1): again wide rather than falsely narrow.
func MetricOf(metric string, t Tally) (Estimate, bool) {
	if isRate(metric) {
		x, n := rateCounts(metric, t)
		p, ok := rate(x, n)
		if !ok {
			return Estimate{}, false
		}
		return Estimate{Mean: p, Var: p * (1 - p) / float64(n), N: n}, true
	}
	if t.Turns <= 0 {
		return Estimate{}, false
	}
	n := float64(t.Turns)
	var m float64
	switch metric {
	case models.MetricUsedPerTurn:
		m = float64(max(successes(t), 0)) / n
		return Estimate{Mean: m, Var: m / n, N: t.Turns}, true
	case metricSurfacedPerTurn:
		m = float64(max(t.Surfaced, 0)) / n
		return Estimate{Mean: m, Var: m / n, N: t.Turns}, true
	}
	r := RewardPerTurn(t)
	return Estimate{Mean: r, Var: r * (1 - r) / n, N: t.Turns}, true
}

// metricSurfacedPerTurn is shown in every report but not offered as a primary metric: more
// surfacing is not in itself better or worse.
const metricSurfacedPerTurn = "surfaced_per_turn"

// RewardPerTurn is the threshold bandit's reward (engagement.TurnReward) averaged over the
// variant's turns: a turn that surfaced nothing earns engagement.EmptyTurnReward (0.4), a
// turn that surfaced memories the mean reward of their outcomes (helpful 1, used 0.8,
// ignored 0.2, dismissed 0; a surfacing without an outcome yet counts as ignored, as the
// implicit-ignore job will record it). The tallies count outcomes per variant, not per
// turn, so the non-empty turns share the variant's mean reward per surfacing: exact when
// those turns surface equally many memories, and otherwise weighting a turn by how many it
// surfaced. 0 with no turns. A namespace's own empty-turn reward is not applied: the report
// compares variants on one scale.
func RewardPerTurn(t Tally) float64 {
	if t.Turns <= 0 {
		return 0
	}
	turns := float64(t.Turns)
	empty := float64(min(max(t.EmptyTurns, 0), t.Turns))
	if t.Surfaced <= 0 {
		return engagement.EmptyTurnReward
	}
	s := float64(t.Surfaced)
	used, helpful, dismissed := clampCount(t.Used, t.Surfaced), clampCount(t.Helpful, t.Surfaced), clampCount(t.Dismissed, t.Surfaced)
	// The outcomes cannot exceed the surfacings; the rest were ignored or are pending.
	over := max(0, used+helpful+dismissed-s)
	dismissed = max(0, dismissed-over)
	rest := max(0, s-used-helpful-dismissed)
	perSurfacing := (helpful*engagement.RewardHelpful + used*engagement.RewardUsed +
		rest*engagement.RewardIgnored + dismissed*engagement.RewardDismissed) / s
	r := (empty*engagement.EmptyTurnReward + (turns-empty)*perSurfacing) / turns
	return models.Clamp01(r)
}

func clampCount(x, n int) float64 { return float64(min(max(x, 0), n)) }

// meanInterval is the normal 95 % interval m ± z·√var, not below 0, nor above 1 when the
// metric is bounded by 1.
func meanInterval(e Estimate, bounded bool) Interval {
	h := zCrit(Alpha) * math.Sqrt(max(e.Var, 0))
	iv := Interval{Low: max(0, e.Mean-h), High: e.Mean + h}
	if bounded {
		iv.High = min(1, iv.High)
	}
	return iv
}

// LiftOfMeans is the relative lift of B's mean over A's with its delta-method standard
// error (docs/formulas.md#relative-lift with the variances of the means given): Var = vB/mA² +
// mB²·vA/mA⁴. ok is false when mA ≤ 0 or the variance is not positive.
func LiftOfMeans(mA, vA, mB, vB float64) (l Lift, ok bool) {
	if !(mA > 0) {
		return Lift{}, false
	}
	v := vB/(mA*mA) + mB*mB*vA/(mA*mA*mA*mA)
	if !(v > 0) || math.IsInf(v, 0) {
		return Lift{}, false
	}
	l.L = (mB - mA) / mA
	l.SE = math.Sqrt(v)
	l.Z = l.L / l.SE
	l.ChanceToWin = unitNormal.CDF(l.Z)
	l.P = twoSidedP(l.Z)
	return l, true
}

// metricLabel is a metric's name in a sentence.
func metricLabel(metric string) string {
	switch metric {
	case models.MetricUsedPerTurn:
		return "used per turn"
	case models.MetricPrecision:
		return "precision"
	case models.MetricDismissalRate:
		return "dismissal rate"
	}
	return "reward per turn"
}

// fmtMetric writes a metric's value: rates as percentages, per-turn means with 3 decimals.
func fmtMetric(metric string, x float64) string {
	if isRate(metric) {
		return pct(x)
	}
	return fmt.Sprintf("%.3f", x)
}

// fmtDiff writes a difference of the metric: points for rates, 3 signed decimals otherwise.
func fmtDiff(metric string, x float64) string {
	if isRate(metric) {
		return signedPoints(x)
	}
	return fmt.Sprintf("%+.3f", x)
}

// diffUnit is the unit after a difference in a verdict.
func diffUnit(metric string) string {
	if isRate(metric) {
		return " points"
	}
	return ""
}
