package learn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.17g, want %.17g", name, got, want)
	}
}

// testCfg's prior curve is −4 + 4·match (knots −4, −3, −2, −1, 0) with no prior weight of
// rank in turn (BM25 over the turn's best, margin); G0 0, so a weight's first step is
// exactly Rate.
var testCfg = Config{PriorBias: -4, PriorSlope: 4, Rate: 0.2, L2: 0.002, MaxWeight: 8, N0: 50, Lift: 0.1}

// With no events the model is the prior: p = σ(−4 + 4·match), λ = 0; the other features
// have prior weight 0.
func TestPrior(t *testing.T) {
	m := New(testCfg)
	x := Features(&models.Components{Match: 0.5, Coverage: 0.9, Used: 3, Speaker: 1})
	near(t, "p", m.P(&x), 0.11920292202211755, 1e-15) // σ(−2)
	if l := m.Lambda(testCfg); l != 0 {
		t.Errorf("lambda = %v, want 0", l)
	}
	m.N = 50
	near(t, "lambda at N0", m.Lambda(testCfg), 0.5, 0)
	if m.Version != Version {
		t.Errorf("version %d, want %d", m.Version, Version)
	}
}

// Features against values computed by hand: the match sits between two knots of one curve
// with hat weights; the curve and rank in turn (BM25 over the turn's best, the margin) are
// the said ones or, for a question, the asked ones. Rank in turn and the shared match
// measures (coverage, vector, phrase, activation, speaker) are not scaled; the memory's
// history (confidence, used, importance) is scaled by the match.
func TestFeatures(t *testing.T) {
	c := models.Components{Match: 0.6, Coverage: 0.5, Vector: 0.8, Phrase: 0.25, Activation: 0.1, Speaker: 1,
		Top: 1, Margin: 0.2, Confidence: 0.9, Used: 3, Importance: 0.5, Score: 0.7, BM25: 0.7, Relevance: 0.9}
	// Match 0.6 is 2.4 knots: 0.6 of knot 2 (match 0.5), 0.4 of knot 3 (0.75).
	want := Vector{FSaid + 2: 0.6, FSaid + 3: 0.4,
		FCoverage: 0.5, FVector: 0.8, FPhrase: 0.25, FActivation: 0.1, FSpeaker: 1, FBestSaid: 0.7,
		FMarginSaid: 0.2, FConfidence: 0.24, FUsed: 0.6 * math.Log(4), FImportance: 0.3}
	check := func(name string, got, want Vector) {
		t.Helper()
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("%s: %s = %v, want %v", name, FeatureNames[i], got[i], want[i])
			}
		}
	}
	check("said", Features(&c), want)

	c.Question = 1
	asked := want
	asked[FSaid+2], asked[FSaid+3], asked[FBestSaid], asked[FMarginSaid] = 0, 0, 0, 0
	asked[FAsked+2], asked[FAsked+3], asked[FBestAsked], asked[FMarginAsked] = 0.6, 0.4, 0.7, 0.2
	check("asked", Features(&c), asked)

	// At a knot the whole weight is that knot's; the ends are knots 0 and 4.
	for _, k := range []struct {
		match float64
		knot  int
	}{{0, 0}, {0.25, 1}, {0.5, 2}, {0.75, 3}, {1, 4}} {
		x := Features(&models.Components{Match: k.match, Confidence: 0.5})
		var w Vector
		w[FSaid+k.knot] = 1
		check(fmt.Sprintf("match %v", k.match), x, w)
	}

	// Presentation is no feature: the weighted score, the fused relevance (which holds
	// association), freshness, novelty, the top flag and the kind of memory do not change
	// the vector.
	d := c
	d.Score, d.Relevance, d.Freshness, d.Novelty, d.Top, d.Turn = 0.1, 0.3, 0.2, 0.4, 0, 1
	if Features(&d) != Features(&c) {
		t.Error("the features depend on the weighted score, relevance, freshness, novelty, top or turn")
	}
}

