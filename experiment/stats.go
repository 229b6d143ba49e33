package experiment

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/salience-ai/salience/models"
)

// The statistics of docs/formulas.md#experiment-statistics. x successes out of n; A is the control, B the
// treatment. Every function is pure; each says what it returns when its inputs leave the
// statistic undefined (ok = false), so callers never carry a NaN into a report.

// Defaults of the report's statistics.
const (
	// Alpha is the two-sided significance level of every interval and test: 95 %.
	Alpha = 0.05
	// SequentialTuning is N*, the sample size at which the always-valid interval is tightest
	// relative to the fixed-horizon one (docs/formulas.md#sequential-test: 5,000).
	SequentialTuning = 5000
	// SRMAlpha is the p-value below which a sample-ratio mismatch is flagged. 0.001 rather than
	// 0.05 because the check is read at every report: with 0.05 a correct assignment would be
	// flagged in one report out of twenty, and a mismatch big enough to bias a comparison
	// reaches 0.001 within a few thousand conversations (a 52/48 split of 10,000 gives
	// p ≈ 6·10⁻⁵).
	SRMAlpha = 0.001
	// exactBetaTerms bounds the terms of the exact P(B > A) sum; above it (or for a
	// non-integer α) the probability is integrated numerically instead, which agrees with
	// the sum to ~1e-10 and costs the same at any count.
	exactBetaTerms = 20000
)

// unitNormal is Φ and Φ⁻¹.
var unitNormal = distuv.UnitNormal

// zCrit is z_{α/2}: Φ⁻¹(1 − α/2) (1.959964 for α = 0.05).
func zCrit(alpha float64) float64 { return unitNormal.Quantile(1 - alpha/2) }

// Wilson is the Wilson score interval of x successes in n trials at level 1 − alpha
// (docs/formulas.md#wilson-interval). ok is false when n ≤ 0. x is clamped to [0, n]. At x = 0 the lower
// bound is exactly 0 and at x = n the upper exactly 1 (the formula gives them up to a
// rounding error of either sign), and the bounds are clamped to [0, 1].
func Wilson(x, n int, alpha float64) (iv Interval, ok bool) {
	if n <= 0 {
		return Interval{}, false
	}
	x = min(max(x, 0), n)
	z := zCrit(alpha)
	nf := float64(n)
	p := float64(x) / nf
	z2 := z * z
	denom := 1 + z2/nf
	centre := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	iv = Interval{Low: models.Clamp01(centre - half), High: models.Clamp01(centre + half)}
	if x == 0 {
		iv.Low = 0
	}
	if x == n {
		iv.High = 1
	}
	return iv, true
}

// ZTest is the two-proportion comparison of docs/formulas.md#two-proportion-z-test.
type ZTest struct {
	Diff   float64  // p̂_B − p̂_A
	DiffCI Interval // unpooled Wald interval of the difference at 1 − alpha
	SE     float64  // unpooled standard error of the difference
	Z      float64  // pooled z statistic
	P      float64  // two-sided p-value of Z
	// ZOK is false when the pooled variance is zero (both arms all successes or all
	// failures): Z and P are then undefined and left zero.
	ZOK bool
}

// TwoProportion compares xB/nB against xA/nA (docs/formulas.md#two-proportion-z-test). ok is false when either
// n ≤ 0.
func TwoProportion(xA, nA, xB, nB int, alpha float64) (t ZTest, ok bool) {
	if nA <= 0 || nB <= 0 {
		return ZTest{}, false
	}
	xA, xB = min(max(xA, 0), nA), min(max(xB, 0), nB)
	na, nb := float64(nA), float64(nB)
	pa, pb := float64(xA)/na, float64(xB)/nb
	t.Diff = pb - pa
	t.SE = math.Sqrt(pa*(1-pa)/na + pb*(1-pb)/nb)
	h := zCrit(alpha) * t.SE
	t.DiffCI = Interval{Low: t.Diff - h, High: t.Diff + h}
	pool := float64(xA+xB) / (na + nb)
	if v := pool * (1 - pool) * (1/na + 1/nb); v > 0 {
		t.Z = t.Diff / math.Sqrt(v)
		t.P = twoSidedP(t.Z)
		t.ZOK = true
	}
	return t, true
}

// twoSidedP is 2(1 − Φ(|z|)), computed as 2Φ(−|z|) so a large z keeps its digits.
func twoSidedP(z float64) float64 { return 2 * unitNormal.CDF(-math.Abs(z)) }

