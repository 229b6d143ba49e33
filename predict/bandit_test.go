package predict

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/salience-ai/salience/models"
)

// driftBefore and driftAfter are the arm means of the drift simulation: the best arm (0.9)
// becomes the worst at step 3000 of 6000. With these means the simulation reproduces the
// figures of docs/formulas.md#thompson-sampling (stationary regret 449, share 0.12; γ = 0.999: 138, 0.76)
// within sampling noise.
var (
	driftBefore = []float64{0.5, 0.7, 0.9}
	driftAfter  = []float64{0.9, 0.7, 0.5}
)

// simulateDrift runs the 3-arm Bernoulli bandit with Beta(1, 1) priors for 6,000 steps,
// switching the means at step 3,000, and returns the mean cumulative regret over runs and
// the share of optimal picks in the 1,000 steps after the switch.
func simulateDrift(b Bandit, runs int, seed uint64) (regret, share float64) {
	const steps, switchAt, window = 6000, 3000, 1000
	optimal := 0
	for run := range runs {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		arms := make([]ArmState, len(driftBefore))
		for k := range arms {
			arms[k] = ArmState{Alpha: 1, Beta: 1, Alpha0: 1, Beta0: 1}
		}
		for step := range steps {
			mu, best := driftBefore, 2
			if step >= switchAt {
				mu, best = driftAfter, 0
			}
			k := b.Pick(arms, rng)
			regret += mu[best] - mu[k]
			if step >= switchAt && step < switchAt+window && k == best {
				optimal++
			}
			r := 0.0
			if rng.Float64() < mu[k] {
				r = 1
			}
			b.Update(arms, k, r)
		}
	}
	return regret / float64(runs), float64(optimal) / float64(runs*window)
}

// TestDrift reproduces the shape of docs/formulas.md#thompson-sampling with 50 seeded runs (about 0.4 s, 2 s
// under -race): after the best arm changes, the discounted bandit follows it and the
// stationary one does not.
func TestDrift(t *testing.T) {
	const runs = 50
	statRegret, statShare := simulateDrift(Bandit{Gamma: 1}, runs, 1)
	discRegret, discShare := simulateDrift(Bandit{Gamma: 0.999}, runs, 1)
	t.Logf("stationary: regret %.0f, optimal share after the switch %.2f (reference 449, 0.12)", statRegret, statShare)
	t.Logf("γ = 0.999:  regret %.0f, optimal share after the switch %.2f (reference 138, 0.76)", discRegret, discShare)
	if statRegret < 380 || statRegret > 530 || statShare > 0.2 {
		t.Errorf("stationary: regret %.1f, share %.3f; want about 449 and 0.12", statRegret, statShare)
	}
	if discRegret < 110 || discRegret > 170 || discShare < 0.6 {
		t.Errorf("γ = 0.999: regret %.1f, share %.3f; want about 138 and 0.76", discRegret, discShare)
	}
	if !(discRegret < statRegret/2) || !(discShare > 0.5) {
		t.Errorf("discounting should at least halve regret and pick the new best arm most of the time: %.1f vs %.1f, share %.3f",
			discRegret, statRegret, discShare)
	}
}

// exactChoiceProbs is P(arm k has the largest draw) = ∫ f_k(x)·Π_{j≠k} F_j(x) dx, by
// Gauss–Legendre quadrature on gonum's Beta density and distribution function.
func exactChoiceProbs(arms []ArmState) []float64 {
	ds := make([]distuv.Beta, len(arms))
	for k, a := range arms {
		ds[k] = distuv.Beta{Alpha: a.Alpha, Beta: a.Beta}
	}
	out := make([]float64, len(arms))
	for k := range arms {
		out[k] = quad.Fixed(func(x float64) float64 {
			v := ds[k].Prob(x)
			for j := range ds {
				if j != k {
					v *= ds[j].CDF(x)
				}
			}
			return v
		}, 0, 1, 400, nil, 0)
	}
	return out
}