// Two AdaGrad steps on a match of 0.625 (half of knot 2, half of knot 3) and coverage 0.8,
// y = 1, against values computed by hand (a few lines of Python, outside this code): with
// G0 0 the first step moves each touched weight by exactly Rate; nothing else moves.
func TestUpdateStep(t *testing.T) {
	m := New(testCfg)
	x := Features(&models.Components{Match: 0.625, Coverage: 0.8, Confidence: 0.5}) // confidence − 0.5 = 0
	near(t, "x knot 2", x[FSaid+2], 0.5, 0)
	near(t, "x coverage", x[FCoverage], 0.8, 0)
	m.Update(testCfg, &x, 1)
	near(t, "w knot 2 after 1", m.W[FSaid+2], -1.8, 1e-15)
	near(t, "w knot 3 after 1", m.W[FSaid+3], -0.8, 1e-15)
	near(t, "w coverage after 1", m.W[FCoverage], 0.2, 1e-15)
	near(t, "G knot 2 after 1", m.G[FSaid+2], 0.1671070060308277, 1e-15)
	near(t, "G coverage after 1", m.G[FCoverage], 0.427793935438919, 1e-15)
	m.Update(testCfg, &x, 1)
	near(t, "w knot 2 after 2", m.W[FSaid+2], -1.6641313225892547, 1e-15)
	near(t, "w knot 3 after 2", m.W[FSaid+3], -0.6641313225892546, 1e-15)
	near(t, "w coverage after 2", m.W[FCoverage], 0.3358976691539201, 1e-15)
	near(t, "G coverage after 2", m.G[FCoverage], 0.7947193791008589, 1e-15)
	prior := testCfg.prior()
	for i := range D {
		if i == FSaid+2 || i == FSaid+3 || i == FCoverage {
			continue
		}
		if m.W[i] != prior[i] || m.G[i] != 0 {
			t.Errorf("w[%s] = %v (G %v), prior %v: a feature at 0 must not move", FeatureNames[i], m.W[i], m.G[i], prior[i])
		}
	}
	if m.N != 2 {
		t.Errorf("N = %d, want 2", m.N)
	}
}

// G0 starts AdaGrad's sums: the first step is Rate·g/√(G0 + g²), not a full Rate (values
// computed by hand, outside this code).
func TestUpdateStepG0(t *testing.T) {
	cfg := testCfg
	cfg.G0 = 3
	m := New(cfg)
	x := Features(&models.Components{Match: 0.625, Coverage: 0.8, Confidence: 0.5})
	m.Update(cfg, &x, 1)
	near(t, "w knot 2", m.W[FSaid+2], -1.9540594747493227, 1e-15)
	near(t, "w knot 3", m.W[FSaid+3], -0.9540594747493227, 1e-15)
	near(t, "w coverage", m.W[FCoverage], 0.07065452066702554, 1e-15)
}

