package experiment

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// near fails unless got equals the literal want to the last digit want is written with
// (half a unit of its last decimal place): the known values of docs/formulas.md#known-values are given to
// 6–8 significant digits, so this reproduces each to every digit it states.
func near(t *testing.T, name string, got float64, want string) {
	t.Helper()
	w, err := strconv.ParseFloat(want, 64)
	if err != nil {
		t.Fatalf("%s: bad literal %q", name, want)
	}
	decimals := 0
	if i := strings.IndexByte(want, '.'); i >= 0 {
		decimals = len(want) - i - 1
	}
	tol := 0.5*math.Pow(10, -float64(decimals)) + 1e-15
	if math.IsNaN(got) || math.Abs(got-w) > tol {
		t.Errorf("%s = %.10g, want %s (±%.1g)", name, got, want, tol)
	}
}

// The known values of docs/formulas.md#known-values (cross-checked there against SciPy).

func TestTwoProportionKnownValues(t *testing.T) {
	zt, ok := TwoProportion(200, 1000, 250, 1000, Alpha)
	if !ok || !zt.ZOK {
		t.Fatalf("TwoProportion: ok = %v, ZOK = %v", ok, zt.ZOK)
	}
	near(t, "z", zt.Z, "2.677398")
	near(t, "p", zt.P, "0.00741965")
	near(t, "diff CI low", zt.DiffCI.Low, "0.013464")
	near(t, "diff CI high", zt.DiffCI.High, "0.086536")
	near(t, "diff", zt.Diff, "0.05")
}

func TestWilsonKnownValues(t *testing.T) {
	for _, tc := range []struct {
		x, n      int
		low, high string
	}{
		{81, 263, "0.255289", "0.366210"},
		{0, 10, "0", "0.277533"},
	} {
		iv, ok := Wilson(tc.x, tc.n, Alpha)
		if !ok {
			t.Fatalf("Wilson(%d, %d): not ok", tc.x, tc.n)
		}
		near(t, "low", iv.Low, tc.low)
		near(t, "high", iv.High, tc.high)
	}
	if iv, _ := Wilson(0, 10, Alpha); iv.Low != 0 {
		t.Errorf("Wilson(0, 10).Low = %g, want exactly 0", iv.Low)
	}
}

func TestProbBBeatsAKnownValues(t *testing.T) {
	for _, tc := range []struct {
		xA, nA, xB, nB int
		want           string
	}{
		{200, 1000, 250, 1000, "0.99628333"},
		{10, 100, 15, 100, "0.85328379"},
	} {
		aA, bA := float64(1+tc.xA), float64(1+tc.nA-tc.xA)
		aB, bB := float64(1+tc.xB), float64(1+tc.nB-tc.xB)
		near(t, "exact sum", betaSum(aA, bA, aB, bB), tc.want)
		near(t, "by symmetry", 1-betaSum(aB, bB, aA, bA), tc.want)
		near(t, "integral", betaIntegral(aA, bA, aB, bB), tc.want)
		near(t, "ProbBBeatsA", ProbBBeatsA(aA, bA, aB, bB), tc.want)
	}
}

func TestSampleRatioKnownValues(t *testing.T) {
	for _, tc := range []struct {
		obs       []int
		w         []float64
		chi2, p   string
		wantDF    int
		wantFlags bool
	}{
		{[]int{5000, 5200}, []float64{0.5, 0.5}, "3.921569", "0.0476704", 1, false},
		{[]int{3300, 3300, 3600}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, "17.647059", "0.000147228", 2, true},
	} {
		s, ok := SampleRatio(tc.obs, tc.w)
		if !ok {
			t.Fatalf("SampleRatio(%v): not ok", tc.obs)
		}
		near(t, "chi2", s.ChiSquare, tc.chi2)
		near(t, "p", s.P, tc.p)
		if s.DF != tc.wantDF {
			t.Errorf("df = %d, want %d", s.DF, tc.wantDF)
		}
		if got := s.P < SRMAlpha; got != tc.wantFlags {
			t.Errorf("%v: flagged = %v, want %v at SRMAlpha %g", tc.obs, got, tc.wantFlags, SRMAlpha)
		}
	}
}

