package predict

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
)

// Threshold policies (docs/design.md#prediction-and-thresholds): who decides the threshold of an ambient turn.
const (
	PolicyBandit       = "bandit"        // the bandit chooses per turn (default)
	PolicyFixedDefault = "fixed:default" // the source design's threshold of the type
	PolicyOff          = "off"           // no threshold: every candidate may surface
	policyFixed        = "fixed:"        // fixed:<x>, x in [0, 1]
)

// Policy is a parsed threshold policy.
type Policy struct {
	Name  string  // as given, normalized
	Fixed float64 // the threshold of fixed:<x>; −1 for fixed:default
}

// ParsePolicy parses bandit, fixed:default, fixed:<x> (0 ≤ x ≤ 1) or off; "" is bandit. A bad
// value is EINVALID naming field.
func ParsePolicy(s, field string) (Policy, error) {
	switch s = strings.TrimSpace(s); s {
	case "", PolicyBandit:
		return Policy{Name: PolicyBandit}, nil
	case PolicyOff:
		return Policy{Name: PolicyOff}, nil
	case PolicyFixedDefault:
		return Policy{Name: PolicyFixedDefault, Fixed: -1}, nil
	}
	if x, ok := strings.CutPrefix(s, policyFixed); ok {
		if v, ok := models.ParseFixedThreshold(x); ok {
			// 'f', not 'g': the name is again a decimal the grammar takes (not 1e-07).
			return Policy{Name: policyFixed + strconv.FormatFloat(v, 'f', -1, 64), Fixed: v}, nil
		}
	}
	return Policy{}, models.Invalid(field, "threshold policy %q: want bandit, fixed:default, fixed:<0..1> or off", s)
}

// Posteriors are a namespace's bandit state: the arms of each posterior key (a conversation
// type, per experiment variant), kept as one store value so that a turn's reward updates it
// in one read-modify-write.
type Posteriors struct {
	Keys map[string]*Posterior `json:"keys"`
}

// Posterior is one conversation type's (and variant's) arms.
type Posterior struct {
	Arms      []ArmState `json:"arms"`
	Updates   int64      `json:"updates"`
	UpdatedAt time.Time  `json:"updated_at,omitzero"`
}

// StateKey is the store key of a namespace's Posteriors.
func StateKey(ns string) string { return models.BanditKeyPrefix + ns }

// PosteriorKey names the posterior of a conversation type under an experiment variant
// (bandit posteriors are kept per variant, docs/design.md#experiments); no variant: the type alone.
func PosteriorKey(convType, variant string) string {
	if variant == "" {
		return convType
	}
	return convType + "@" + variant
}

// DecodePosteriors reads a stored value; "" is a namespace with no state yet.
func DecodePosteriors(s string) (*Posteriors, error) {
	p := &Posteriors{Keys: map[string]*Posterior{}}
	if s == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(s), p); err != nil {
		return nil, fmt.Errorf("predict: bandit state: %w", err)
	}
	if p.Keys == nil {
		p.Keys = map[string]*Posterior{}
	}
	return p, nil
}

// Encode returns the value to store.
func (p *Posteriors) Encode() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// Arms returns the arms of a key: a copy of its state, or the type's prior when it has none
// (or a number of arms other than len(Arms), from an older arm set).
func (b Bandit) Arms(p *Posteriors, key, convType string) []ArmState {
	if post := p.Keys[key]; post != nil && len(post.Arms) == len(Arms) {
		return slices.Clone(post.Arms)
	}
	return b.NewArms(convType)
}

// Reward updates a key's arms with a turn's reward (Update) and counts it.
func (b Bandit) Reward(p *Posteriors, key, convType string, arm int, reward float64, now time.Time) {
	arms := b.Arms(p, key, convType)
	b.Update(arms, arm, reward)
	post := p.Keys[key]
	if post == nil {
		post = &Posterior{}
		p.Keys[key] = post
	}
	post.Arms, post.UpdatedAt = arms, now
	post.Updates++
}

// Decide returns the threshold of a turn under a policy, the arm chosen (−1 when no bandit
// chose) and the probability of that choice (1 for a fixed policy, whose choice is certain).
// "off" is threshold 0: nothing is held back.
func (b Bandit) Decide(pol Policy, p *Posteriors, convType, variant string, rng *rand.Rand) (threshold float64, arm int, prob float64) {
	switch {
	case pol.Name == PolicyOff:
		return 0, -1, 1
	case pol.Name == PolicyFixedDefault:
		th := DefaultPUseThreshold(convType)
		return th, armOf(th), 1
	case pol.Name != PolicyBandit && pol.Name != "":
		return pol.Fixed, armOf(pol.Fixed), 1
	}
	k, pr := b.Choose(b.Arms(p, PosteriorKey(convType, variant), convType), rng)
	return Arms[k], k, pr
}

// Current returns the threshold in force for a conversation type under a policy without
// making a decision: a fixed policy's threshold, or under the bandit the arm with the highest
// posterior mean (ties: the lower threshold), which no draw is spent on and nothing is
// recorded for. Proactive prediction gates on it.
func (b Bandit) Current(pol Policy, p *Posteriors, convType, variant string) float64 {
	switch {
	case pol.Name == PolicyOff:
		return 0
	case pol.Name == PolicyFixedDefault:
		return DefaultPUseThreshold(convType)
	case pol.Name != PolicyBandit && pol.Name != "":
		return pol.Fixed
	}
	best, bestMean := DefaultPUseThreshold(convType), -1.0
	for k, a := range b.Arms(p, PosteriorKey(convType, variant), convType) {
		if m := a.Mean(); m > bestMean {
			best, bestMean = Arms[k], m
		}
	}
	return best
}

// armOf is the index of a threshold among Arms, −1 when it is none of them.
func armOf(th float64) int {
	return slices.IndexFunc(Arms, func(a float64) bool { return math.Abs(a-th) < 1e-9 })
}