// monotone is pool-adjacent-violators: each decreasing run takes its mean, against outputs
// worked by hand.
func TestMonotone(t *testing.T) {
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{1, 3, 2, 4, 0}, []float64{1, 2.25, 2.25, 2.25, 2.25}}, // 3,2 pool to 2.5; 4,0 to 2; then 2.5,2.5,2,2 to 2.25
		{[]float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 4, 5}},
		{[]float64{5, 4, 3, 2, 1}, []float64{3, 3, 3, 3, 3}},
		{[]float64{2, 1, 3}, []float64{1.5, 1.5, 3}},
		{[]float64{0, 4, 1, 1, 5}, []float64{0, 2, 2, 2, 5}},
		{[]float64{-1, -1}, []float64{-1, -1}},
		{[]float64{7}, []float64{7}},
		{nil, nil},
	} {
		got := append([]float64(nil), c.in...)
		monotone(got)
		for i := range c.want {
			if math.Abs(got[i]-c.want[i]) > 1e-15 {
				t.Errorf("monotone(%v) = %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
	// Any input: non-decreasing, the same sum, and a fixed point.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		w := make([]float64, knots)
		sum := 0.0
		for i := range w {
			w[i] = rng.NormFloat64() * 3
			sum += w[i]
		}
		monotone(w)
		got := 0.0
		for i, v := range w {
			got += v
			if i > 0 && v < w[i-1] {
				t.Fatalf("monotone left %v decreasing", w)
			}
		}
		near(t, "sum", got, sum, 1e-9)
		again := append([]float64(nil), w...)
		monotone(again)
		if !slices.Equal(again, w) {
			t.Fatalf("monotone moved its own output %v to %v", w, again)
		}
	}
}

// Used at weak matches and ignored at strong ones, the data say the curve decreases; the
// model keeps it non-decreasing (flat at most), on both curves. From a rising prior the
// data pull the ends together; from the default's flat prior (PriorSlope 0) the curve
// stays flat, every knot pooled to one value.
func TestCurvesStayNonDecreasing(t *testing.T) {
	rising := DefaultConfig()
	rising.PriorSlope = 4
	for _, cfg := range []Config{rising, DefaultConfig()} {
		m := New(cfg)
		for i := range 1000 {
			q := float64(i % 2)
			weak := Features(&models.Components{Match: 0.05, Question: q, Confidence: 0.5})
			strong := Features(&models.Components{Match: 0.95, Question: q, Confidence: 0.5})
			m.Update(cfg, &weak, 1)
			m.Update(cfg, &strong, 0)
		}
		for _, curve := range []int{FSaid, FAsked} {
			for k := 1; k < knots; k++ {
				if m.W[curve+k] < m.W[curve+k-1] {
					t.Errorf("slope %v: %s = %v < %s = %v", cfg.PriorSlope, FeatureNames[curve+k], m.W[curve+k], FeatureNames[curve+k-1], m.W[curve+k-1])
				}
			}
			span := m.W[curve+knots-1] - m.W[curve]
			if cfg.PriorSlope > 0 && span >= cfg.PriorSlope/2 {
				t.Errorf("%s span %v, want under half the prior's %v", FeatureNames[curve], span, cfg.PriorSlope)
			}
			if cfg.PriorSlope == 0 && span > 1e-12 {
				t.Errorf("%s from a flat prior: %v, want flat", FeatureNames[curve], m.W[curve:curve+knots])
			}
			if m.W[curve] == cfg.PriorBias {
				t.Errorf("slope %v: %s did not learn: %v", cfg.PriorSlope, FeatureNames[curve], m.W[curve:curve+knots])
			}
		}
	}
}

// Match measures and rank in turn keep non-negative weights however many ignores say
// otherwise; confidence and importance, which a stronger value may well lower, do not.
func TestMatchWeightsStayNonNegative(t *testing.T) {
	cfg := DefaultConfig()
	m := New(cfg)
	x := Features(&models.Components{Match: 1, Coverage: 1, Vector: 1, Phrase: 1, Activation: 1, Speaker: 1,
		BM25: 1, Margin: 1, Used: 100, Confidence: 1, Importance: 1})
	xq := Features(&models.Components{Match: 1, BM25: 1, Margin: 1, Confidence: 0.5, Question: 1})
	for range 3000 {
		m.Update(cfg, &x, 0)
		m.Update(cfg, &xq, 0)
		// Coverage starts at its prior, PriorCoverage 1.5: ignores only lower it.
		if m.W[FCoverage] > cfg.PriorCoverage {
			t.Fatalf("w[coverage] = %v rose above its prior %v on ignores", m.W[FCoverage], cfg.PriorCoverage)
		}
	}
	held := []int{FCoverage, FVector, FPhrase, FActivation, FSpeaker, FBestSaid, FBestAsked, FMarginSaid, FMarginAsked, FUsed}
	for _, i := range held {
		if m.W[i] < 0 {
			t.Errorf("w[%s] = %v < 0", FeatureNames[i], m.W[i])
		}
	}
	for _, i := range []int{FVector, FSpeaker, FUsed} { // prior 0, pushed down all along
		if m.W[i] != 0 {
			t.Errorf("w[%s] = %v, want held at 0", FeatureNames[i], m.W[i])
		}
	}
	// Coverage, from 1.5, reaches 0 within 40 pairs of ignores and is held there (within 0.01:
	// L2's pull towards the prior lifts it a little after each clamp; 0.000247 here).
	if m.W[FCoverage] < 0 || m.W[FCoverage] > 0.01 {
		t.Errorf("w[coverage] = %v, want pushed down from %v to 0 (within 0.01)", m.W[FCoverage], cfg.PriorCoverage)
	}
	for _, c := range []struct {
		i     int
		prior float64
	}{{FBestSaid, cfg.PriorBest}, {FBestAsked, cfg.PriorBest}, {FMarginSaid, cfg.PriorMargin}, {FMarginAsked, cfg.PriorMargin}} {
		if m.W[c.i] >= c.prior {
			t.Errorf("w[%s] = %v: the ignores did not lower it from %v", FeatureNames[c.i], m.W[c.i], c.prior)
		}
	}
	if m.W[FConfidence] >= 0 || m.W[FImportance] >= 0 {
		t.Errorf("confidence %v, importance %v: want negative, they are not held", m.W[FConfidence], m.W[FImportance])
	}

	// Rank in turn that anti-predicts — the turn's best text match ignored, a weak one used,
	// at the same match — drives its weights down to 0 and holds them there, in both kinds
	// (within 0.01: L2's pull towards the prior lifts them a little after each clamp).
	m = New(cfg)
	for i := range 4000 {
		q := float64(i % 2)
		best := Features(&models.Components{Match: 0.5, BM25: 1, Margin: 1, Confidence: 0.5, Question: q})
		weak := Features(&models.Components{Match: 0.5, Confidence: 0.5, Question: q})
		m.Update(cfg, &best, 0)
		m.Update(cfg, &weak, 1)
	}
	for _, i := range []int{FBestSaid, FBestAsked, FMarginSaid, FMarginAsked} {
		if m.W[i] < 0 || m.W[i] > 0.01 {
			t.Errorf("anti-predictive w[%s] = %v, want held at 0 (within 0.01)", FeatureNames[i], m.W[i])
		}
	}
}

// A bot that honestly ignores what small talk brought up (weak matches, turns that ask
// nothing, not the turn's best) lowers p_use at weak matches and leaves strong matches — a
// question's or a statement's — where they were: the ignores touch only the said curve's
// knots 0 and 1, and the curve's other knots, the asked curve and every other weight stay
// put. Under the default prior p at match 0.2 is σ(0.2·−5.5 + 0.8·−5.25) = σ(−5.3) ≈ 0.005,
// so the drop is read in the logit.
func TestWeakIgnoresLeaveStrongMatches(t *testing.T) {
	cfg := DefaultConfig()
	m, prior := New(cfg), New(cfg)
	weak := Features(&models.Components{Match: 0.2, Confidence: 0.5})
	strongAsked := Features(&models.Components{Match: 0.9, Coverage: 0.9, BM25: 1, Margin: 0.2, Confidence: 0.5, Question: 1})
	strongSaid := Features(&models.Components{Match: 0.9, Coverage: 0.9, BM25: 1, Margin: 0.2, Confidence: 0.5})
	for range 200 {
		m.Update(cfg, &weak, 0)
	}
	if before, after := prior.Logit(&weak), m.Logit(&weak); !(after < before) {
		t.Errorf("logit at the ignored weak match %.6f → %.6f, want lower", before, after)
	}
	// Knot 1 carries 0.8 of each event, knot 0 0.2: both sink below their priors −5.5 and
	// −5.25, and stay in order (200 ignores at p ≈ 0.005 close less than the prior's gap of
	// 0.25, so nothing is pooled). Known values: the same 200 AdaGrad steps replayed by hand.
	near(t, "said knot 0", m.W[FSaid], -5.518857115165972, 1e-9)
	near(t, "said knot 1", m.W[FSaid+1], -5.325426429957053, 1e-9)
	if !(m.W[FSaid] < prior.W[FSaid]) || !(m.W[FSaid+1] < prior.W[FSaid+1]) || !(m.W[FSaid] < m.W[FSaid+1]) {
		t.Errorf("said knots 0 and 1 = %v, %v; want each below its prior (%v, %v) and still in order",
			m.W[FSaid], m.W[FSaid+1], prior.W[FSaid], prior.W[FSaid+1])
	}
	for name, x := range map[string]*Vector{"question": &strongAsked, "statement": &strongSaid} {
		if before, after := prior.P(x), m.P(x); after != before {
			t.Errorf("p at a strong match in a %s %.6f → %.6f, want unchanged", name, before, after)
		}
	}
	for i := range D {
		if i != FSaid && i != FSaid+1 && m.W[i] != prior.W[i] {
			t.Errorf("w[%s] moved %v → %v", FeatureNames[i], prior.W[i], m.W[i])
		}
	}
}

// Small talk's matches are often their turn's best by text (BM25 1): ignored, they teach
// the said kind's rank-in-turn weights and curve, and nothing a question reads — the two
// kinds of turn learn apart. Without coverage a question's strong best match keeps its p_use
// (within 1e-9). The shared match measures are the one way across: coverage starts at its
// prior 1.5, so small talk with some coverage lowers it, and a question reads the lower
// weight (vector starts at 0 and is held there).
func TestSmallTalkIgnoresSpareQuestions(t *testing.T) {
	cfg := DefaultConfig()
	m, prior := New(cfg), New(cfg)
	// Confidence 0.5 is a memory nobody reported on: its confidence feature is 0.
	said := Features(&models.Components{Match: 0.2, BM25: 1, Margin: 0.1, Confidence: 0.5})
	question := Features(&models.Components{Match: 0.9, BM25: 1, Margin: 0.3, Confidence: 0.5, Question: 1})
	for range 300 {
		m.Update(cfg, &said, 0)
	}
	near(t, "p of the question's best match", m.P(&question), prior.P(&question), 1e-9)
	if m.W[FBestSaid] >= cfg.PriorBest || m.W[FMarginSaid] >= cfg.PriorMargin {
		t.Errorf("said bm25 %v, said margin %v: want below their priors %v and %v", m.W[FBestSaid], m.W[FMarginSaid], cfg.PriorBest, cfg.PriorMargin)
	}
	if before, after := prior.P(&said), m.P(&said); after >= before-0.05 {
		t.Errorf("p of the ignored small talk %.4f → %.4f, want a drop of at least 0.05", before, after)
	}
	for i := FAsked; i < FAsked+knots; i++ {
		if m.W[i] != prior.W[i] {
			t.Errorf("w[%s] moved %v → %v on said turns' events", FeatureNames[i], prior.W[i], m.W[i])
		}
	}
	for _, i := range []int{FBestAsked, FMarginAsked, FCoverage, FVector, FPhrase, FActivation, FSpeaker, FConfidence, FUsed, FImportance} {
		if m.W[i] != prior.W[i] {
			t.Errorf("w[%s] moved %v → %v on said turns' events", FeatureNames[i], prior.W[i], m.W[i])
		}
	}

	m = New(cfg)
	said = Features(&models.Components{Match: 0.2, Coverage: 0.2, Vector: 0.3, BM25: 1, Margin: 0.1, Confidence: 0.5})
	question = Features(&models.Components{Match: 0.9, Coverage: 0.9, Vector: 0.8, BM25: 1, Margin: 0.3, Confidence: 0.5, Question: 1})
	for range 300 {
		before := m.W[FCoverage]
		m.Update(cfg, &said, 0)
		if m.W[FCoverage] > before {
			t.Fatalf("coverage rose %v → %v on an ignore", before, m.W[FCoverage])
		}
	}
	// Coverage is shared: each ignore lowers it by its share of the gradient (the said turn's
	// coverage 0.2), and a question reads it at its own 0.9. 300 ignores take it 1.5 → 1.206,
	// so the question's logit falls by 0.9·0.294 = 0.265 and its p from σ(1.25) = 0.7773 to
	// 0.7282 — under 0.05, while the small talk's own p falls from σ(−1.5) = 0.182 to 0.021
	// (known values: the same 300 AdaGrad steps replayed by hand). Nothing else a question
	// reads moves.
	near(t, "coverage after small talk's ignores", m.W[FCoverage], 1.2062294563909126, 1e-9)
	near(t, "p of the question's best match, with coverage and cosine", m.P(&question), 0.7282192530455456, 1e-9)
	if drop := prior.P(&question) - m.P(&question); drop < 0 || drop >= 0.05 {
		t.Errorf("p of the question's best match fell by %v, want under 0.05", drop)
	}
	near(t, "the question's logit moved by coverage alone", m.Logit(&question)-prior.Logit(&question),
		question[FCoverage]*(m.W[FCoverage]-cfg.PriorCoverage), 1e-12)
	if m.W[FVector] != 0 {
		t.Errorf("vector %v after ignores only: want held at 0", m.W[FVector])
	}
}

// p_use does not depend on presentation: the same match gives the same p whatever weighted
// score a character's weights made of it.
func TestNoScoreFeature(t *testing.T) {
	m := New(DefaultConfig())
	a := Features(&models.Components{Match: 0.7, Score: 0.1})
	b := Features(&models.Components{Match: 0.7, Score: 0.9})
	if m.P(&a) != m.P(&b) {
		t.Errorf("p %v at score 0.1, %v at 0.9: want equal", m.P(&a), m.P(&b))
	}
}

// simulate draws surfacings where, beyond the prior's curve of the match, coverage predicts
// use (logit −4 + 4·match + 4·coverage) and the vector cosine is noise.
func simulate(rng *rand.Rand) (Vector, float64) {
	a, cov, vec := rng.Float64(), rng.Float64(), rng.Float64()
	c := models.Components{Match: a, Coverage: cov, Vector: vec, Confidence: 0.5}
	y := 0.0
	if rng.Float64() < sigmoid(-4+4*a+4*cov) {
		y = 1
	}
	return Features(&c), y
}

// Within 2,000 events the weight of the predictive feature rises past 1 and the noise
// feature's stays under half of it, and by 20,000 it is within 0.3 of 0; p_use is
// calibrated on fresh draws (ECE ≤ 0.05).
func TestSimulatedNamespaceSeparates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(testCfg)
	for range 2000 {
		x, y := simulate(rng)
		m.Update(testCfg, &x, y)
	}
	if m.W[FCoverage] < 1 || m.W[FVector] > m.W[FCoverage]/2 {
		t.Errorf("after 2,000: w_coverage = %.3f (want > 1), w_vector = %.3f (want under half)", m.W[FCoverage], m.W[FVector])
	}
	var c Calibration
	for range 20000 {
		x, y := simulate(rng)
		c.Add(m.P(&x), y)
	}
	if c.ECE() > 0.05 {
		t.Errorf("ECE = %.4f, want ≤ 0.05 (curve %v)", c.ECE(), c.Curve())
	}
	if c.Brier() >= c.ConstantBrier() {
		t.Errorf("Brier %.4f not below the constant predictor's %.4f", c.Brier(), c.ConstantBrier())
	}
	for range 18000 {
		x, y := simulate(rng)
		m.Update(testCfg, &x, y)
	}
	if m.W[FCoverage] < 2 || m.W[FVector] > 0.3 {
		t.Errorf("after 20,000: w_coverage = %.3f (want > 2), w_vector = %.3f (want ≤ 0.3)", m.W[FCoverage], m.W[FVector])
	}
}

// A feature that never predicts anything drifts back to its prior under L2.
func TestL2PullsTowardsPrior(t *testing.T) {
	m := New(testCfg)
	m.W[FVector] = 2
	x := Features(&models.Components{})
	for range 5000 {
		m.Update(testCfg, &x, 0)
	}
	if m.W[FVector] >= 2 || m.W[FVector] < 0 {
		t.Errorf("w_vector = %v, want pulled from 2 towards 0", m.W[FVector])
	}
}

func TestFeaturesBounded(t *testing.T) {
	x := Features(&models.Components{Match: 7, Coverage: math.NaN(), Used: 1e9, Confidence: math.Inf(1), Question: 1})
	want := Vector{FAsked + knots - 1: 1, FUsed: capCount, FConfidence: 0.5}
	if x != want {
		t.Errorf("features = %v, want %v", x, want)
	}
	if x := Features(&models.Components{Match: math.NaN(), Coverage: 1, Top: 1}); x != (Vector{FSaid: 1, FCoverage: 1}) {
		t.Errorf("features at a NaN match = %v, want knot 0 and the (unscaled) coverage", x)
	}
	// Rank in turn is not scaled by the match, and bounded on its own.
	x = Features(&models.Components{BM25: math.NaN(), Margin: math.Inf(1), Confidence: 0.5, Question: 1})
	if want := (Vector{FAsked: 1, FMarginAsked: 1}); x != want {
		t.Errorf("features at BM25 NaN, margin +Inf = %v, want %v", x, want)
	}
	near(t, "log1p(1 use)", Features(&models.Components{Match: 1, Used: 1})[FUsed], math.Ln2, 1e-15)
}

func TestStateRoundTrip(t *testing.T) {
	m := New(testCfg)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		x, y := simulate(rng)
		m.Update(testCfg, &x, y)
	}
	got, err := Decode(Encode(m), testCfg)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *m {
		t.Errorf("decoded model differs:\n%+v\n%+v", got, m)
	}
	prior, err := Decode("", testCfg)
	if err != nil || *prior != *New(testCfg) {
		t.Errorf("empty state = %+v, %v; want the prior", prior, err)
	}
}