func TestRelativeLiftKnownValues(t *testing.T) {
	l, ok := RelativeLift(0.20, 1000, 0.25, 1000)
	if !ok {
		t.Fatal("RelativeLift: not ok")
	}
	near(t, "L", l.L, "0.25")
	near(t, "SE", l.SE, "0.104583")
	near(t, "chance to win", l.ChanceToWin, "0.991586")
	near(t, "p", l.P, "0.0168274")
}

func TestSequentialKnownValues(t *testing.T) {
	// "Same data" as the relative-lift row: the test runs on the relative lift, n = 2,000.
	near(t, "rho", SequentialRho(0.05, SequentialTuning), "0.039840")
	l, _ := RelativeLift(0.20, 1000, 0.25, 1000)
	hw, ok := SequentialHalfWidth(l.SE, 2000, 0.05, SequentialTuning)
	if !ok {
		t.Fatal("SequentialHalfWidth: not ok")
	}
	near(t, "half-width", hw, "0.326693")
	near(t, "fixed-horizon half-width", zCrit(0.05)*l.SE, "0.204978")
	near(t, "p_seq", SequentialP(l.Z, 2000, 0.05, SequentialTuning), "0.232651")
}

func TestExpectedLossKnownValues(t *testing.T) {
	zt, _ := TwoProportion(200, 1000, 250, 1000, Alpha)
	near(t, "sigma", zt.SE, "0.018641")
	near(t, "loss of choosing B", ExpectedLossNormal(zt.Diff, zt.SE), "0.00002094")
	near(t, "loss of choosing A", ExpectedLossNormal(-zt.Diff, zt.SE), "0.05002094")
	// The two losses differ by exactly the mean difference: E[max(Δ,0)] − E[max(−Δ,0)] = μ.
	if d := ExpectedLossNormal(-zt.Diff, zt.SE) - ExpectedLossNormal(zt.Diff, zt.SE); math.Abs(d-0.05) > 1e-12 {
		t.Errorf("loss(A) − loss(B) = %.15g, want 0.05", d)
	}
}

// TestProbBBeatsALargeAndFractional checks the paths the known values do not reach: counts
// beyond the exact sum's bound and a non-integer α agree with the normal approximation of
// the two posteriors (which is accurate at these counts) and with each other.
func TestProbBBeatsALargeAndFractional(t *testing.T) {
	normal := func(aA, bA, aB, bB float64) float64 {
		mA, mB := aA/(aA+bA), aB/(aB+bB)
		vA := aA * bA / ((aA + bA) * (aA + bA) * (aA + bA + 1))
		vB := aB * bB / ((aB + bB) * (aB + bB) * (aB + bB + 1))
		return unitNormal.CDF((mB - mA) / math.Sqrt(vA+vB))
	}
	for _, tc := range []struct {
		name           string
		aA, bA, aB, bB float64
		tol            float64
	}{
		// 1,000,000 surfacings per arm, precision 0.300 vs 0.301: α ≈ 300,000, far above
		// exactBetaTerms, so it is integrated.
		{"large", 300001, 700001, 301001, 699001, 2e-3},
		{"fractional α", 20.5, 80.5, 25.5, 75.5, 2e-2},
	} {
		got := ProbBBeatsA(tc.aA, tc.bA, tc.aB, tc.bB)
		want := normal(tc.aA, tc.bA, tc.aB, tc.bB)
		if math.Abs(got-want) > tc.tol {
			t.Errorf("%s: ProbBBeatsA = %.6f, normal approximation %.6f", tc.name, got, want)
		}
	}
	// Integer α within the bound: the integral agrees with the exact sum far beyond 6 digits.
	aA, bA, aB, bB := 3001.0, 7001.0, 3101.0, 6901.0
	if s, q := betaSum(aA, bA, aB, bB), betaIntegral(aA, bA, aB, bB); math.Abs(s-q) > 1e-9 {
		t.Errorf("sum %.12f vs integral %.12f", s, q)
	}
	// A NaN parameter (outside the contract) gives 0 through models.Clamp01, never a NaN
	// that would reach a report.
	for _, p := range [][4]float64{{math.NaN(), 1, 1.5, 1}, {1.5, 1, math.NaN(), 1}, {1, math.NaN(), 1, 1}} {
		if got := ProbBBeatsA(p[0], p[1], p[2], p[3]); got != 0 {
			t.Errorf("ProbBBeatsA%v = %v, want 0", p, got)
		}
	}
}