// ProbBBeatsA is P(θ_B > θ_A) for independent θ_A ~ Beta(aA, bA) and θ_B ~ Beta(aB, bB)
// (docs/formulas.md#probability-to-beat; with a Beta(1, 1) prior α = 1 + x and β = 1 + n − x). The closed form
// sums α_B terms, so it needs an integer α_B; it is used when α_B or, by symmetry
// (P(B > A) = 1 − P(A > B), ties having probability zero), α_A is an integer of at most
// exactBetaTerms. Otherwise the probability is integrated: ∫ f_A(t)·S_B(t) dt.
// All parameters must be positive.
func ProbBBeatsA(aA, bA, aB, bB float64) float64 {
	intB, intA := isInt(aB), isInt(aA)
	switch {
	case intB && aB <= exactBetaTerms && (!intA || aB <= aA):
		return betaSum(aA, bA, aB, bB)
	case intA && aA <= exactBetaTerms:
		return 1 - betaSum(aB, bB, aA, bA)
	}
	return betaIntegral(aA, bA, aB, bB)
}

// betaSum is the closed form of docs/formulas.md#probability-to-beat (Evan Miller's): P(B > A) =
// Σ_{i=0}^{α_B−1} B(α_A+i, β_A+β_B) / ((β_B+i)·B(1+i, β_B)·B(α_A, β_A)), in logs.
func betaSum(aA, bA, aB, bB float64) float64 {
	base := mathext.Lbeta(aA, bA)
	var s float64
	for i := 0.0; i < aB; i++ {
		s += math.Exp(mathext.Lbeta(aA+i, bA+bB) - math.Log(bB+i) - mathext.Lbeta(1+i, bB) - base)
	}
	return models.Clamp01(s)
}

// betaIntegral is ∫ f_A(t)·P(θ_B > t) dt by Gauss–Legendre quadrature over the part of
// [0, 1] where f_A has its mass (its mean ± 12 standard deviations): outside it f_A is
// below 1e-30 of its peak for any posterior a report meets, so nothing is lost, and the
// peak of a narrow posterior (large counts) is not missed between nodes of [0, 1].
func betaIntegral(aA, bA, aB, bB float64) float64 {
	a := distuv.Beta{Alpha: aA, Beta: bA}
	b := distuv.Beta{Alpha: aB, Beta: bB}
	m, sd := a.Mean(), a.StdDev()
	lo, hi := max(0, m-12*sd), min(1, m+12*sd)
	f := func(t float64) float64 { return a.Prob(t) * b.Survival(t) }
	return models.Clamp01(quad.Fixed(f, lo, hi, 400, nil, 0))
}

func isInt(x float64) bool { return x == math.Trunc(x) && !math.IsInf(x, 0) }

// ExpectedLossNormal is E[max(−Δ, 0)] for Δ ~ N(mu, sigma²): σφ(μ/σ) − μΦ(−μ/σ)
// (docs/formulas.md#expected-loss). With Δ = θ_B − θ_A it is the expected loss of choosing B; the loss of
// choosing A is ExpectedLossNormal(−mu, sigma) = mu + ExpectedLossNormal(mu, sigma).
// sigma = 0 gives the limit, max(−mu, 0).
func ExpectedLossNormal(mu, sigma float64) float64 {
	if sigma <= 0 {
		return max(-mu, 0)
	}
	r := mu / sigma
	return max(0, sigma*unitNormal.Prob(r)-mu*unitNormal.CDF(-r))
}

// Lift is the relative lift of B over A with its delta-method standard error
// (docs/formulas.md#relative-lift).
type Lift struct {
	L           float64 // (m_B − m_A) / m_A
	SE          float64 // √Var
	Z           float64 // L / SE
	ChanceToWin float64 // Φ(L / SE)
	P           float64 // two-sided p-value of Z
}

// RelativeLift is the relative lift of B's rate mB (over nB trials) against A's mA (over nA).
// ok is false when it is undefined: mA = 0, a count ≤ 0, or a zero variance (both rates 0
// or 1), where SE = 0 would make Z infinite.
func RelativeLift(mA float64, nA int, mB float64, nB int) (l Lift, ok bool) {
	if mA <= 0 || nA <= 0 || nB <= 0 {
		return Lift{}, false
	}
	vA, vB := mA*(1-mA), mB*(1-mB)
	na, nb := float64(nA), float64(nB)
	v := vB/(mA*mA*nb) + vA*mB*mB/(mA*mA*mA*mA*na)
	if !(v > 0) {
		return Lift{}, false
	}
	l.L = (mB - mA) / mA
	l.SE = math.Sqrt(v)
	l.Z = l.L / l.SE
	l.ChanceToWin = unitNormal.CDF(l.Z)
	l.P = twoSidedP(l.Z)
	return l, true
}

// SequentialRho is the mixing parameter ρ of the always-valid test tuned to be tightest at
// nStar observations (docs/formulas.md#sequential-test): ρ = √((−2 ln α + ln(−2 ln α + 1)) / N*).
func SequentialRho(alpha, nStar float64) float64 {
	l := -2 * math.Log(alpha)
	return math.Sqrt((l + math.Log(l+1)) / nStar)
}