func TestExpand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := Expand(nil, []string{"paint", "sunset", "paint"}, t0)
	want := []models.LearnedTerm{{Term: "paint", Weight: 1, At: t0}, {Term: "sunset", Weight: 1, At: t0}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Expand = %v, want %v", got, want)
	}
	// One half-life later "paint" is used again: 0.5 + 1; "sunset" has decayed to 0.5.
	t1 := t0.Add(TermHalfLife)
	got = Expand(got, []string{"paint"}, t1)
	near(t, "paint", got[0].Weight, 1.5, 1e-12)
	near(t, "sunset", got[1].Weight, 0.5, 1e-12)
	// Saturation.
	for range 10 {
		got = Expand(got, []string{"paint"}, t1)
	}
	near(t, "paint saturated", got[0].Weight, MaxTermWeight, 0)
	// Bounded: the heaviest MaxLearnedTerms stay.
	var many []string
	for i := range 2 * MaxLearnedTerms {
		many = append(many, string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	got = Expand(Expand(got, many[:MaxQueryTerms], t1), many[MaxQueryTerms:], t1)
	if len(got) != MaxLearnedTerms {
		t.Errorf("%d terms kept, want %d", len(got), MaxLearnedTerms)
	}
	if got[len(got)-1].Term != "paint" && got[0].Term != "paint" {
		found := false
		for _, lt := range got {
			found = found || lt.Term == "paint"
		}
		if !found {
			t.Errorf("the heaviest term was dropped: %v", got)
		}
	}
	// Decay drops a word under minTermWeight: 1 → 1/32 after five half-lives.
	got = Expand([]models.LearnedTerm{{Term: "old", Weight: 1, At: t0}}, nil, t0.Add(5*TermHalfLife))
	if len(got) != 0 {
		t.Errorf("a faded word is kept: %v", got)
	}
}

func TestCalibration(t *testing.T) {
	var c Calibration
	c.Add(0.1, 0)
	c.Add(0.1, 1)
	c.Add(0.75, 1)
	c.Add(0.75, 1)
	// Brier: (0.01 + 0.81 + 0.0625 + 0.0625)/4; ECE: bin 1 |Σp − Σy|/N = |0.2 − 1|/4, plus
	// bin 7 |1.5 − 2|/4.
	near(t, "Brier", c.Brier(), 0.23625, 1e-12)
	near(t, "ECE", c.ECE(), 0.2+0.125, 1e-12)
	near(t, "constant", c.ConstantBrier(), 0.1875, 1e-12)
	pts := c.Curve()
	if len(pts) != 2 || pts[0] != (Point{Count: 2, Predicted: 0.1, Observed: 0.5}) || pts[1] != (Point{Count: 2, Predicted: 0.75, Observed: 1}) {
		t.Errorf("curve = %v", pts)
	}
}

// The default prior lifts the turn's clear best text match, and a stronger match a little:
// the curve rises from −5.5 at match 0 to −4.5 at match 1, so a question's best match (BM25
// 1) with a lead of 0.125 is σ(−5 + 3 + 5·0.125) = σ(−1.375) ≈ 0.202 at match 0.5 and
// σ(−4.6 + 3.625) = σ(−0.975) ≈ 0.274 at 0.9; a runner-up at match 0.375 and BM25 0.6 keeps
// σ(−5.125 + 3·0.6) = σ(−3.325) ≈ 0.035; a lone best match leads by its whole match (markTop),
// so at match 0.95 in small talk it is σ(−4.55 + 3 + 5·0.95) = σ(3.2) ≈ 0.961 (values
// computed by hand).
func TestPriorTurnRelative(t *testing.T) {
	cfg := DefaultConfig()
	m := New(cfg)
	top := Features(&models.Components{Match: 0.5, BM25: 1, Margin: 0.125, Confidence: 0.5, Question: 1})
	strong := Features(&models.Components{Match: 0.9, BM25: 1, Margin: 0.125, Confidence: 0.5, Question: 1})
	next := Features(&models.Components{Match: 0.375, BM25: 0.6, Confidence: 0.5, Question: 1})
	lone := Features(&models.Components{Match: 0.95, BM25: 1, Margin: 0.95, Confidence: 0.5})
	near(t, "p top", m.P(&top), 0.20181322226037882, 1e-12)
	near(t, "p top at match 0.9", m.P(&strong), 0.27388501873922094, 1e-12)
	near(t, "p runner-up", m.P(&next), 0.03472342953335755, 1e-12)
	near(t, "p lone", m.P(&lone), 0.9608342772032357, 1e-12)
	c := m.Contributions(&top)
	near(t, "asked bm25 contribution", c[FBestAsked], 3, 0)
	near(t, "asked margin contribution", c[FMarginAsked], 0.625, 0)
	if c[FBestSaid] != 0 || c[FMarginSaid] != 0 {
		t.Errorf("said contributions %v, %v in a question, want 0", c[FBestSaid], c[FMarginSaid])
	}
}

// Shift is what moves the ranking: exactly 0 with no events, whatever the candidate, so a
// fresh namespace ranks by its score alone; after training, λ·Lift·Σ(w − w0)·x. One step
// of testCfg (G0 0, Lift 0.1) from a use at match 0.625 and coverage 0.8 moves knots 2 and
// 3 and the coverage weight by exactly Rate 0.2 (TestUpdateStep); λ = 1/51 (values
// computed by hand).
func TestShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, cfg := range []Config{testCfg, DefaultConfig()} {
		m := New(cfg)
		for range 200 {
			var x Vector
			for i := range x {
				x[i] = rng.NormFloat64() * 10
			}
			if s := m.Shift(cfg, &x); s != 0 {
				t.Fatalf("fresh model: Shift(%v) = %v, want 0", x, s)
			}
		}
	}
	cfg := testCfg
	m := New(cfg)
	used := Features(&models.Components{Match: 0.625, Coverage: 0.8, Confidence: 0.5})
	m.Update(cfg, &used, 1)
	for _, c := range []struct {
		name string
		x    Vector
		want float64
	}{
		// 0.2·0.5 (knot 2) + 0.2·0.5 (knot 3) + 0.2·0.8 (coverage): 0.36.
		{"the used memory", used, 0.1 * 0.36 / 51},
		// Match 0.9: 0.4 of knot 3, 0.6 of knot 4 (unmoved); no coverage: 0.2·0.4.
		{"a said match at 0.9", Features(&models.Components{Match: 0.9, Confidence: 0.5}), 0.1 * 0.08 / 51},
		// The same match in a question: the asked curve has not moved, only coverage 0.2·0.8.
		{"a question", Features(&models.Components{Match: 0.625, Coverage: 0.8, Confidence: 0.5, Question: 1}), 0.1 * 0.16 / 51},
		{"a match the event did not reach", Features(&models.Components{Match: 0.1, Confidence: 0.5}), 0},
	} {
		near(t, c.name, m.Shift(cfg, &c.x), c.want, 1e-17)
	}
	// An ignore of the same memory moves it the other way.
	m2 := New(cfg)
	m2.Update(cfg, &used, 0)
	if s := m2.Shift(cfg, &used); !(s < 0) {
		t.Errorf("after an ignore Shift = %v, want negative", s)
	}
	// A model decoded from another version has no events, and no shift.
	old, err := Decode(`{"w":[1,2,3],"n":40,"seq":40,"version":1}`, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := old.Shift(cfg, &used); s != 0 {
		t.Errorf("a reset model's Shift = %v, want 0", s)
	}
}

// A model stored for another feature set — v1 stored no version — decodes as the prior,
// keeping the log position (Seq) but no events (N 0): its weights mean nothing here.
func TestDecodeOtherVersion(t *testing.T) {
	cfg := DefaultConfig()
	want := New(cfg)
	want.Seq = 9
	for _, old := range []string{
		`{"w":[-3,4,0.5,0,0,0,0,0,0,0,0,0,0],"g":[1,1,0,0,0,0,0,0,0,0,0,0,0],"n":7,"seq":9}`,
		`{"w":[-3],"g":[1],"n":7,"seq":9,"version":3}`,
	} {
		m, err := Decode(old, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if *m != *want {
			t.Errorf("decoded %s as %+v, want the prior at seq 9", old, m)
		}
	}
	// This version's model reads as stored; one shorter than D has the prior's weight for
	// the rest, and more weights than features is an error.
	m, err := Decode(`{"w":[-3],"g":[1],"n":7,"seq":9,"version":2}`, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.W[FSaid] != -3 || m.G[FSaid] != 1 || m.W[FBestAsked] != cfg.PriorBest || m.W[FMarginSaid] != cfg.PriorMargin ||
		m.G[FBestAsked] != 0 || m.N != 7 || m.Seq != 9 || m.Version != Version {
		t.Errorf("decoded %+v", m)
	}
	if _, err := Decode(`{"version":2,"w":[`+strings.Repeat("0,", D)+`0]}`, cfg); err == nil {
		t.Error("a model with more weights than features decoded")
	}
	if !strings.Contains(Encode(New(cfg)), `"version":2`) {
		t.Errorf("Encode %s stores no version", Encode(New(cfg)))
	}
}