func TestUndefinedStatisticsAreNotOK(t *testing.T) {
	if _, ok := Wilson(0, 0, Alpha); ok {
		t.Error("Wilson(0, 0) ok")
	}
	if _, ok := TwoProportion(0, 0, 1, 10, Alpha); ok {
		t.Error("TwoProportion with nA = 0 ok")
	}
	if zt, ok := TwoProportion(0, 10, 0, 10, Alpha); !ok || zt.ZOK || zt.Diff != 0 {
		t.Errorf("TwoProportion(0/10, 0/10) = %+v, %v: want ok with ZOK false", zt, ok)
	}
	if _, ok := RelativeLift(0, 100, 0.2, 100); ok {
		t.Error("RelativeLift with control rate 0 ok")
	}
	if _, ok := RelativeLift(1, 100, 1, 100); ok {
		t.Error("RelativeLift with zero variance ok")
	}
	if _, ok := SequentialHalfWidth(0, 100, Alpha, SequentialTuning); ok {
		t.Error("SequentialHalfWidth with se 0 ok")
	}
	if _, ok := SampleRatio([]int{10}, []float64{1}); ok {
		t.Error("SampleRatio with one group ok")
	}
	if _, ok := SampleRatio([]int{0, 0}, []float64{1, 1}); ok {
		t.Error("SampleRatio with no observations ok")
	}
	if _, ok := SampleRatio([]int{5, 5}, []float64{1, 0}); ok {
		t.Error("SampleRatio with a zero weight ok")
	}
	if _, _, ok := Percentiles([]float64{math.NaN()}); ok {
		t.Error("Percentiles of only NaN ok")
	}
	if got := ExpectedLossNormal(-0.1, 0); got != 0.1 {
		t.Errorf("ExpectedLossNormal(−0.1, 0) = %g, want 0.1", got)
	}
	if got := SequentialP(40, 2000, Alpha, SequentialTuning); !(got >= 0 && got < 1e-100) {
		t.Errorf("SequentialP(z = 40) = %g, want a tiny positive number", got)
	}
}

func TestRatesAndPercentiles(t *testing.T) {
	if p, ok := Precision(30, 20, 200); !ok || p != 0.25 {
		t.Errorf("Precision(30, 20, 200) = %g, %v; want 0.25", p, ok)
	}
	if d, ok := DismissalRate(10, 200); !ok || d != 0.05 {
		t.Errorf("DismissalRate(10, 200) = %g, %v; want 0.05", d, ok)
	}
	if _, ok := Precision(0, 0, 0); ok {
		t.Error("Precision of nothing surfaced ok")
	}
	// 1..100 in reverse: nearest rank gives the 50th and 95th values.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	p50, p95, ok := Percentiles(xs)
	if !ok || p50 != 50 || p95 != 95 {
		t.Errorf("Percentiles(1..100) = %g, %g, %v; want 50, 95", p50, p95, ok)
	}
	if xs[0] != 100 {
		t.Error("Percentiles modified its input")
	}
}