// SequentialHalfWidth is the always-valid (mixture sequential probability ratio) half-width
// of an estimate with standard error se after n observations in all (docs/formulas.md#sequential-test):
// with s² = se²·n, √s²·√(2(nρ² + 1)·ln(√(nρ² + 1)/α) / (n²ρ²)). ok is false when n ≤ 0 or
// se is not positive.
func SequentialHalfWidth(se float64, n int, alpha, nStar float64) (float64, bool) {
	if n <= 0 || !(se > 0) {
		return 0, false
	}
	rho := SequentialRho(alpha, nStar)
	nf := float64(n)
	r2 := rho * rho
	s := se * math.Sqrt(nf)
	return s * math.Sqrt(2*(nf*r2+1)*math.Log(math.Sqrt(nf*r2+1)/alpha)/(nf*nf*r2)), true
}

// SequentialP is the always-valid p-value at one look with statistic z after n observations
// (docs/formulas.md#sequential-test): e = exp(ρ²nz² / (2(nρ² + 1))) / √(nρ² + 1), p = min(1, 1/e),
// computed in logs so a large z gives a tiny p rather than 1/∞. The p-value valid across
// several looks is the running minimum of the looks' values (SequentialPOverLooks).
func SequentialP(z float64, n int, alpha, nStar float64) float64 {
	if n <= 0 {
		return 1
	}
	rho := SequentialRho(alpha, nStar)
	nf := float64(n)
	d := nf*rho*rho + 1
	logE := rho*rho*nf*z*z/(2*d) - 0.5*math.Log(d)
	return math.Min(1, math.Exp(-logE))
}

// SRMTest is the sample-ratio-mismatch χ² test of docs/formulas.md#sample-ratio-mismatch.
type SRMTest struct {
	Expected  []float64
	ChiSquare float64
	DF        int
	P         float64
}

// SampleRatio tests observed counts against planned weights (any positive scale): E_i =
// n·w_i/Σw, χ² = Σ(O_i − E_i)²/E_i, p from the χ²(k − 1) survival function. ok is false with
// fewer than two groups, mismatched lengths, no observations, or a weight that is not
// positive (an arm planned to get nothing cannot be tested against).
func SampleRatio(observed []int, weights []float64) (t SRMTest, ok bool) {
	k := len(observed)
	if k < 2 || len(weights) != k {
		return SRMTest{}, false
	}
	var n int
	var sw float64
	for i := range k {
		if observed[i] < 0 || !(weights[i] > 0) || math.IsInf(weights[i], 0) {
			return SRMTest{}, false
		}
		n += observed[i]
		sw += weights[i]
	}
	if n == 0 {
		return SRMTest{}, false
	}
	t.Expected = make([]float64, k)
	for i := range k {
		e := float64(n) * weights[i] / sw
		t.Expected[i] = e
		d := float64(observed[i]) - e
		t.ChiSquare += d * d / e
	}
	t.DF = k - 1
	t.P = distuv.ChiSquared{K: float64(t.DF)}.Survival(t.ChiSquare)
	return t, true
}

// Percentiles returns the p50 and p95 of xs (nearest rank: the smallest value with at least
// that share of values at or below it, so a percentile is always an observed latency).
// Values that are NaN or infinite are skipped; ok is false when none is left. xs is not
// modified.
func Percentiles(xs []float64) (p50, p95 float64, ok bool) {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return 0, 0, false
	}
	slices.Sort(s)
	return stat.Quantile(0.5, stat.Empirical, s, nil), stat.Quantile(0.95, stat.Empirical, s, nil), true
}

// Precision is (used + helpful) / surfaced; ok is false when nothing was surfaced.
func Precision(used, helpful, surfaced int) (float64, bool) {
	return rate(used+helpful, surfaced)
}

// DismissalRate is dismissed / surfaced; ok is false when nothing was surfaced.
func DismissalRate(dismissed, surfaced int) (float64, bool) {
	return rate(dismissed, surfaced)
}

func rate(x, n int) (float64, bool) {
	if n <= 0 {
		return 0, false
	}
	return float64(min(max(x, 0), n)) / float64(n), true
}

// Look is the cumulative data of control (A) and treatment (B) at one look.
type Look struct {
	XA, NA, XB, NB int
}

// SequentialLiftP is the always-valid p-value of the relative lift over a series of looks:
// the running minimum of SequentialP at each look (z = lift / SE, n = n_A + n_B). Taking the
// minimum is what makes repeated peeking safe — the mixture test bounds the chance that the
// p-value ever drops below α, at any look, by α. Looks where the lift is undefined are
// skipped; ok is false when every look is.
func SequentialLiftP(looks []Look, alpha, nStar float64) (p float64, ok bool) {
	p = 1
	for _, lk := range looks {
		if lk.NA <= 0 || lk.NB <= 0 {
			continue
		}
		l, lok := RelativeLift(float64(lk.XA)/float64(lk.NA), lk.NA, float64(lk.XB)/float64(lk.NB), lk.NB)
		if !lok {
			continue
		}
		p = min(p, SequentialP(l.Z, lk.NA+lk.NB, alpha, nStar))
		ok = true
	}
	return p, ok
}
