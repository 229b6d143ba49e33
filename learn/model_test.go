package learn

import (
	"math"
	"math/rand/v2"
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

var testCfg = Config{PriorBias: -4, PriorScore: 4, Rate: 0.2, L2: 0.002, MaxWeight: 8, N0: 50}

// With no events the model is the prior: p = σ(−4 + 4·score), λ = 0.
func TestPrior(t *testing.T) {
	m := New(testCfg)
	x := Features(&models.Components{Score: 0.5, BM25: 0.9, Used: 3, Speaker: 1})
	near(t, "p", m.P(&x), 0.11920292202211755, 1e-15) // σ(−2)
	if l := m.Lambda(testCfg); l != 0 {
		t.Errorf("lambda = %v, want 0", l)
	}
	if r := Rank(0, 0.37, 0.9); r != 0.37 {
		t.Errorf("Rank with λ=0 = %v, want the score", r)
	}
	m.N = 50
	near(t, "lambda at N0", m.Lambda(testCfg), 0.5, 0)
}

// Two AdaGrad steps on x = (bias 1, score 0.5), y = 1, against values computed by hand
// (a few lines of Python, outside this code): the first step moves each weight by Rate.
func TestUpdateStep(t *testing.T) {
	m := New(testCfg)
	x := Features(&models.Components{Score: 0.5, Confidence: 0.5}) // confidence − 0.5 = 0
	m.Update(testCfg, &x, 1)
	near(t, "w_bias after 1", m.W[FBias], -3.8, 1e-15)
	near(t, "w_score after 1", m.W[FScore], 4.2, 1e-15)
	near(t, "G_bias after 1", m.G[FBias], 0.7758034925743759, 1e-15)
	m.Update(testCfg, &x, 1)
	near(t, "w_bias after 2", m.W[FBias], -3.6615303415782514, 1e-15)
	near(t, "w_score after 2", m.W[FScore], 4.338435524550922, 1e-15)
	near(t, "G_score after 2", m.G[FScore], 0.37234506623719166, 1e-15)
	for i := FRelevance; i < D; i++ {
		if m.W[i] != 0 {
			t.Errorf("w[%s] = %v: a feature at 0 must not move", FeatureNames[i], m.W[i])
		}
	}
	if m.N != 2 {
		t.Errorf("N = %d, want 2", m.N)
	}
}

// simulate draws surfacings where BM25 predicts use (logit −3 + 5·bm25) and the vector
// cosine is noise, with the score uninformative beyond the BM25 it contains.
func simulate(rng *rand.Rand) (Vector, float64) {
	bm, vec := rng.Float64(), rng.Float64()
	c := models.Components{Score: 0.5*bm + 0.5*rng.Float64(), BM25: bm, Vector: vec, Confidence: 0.5}
	y := 0.0
	if rng.Float64() < sigmoid(-3+5*bm) {
		y = 1
	}
	return Features(&c), y
}

// Within 2,000 events the weight of the predictive feature rises past 1 while the noise
// feature's stays within 0.3 of 0, and p_use is calibrated on fresh draws (ECE ≤ 0.05).
func TestSimulatedNamespaceSeparates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(testCfg)
	for range 2000 {
		x, y := simulate(rng)
		m.Update(testCfg, &x, y)
	}
	if m.W[FBM25] < 1 || math.Abs(m.W[FVector]) > 0.3 {
		t.Errorf("w_bm25 = %.3f (want > 1), w_vector = %.3f (want |w| ≤ 0.3)", m.W[FBM25], m.W[FVector])
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
	x := Features(&models.Components{Score: math.NaN(), BM25: 7, Used: 1e9, Confidence: math.Inf(1)})
	want := Vector{FBias: 1, FBM25: 1, FUsed: capCount, FConfidence: 0.5}
	if x != want {
		t.Errorf("features = %v, want %v", x, want)
	}
	near(t, "log1p(1 use)", Features(&models.Components{Used: 1})[FUsed], math.Ln2, 1e-15)
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

// The default prior lifts the turn's clear best direct match: score 0.72 with a lead of
// 0.04 is σ(−4 + 4·0.72 + 1 + 4·0.04) ≈ 0.51, a runner-up at 0.66 keeps σ(−4 + 4·0.66) ≈ 0.20.
func TestPriorTurnRelative(t *testing.T) {
	cfg := DefaultConfig()
	m := New(cfg)
	top := Features(&models.Components{Score: 0.72, Top: 1, Margin: 0.04, Confidence: 0.5})
	next := Features(&models.Components{Score: 0.66, Confidence: 0.5})
	near(t, "p top", m.P(&top), 0.5099986668799654, 1e-12)
	near(t, "p runner-up", m.P(&next), 0.2042403022840918, 1e-12)
	if c := m.Contributions(&top); c[FTop] != 1 || math.Abs(c[FMargin]-0.16) > 1e-15 {
		t.Errorf("contributions top %v margin %v, want 1 and 0.16", c[FTop], c[FMargin])
	}
}

// G0 starts AdaGrad's sums: the first step is Rate·g/√(G0 + g²), not a full Rate (values
// computed by hand, outside this code).
func TestUpdateStepG0(t *testing.T) {
	cfg := testCfg
	cfg.G0 = 3
	m := New(cfg)
	x := Features(&models.Components{Score: 0.5, Confidence: 0.5})
	m.Update(cfg, &x, 1)
	near(t, "w_bias", m.W[FBias], -3.9093430364146893, 1e-15)
	near(t, "w_score", m.W[FScore], 4.049284658233438, 1e-15)
}

// A model stored before the turn-relative features existed (13 weights) reads with the
// prior's weights for them, not 0; more weights than this version has is an error.
func TestDecodeOlderModel(t *testing.T) {
	cfg := DefaultConfig()
	old := `{"w":[-3,4,0.5,0,0,0,0,0,0,0,0,0,0],"g":[1,1,0,0,0,0,0,0,0,0,0,0,0],"n":7,"seq":9}`
	m, err := Decode(old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.W[FBias] != -3 || m.W[FRelevance] != 0.5 || m.W[FTop] != cfg.PriorTop || m.W[FMargin] != cfg.PriorMargin ||
		m.G[FTop] != 0 || m.N != 7 || m.Seq != 9 {
		t.Errorf("decoded %+v", m)
	}
	if _, err := Decode(`{"w":[`+strings.Repeat("0,", D)+`0]}`, cfg); err == nil {
		t.Error("a model with more weights than features decoded")
	}
}
