package predict

import (
	"math"
	"math/rand/v2"

	"github.com/salience-ai/salience/models"
)

// Arms are the thresholds on p_use the bandit chooses between: the source's five
// (docs/design.md#prediction-and-thresholds, 0.5 … 0.9) moved onto the p_use scale by PUseOffset.
var Arms = []float64{0.1, 0.2, 0.3, 0.4, 0.5}

// ArmState is the Beta posterior of one arm's reward, Beta(Alpha, Beta), together with the
// prior Beta(Alpha0, Beta0) that discounting pulls it back to. Alpha − Alpha0 and
// Beta − Beta0 are the discounted sums of rewards and of their complements (S_k and F_k of
// docs/formulas.md#thompson-sampling). An arm with no prior recorded (Alpha0 or Beta0 ≤ 0, e.g. built by hand)
// is discounted towards the uniform Beta(1, 1).
type ArmState struct {
	Alpha  float64 `json:"alpha"`
	Beta   float64 `json:"beta"`
	Alpha0 float64 `json:"alpha0"`
	Beta0  float64 `json:"beta0"`
}

// Mean is the posterior mean reward of the arm.
func (a ArmState) Mean() float64 { return a.Alpha / (a.Alpha + a.Beta) }

func (a ArmState) prior() (float64, float64) {
	if a.Alpha0 <= 0 || a.Beta0 <= 0 {
		return 1, 1
	}
	return a.Alpha0, a.Beta0
}

// Bandit defaults.
const (
	// DefaultGamma is the discount per update: the bandit remembers about 1/(1−γ) = 2,000
	// turns of a conversation type, so it follows drift (docs/formulas.md#thompson-sampling: with γ = 0.999,
	// regret 138 vs 449 for the stationary bandit when the best arm changes). 0.9995 rather
	// than the design's 0.999: with five arms whose rewards differ by ~0.09 per step (the
	// simulator of `salience eval bandit`), 1,000 turns of memory leave the posteriors wide
	// enough that Thompson sampling picks the best arm only ~80 % of the time in a stationary
	// stretch; 2,000 picks it 85–90 % and still follows a switch within 1,000 turns
	// (measured: 0.998 → 0.71, 0.999 → 0.79, 0.9993 → 0.83, 0.9995 → 0.83–0.92 worst type).
	DefaultGamma = 0.9995
	// DefaultPriorStrength is the weight of the prior in pseudo-turns. Ten turns steer the
	// first exploration towards the source default without outvoting real evidence: with
	// γ = 0.9995 an arm can gather up to ~2,000 turns of evidence.
	DefaultPriorStrength = 10
	// DefaultDraws is the number of Monte Carlo draws behind the logged choice probability:
	// its standard error is below 0.036 (√(0.25/200)), enough for inverse-propensity replay.
	DefaultDraws = 200
	// Prior means: PriorPeak for the arm at the type's default threshold, PriorSlope less per
	// unit of threshold distance (0.05 per arm step of 0.1).
	PriorPeak  = 0.6
	PriorSlope = 0.5
)

// Bandit is the discounted Thompson-sampling bandit over thresholds. Zero fields take the
// defaults; Gamma = 1 is the stationary bandit.
type Bandit struct {
	Gamma         float64
	PriorStrength float64
	Draws         int
}

// DefaultBandit returns a bandit with every default.
func DefaultBandit() Bandit {
	return Bandit{Gamma: DefaultGamma, PriorStrength: DefaultPriorStrength, Draws: DefaultDraws}
}

func (b Bandit) gamma() float64 {
	if !(b.Gamma > 0 && b.Gamma <= 1) {
		return DefaultGamma
	}
	return b.Gamma
}

func (b Bandit) strength() float64 {
	if !(b.PriorStrength > 0) {
		return DefaultPriorStrength
	}
	return b.PriorStrength
}

func (b Bandit) draws() int {
	if b.Draws <= 0 {
		return DefaultDraws
	}
	return b.Draws
}

// NewArms returns the arms of a conversation type at their priors, one per entry of Arms.
// The priors are centred on the type's default threshold (DefaultPUseThreshold): arm k has prior mean
// PriorPeak − PriorSlope·|Arms[k] − default| (0.6 at the default, 0.55 one step away, … 0.4
// four steps away) and strength PriorStrength, i.e. Beta(m·n, (1−m)·n). Before any evidence
// the default arm is the most likely choice, and every arm keeps a real chance.
func (b Bandit) NewArms(convType string) []ArmState {
	def := DefaultPUseThreshold(convType)
	n := b.strength()
	arms := make([]ArmState, len(Arms))
	for k, th := range Arms {
		m := PriorPeak - PriorSlope*math.Abs(th-def)
		m = min(max(m, 0.05), 0.95)
		arms[k] = ArmState{Alpha: m * n, Beta: (1 - m) * n, Alpha0: m * n, Beta0: (1 - m) * n}
	}
	return arms
}

// Pick makes one Thompson-sampling decision: a draw θ_k ~ Beta(α_k, β_k) per arm and the
// argmax (the first on ties). It returns −1 for no arms.
func (b Bandit) Pick(arms []ArmState, rng *rand.Rand) int {
	best, bestTheta := -1, math.Inf(-1)
	for k, a := range arms {
		if th := betaDraw(rng, a.Alpha, a.Beta); th > bestTheta {
			best, bestTheta = k, th
		}
	}
	return best
}

// Choose picks an arm by Thompson sampling and estimates the probability that Thompson
// sampling picks that arm, to be logged with the surfacing for off-policy replay. The
// estimate repeats the draw Draws more times with the same rng and counts the decision
// itself as one more sample, (wins + 1)/(Draws + 1), so it is never 0 and inverse-propensity
// weights stay finite. It returns −1, 0 for no arms.
func (b Bandit) Choose(arms []ArmState, rng *rand.Rand) (index int, prob float64) {
	idx := b.Pick(arms, rng)
	if idx < 0 {
		return -1, 0
	}
	n := b.draws()
	wins := 1
	for range n {
		if b.Pick(arms, rng) == idx {
			wins++
		}
	}
	return idx, float64(wins) / float64(n+1)
}

// Update records the reward of a decision: every arm is first discounted towards its prior
// (α ← α0 + γ·(α − α0), likewise β: the evidence S_k, F_k is multiplied by γ), then the
// chosen arm gains the fractional reward (α += r, β += 1 − r). Rewards are clamped to
// [0, 1]. An index out of range or a NaN reward changes nothing.
func (b Bandit) Update(arms []ArmState, idx int, reward float64) {
	if idx < 0 || idx >= len(arms) || reward != reward {
		return
	}
	g := b.gamma()
	for k := range arms {
		a0, b0 := arms[k].prior()
		arms[k].Alpha = a0 + g*(arms[k].Alpha-a0)
		arms[k].Beta = b0 + g*(arms[k].Beta-b0)
	}
	r := models.Clamp01(reward)
	arms[idx].Alpha += r
	arms[idx].Beta += 1 - r
}