func TestChooseProbability(t *testing.T) {
	b := DefaultBandit()
	arms := []ArmState{{Alpha: 6, Beta: 4}, {Alpha: 12, Beta: 6}, {Alpha: 3, Beta: 3}, {Alpha: 30, Beta: 25}, {Alpha: 2, Beta: 5}}
	exact := exactChoiceProbs(arms)
	sum := 0.0
	for _, p := range exact {
		sum += p
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Fatalf("exact probabilities sum to %v", sum)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 2000
	picks := make([]int, len(arms))
	probSum := make([]float64, len(arms))
	for range n {
		k, p := b.Choose(arms, rng)
		picks[k]++
		probSum[k] += p
	}
	for k := range arms {
		freq := float64(picks[k]) / n
		// The choice frequency follows the exact probability (binomial s.e. ≤ 0.011).
		if math.Abs(freq-exact[k]) > 0.04 {
			t.Errorf("arm %d chosen %.3f of the time, exact probability %.3f", k, freq, exact[k])
		}
		// The logged estimate, averaged over the decisions that chose the arm, is unbiased
		// up to the (wins+1)/(draws+1) correction.
		if picks[k] > 50 {
			if mean := probSum[k] / float64(picks[k]); math.Abs(mean-exact[k]) > 0.03 {
				t.Errorf("arm %d: mean logged probability %.3f, exact %.3f", k, mean, exact[k])
			}
		}
	}
	// The estimate is (wins + 1)/(Draws + 1): never 0, at most 1.
	one := []ArmState{{Alpha: 1, Beta: 1}}
	if k, p := (Bandit{Draws: 9}).Choose(one, rng); k != 0 || p != 1 {
		t.Errorf("single arm: Choose = %d, %v; want 0, 1", k, p)
	}
	if k, p := b.Choose(nil, rng); k != -1 || p != 0 {
		t.Errorf("no arms: Choose = %d, %v; want -1, 0", k, p)
	}
	// Same seed, same decisions.
	r1, r2 := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for range 20 {
		k1, p1 := b.Choose(arms, r1)
		k2, p2 := b.Choose(arms, r2)
		if k1 != k2 || p1 != p2 {
			t.Fatalf("seeded Choose not reproducible: %d %v vs %d %v", k1, p1, k2, p2)
		}
	}
}

func TestNewArms(t *testing.T) {
	b := DefaultBandit()
	for _, c := range []struct {
		convType string
		means    []float64
	}{
		{"debugging", []float64{0.55, 0.6, 0.55, 0.5, 0.45}},
		{"help-seeking", []float64{0.6, 0.55, 0.5, 0.45, 0.4}},
		{"exploration", []float64{0.45, 0.5, 0.55, 0.6, 0.55}},
		{"casual", []float64{0.4, 0.45, 0.5, 0.55, 0.6}},
		{"other", []float64{0.5, 0.55, 0.6, 0.55, 0.5}},
		{"poetry", []float64{0.5, 0.55, 0.6, 0.55, 0.5}}, // unknown → other
	} {
		arms := b.NewArms(c.convType)
		if len(arms) != len(Arms) {
			t.Fatalf("%s: %d arms, want %d", c.convType, len(arms), len(Arms))
		}
		for k, a := range arms {
			if math.Abs(a.Mean()-c.means[k]) > 1e-12 || math.Abs(a.Alpha+a.Beta-10) > 1e-12 ||
				a.Alpha != a.Alpha0 || a.Beta != a.Beta0 {
				t.Errorf("%s arm %v: %+v, want mean %v, strength 10, at its prior", c.convType, Arms[k], a, c.means[k])
			}
		}
		// Before any evidence the default arm is the most likely choice.
		exact := exactChoiceProbs(arms)
		def := slices.Index(Arms, DefaultPUseThreshold(c.convType))
		for k, p := range exact {
			if k != def && p >= exact[def] {
				t.Errorf("%s: arm %v (p %.3f) not below the default arm %v (p %.3f)", c.convType, Arms[k], p, Arms[def], exact[def])
			}
		}
	}
}

func TestUpdate(t *testing.T) {
	b := Bandit{Gamma: 0.5}
	arms := []ArmState{
		{Alpha: 10, Beta: 4, Alpha0: 6, Beta0: 4},
		{Alpha: 2, Beta: 8, Alpha0: 2, Beta0: 2},
		{Alpha: 5, Beta: 5}, // no prior recorded: towards Beta(1, 1)
	}
	b.Update(arms, 1, 0.8)
	want := []ArmState{
		{Alpha: 8, Beta: 4, Alpha0: 6, Beta0: 4},             // 6 + 0.5·4; 4 + 0.5·0
		{Alpha: 2 + 0.8, Beta: 5 + 0.2, Alpha0: 2, Beta0: 2}, // 2 + 0.5·0 + 0.8; 2 + 0.5·6 + 0.2
		{Alpha: 3, Beta: 3},                                  // 1 + 0.5·4
	}
	for k := range arms {
		if math.Abs(arms[k].Alpha-want[k].Alpha) > 1e-12 || math.Abs(arms[k].Beta-want[k].Beta) > 1e-12 {
			t.Errorf("arm %d = %+v, want %+v", k, arms[k], want[k])
		}
	}
	// Rewards are clamped; a NaN reward or a bad index changes nothing.
	st := Bandit{Gamma: 1}
	arms = []ArmState{{Alpha: 1, Beta: 1, Alpha0: 1, Beta0: 1}}
	st.Update(arms, 0, 7)
	st.Update(arms, 0, -3)
	if arms[0].Alpha != 2 || arms[0].Beta != 2 {
		t.Errorf("clamped rewards: %+v, want alpha 2 beta 2", arms[0])
	}
	before := arms[0]
	st.Update(arms, 0, math.NaN())
	st.Update(arms, 1, 1)
	st.Update(arms, -1, 1)
	if arms[0] != before {
		t.Errorf("no-op updates changed the arm: %+v", arms[0])
	}
	// Long discounting without rewards returns the arm to its prior.
	d := DefaultBandit()
	arms = []ArmState{{Alpha: 500, Beta: 20, Alpha0: 6, Beta0: 4}, {Alpha: 1, Beta: 1, Alpha0: 1, Beta0: 1}}
	for range 40000 {
		d.Update(arms, 1, 0.5)
	}
	if math.Abs(arms[0].Alpha-6) > 1e-3 || math.Abs(arms[0].Beta-4) > 1e-3 {
		t.Errorf("after 40000 discounts: %+v, want the prior 6, 4", arms[0])
	}
	// The played arm's evidence saturates at 1/(1−γ) = 2000 turns.
	if n := arms[1].Alpha + arms[1].Beta - 2; math.Abs(n-2000) > 0.1 {
		t.Errorf("effective evidence %v, want 2000", n)
	}
}

// BenchmarkChoose measures one threshold decision with its logged probability (201 Thompson
// draws over five arms); it runs once per recall that volunteers memories.
func BenchmarkChoose(b *testing.B) {
	bd := DefaultBandit()
	arms := bd.NewArms("debugging")
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		bd.Choose(arms, rng)
	}
}

// The p_use scale is the source's moved down by PUseOffset, exactly to the hundredth, and
// each type's default is one of the arms; a volunteer threshold maps back, 0 staying 0.
func TestPUseScale(t *testing.T) {
	for typ, want := range map[string]float64{"debugging": 0.2, "help-seeking": 0.1, "exploration": 0.4,
		"casual": 0.5, "other": 0.3, "poetry": 0.3} {
		got := DefaultPUseThreshold(typ)
		if got != want || !slices.Contains(Arms, got) {
			t.Errorf("DefaultPUseThreshold(%s) = %v, want %v among the arms", typ, got, want)
		}
		if v := VolunteerThreshold(got); v != DefaultThreshold(typ) {
			t.Errorf("VolunteerThreshold(%v) = %v, want the source's %v", got, v, DefaultThreshold(typ))
		}
	}
	for _, c := range [][2]float64{{0, 0}, {-1, 0}, {0.85, 1}, {0.25, 0.65}} {
		if v := VolunteerThreshold(c[0]); v != c[1] {
			t.Errorf("VolunteerThreshold(%v) = %v, want %v", c[0], v, c[1])
		}
	}
	th, arm, prob := DefaultBandit().Decide(Policy{Name: PolicyFixedDefault, Fixed: -1}, &Posteriors{}, "casual", "", nil)
	if th != 0.5 || arm != 4 || prob != 1 {
		t.Errorf("fixed:default for casual = %v, arm %d, p %v; want 0.5, arm 4, 1", th, arm, prob)
	}
}

func TestCurrent(t *testing.T) {
	b := DefaultBandit()
	post := &Posteriors{Keys: map[string]*Posterior{}}
	for _, tc := range []struct {
		name, policy, convType string
		want                   float64
	}{
		{"off", PolicyOff, models.ConvCasual, 0},
		{"fixed default", PolicyFixedDefault, models.ConvCasual, 0.5},
		{"fixed", "fixed:0.35", models.ConvCasual, 0.35},
		{"bandit at its prior: the type's default", PolicyBandit, models.ConvDebugging, 0.2},
		{"bandit at its prior, help-seeking", "", models.ConvHelpSeeking, 0.1},
	} {
		pol, err := ParsePolicy(tc.policy, "p")
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Current(pol, post, tc.convType, ""); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Evidence moves the best arm: reward the 0.4 arm of debugging until it leads.
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for range 50 {
		b.Reward(post, PosteriorKey(models.ConvDebugging, ""), models.ConvDebugging, 3, 1, now)
	}
	pol, _ := ParsePolicy(PolicyBandit, "p")
	if got := b.Current(pol, post, models.ConvDebugging, ""); got != 0.4 {
		t.Errorf("after rewarding 0.4: %v, want 0.4", got)
	}
	// Per variant: the variant's posterior has no evidence, so its prior's best.
	if got := b.Current(pol, post, models.ConvDebugging, "v1"); got != 0.2 {
		t.Errorf("variant without evidence: %v, want 0.2", got)
	}
}
