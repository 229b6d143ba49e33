package predict

import (
	"math"
	"time"
)

// Proactive surfacing limits (docs/design.md#prediction-and-thresholds).
const (
	// MomentumWindow is the span over which momentum is measured.
	MomentumWindow = 5 * time.Minute
	// MaxMomentum: above this many messages per minute the conversation is moving too fast
	// for an unasked-for memory.
	MaxMomentum = 5.0
	// MinTriggerMatches: triggers that must match the context (same rule as
	// decay.MinTriggerMatches; predict may not import decay).
	MinTriggerMatches = 2
	// MaxRecentDismissals: a memory dismissed more recently than this stays quiet until the
	// weekly dismissal cooldown halves the count.
	MaxRecentDismissals = 2.0
	// MaxProactive is the most proactive memories surfaced per turn.
	MaxProactive = 3
)

// Reasons a gate gives for blocking an unasked-for memory.
const (
	ReasonThreshold  = "below_threshold"    // gate 1
	ReasonTriggers   = "too_few_triggers"   // gate 2
	ReasonMomentum   = "momentum_too_high"  // gate 3
	ReasonDismissals = "recently_dismissed" // gate 4
	ReasonCooldown   = "in_cooldown"        // gate 5
)

// NoLimit is the value of a Gates limit that does not apply to a caller.
var NoLimit = math.Inf(1)

// Gates are the tests every unasked-for memory must pass before it is shown — one
// implementation for ambient recall's volunteers (docs/design.md#threshold-and-rerank) and the proactive surfacing of
// §7. The gates are the same; each caller sets the limits that apply to it (NoLimit for a
// gate it does not use).
type Gates struct {
	// MinTriggers is how many of the memory's triggers must match the context (gate 2)...
	MinTriggers int
	// ...unless its spreading activation reaches MinActivation, another sign that the context
	// is about it ("multiple semantic paths"); NoLimit: triggers only.
	MinActivation float64
	// MaxMomentum in messages per minute (gate 3).
	MaxMomentum float64
	// MaxRecentDismissals, the memory's decaying dismissal count (gate 4).
	MaxRecentDismissals float64
}

// ProactiveGates are the four gates of docs/design.md#prediction-and-thresholds with the source design's limits.
func ProactiveGates() Gates {
	return Gates{MinTriggers: MinTriggerMatches, MinActivation: NoLimit, MaxMomentum: MaxMomentum, MaxRecentDismissals: MaxRecentDismissals}
}

// Signals are what the gates look at for one memory in one turn.
type Signals struct {
	// Score is what must reach the threshold: the prediction confidence of a proactive
	// memory, or the volunteer score (confidence × strength of association) in ambient recall.
	Score            float64
	Triggers         int     // the memory's triggers matching the context
	Activation       float64 // spreading activation reaching the memory
	Momentum         float64 // the conversation's messages per minute (Momentum)
	RecentDismissals float64 // the memory's decaying dismissal count
	InCooldown       bool    // a dismissal's cooldown has not ended
}

// Check applies the gates in order and returns the first that blocks: (1) Score ≥ threshold,
// (2) at least MinTriggers trigger matches or activation ≥ MinActivation, (3) momentum ≤
// MaxMomentum, (4) recent dismissals ≤ MaxRecentDismissals, (5) not in a dismissal's
// cooldown. A NaN input fails its gate. It returns true and "" when all pass.
func (g Gates) Check(threshold float64, s Signals) (ok bool, reason string) {
	switch {
	case !(s.Score >= threshold):
		return false, ReasonThreshold
	case s.Triggers < g.MinTriggers && !(s.Activation >= g.MinActivation):
		return false, ReasonTriggers
	case !(s.Momentum <= g.MaxMomentum):
		return false, ReasonMomentum
	case !(s.RecentDismissals <= g.MaxRecentDismissals):
		return false, ReasonDismissals
	case s.InCooldown:
		return false, ReasonCooldown
	}
	return true, ""
}

// Momentum is the conversation's pace in messages per minute over the last MomentumWindow:
// the number of times t with now − 5 min < t ≤ now, divided by 5. Times after now (clock
// skew) are not counted.
func Momentum(times []time.Time, now time.Time) float64 {
	from := now.Add(-MomentumWindow)
	n := 0
	for _, t := range times {
		if t.After(from) && !t.After(now) {
			n++
		}
	}
	return float64(n) / MomentumWindow.Minutes()
}

// Gate applies ProactiveGates to a proactive candidate: (1) prediction confidence ≥
// threshold, (2) at least MinTriggerMatches trigger matches, (3) momentum ≤ MaxMomentum,
// (4) recent dismissals ≤ MaxRecentDismissals; the first that blocks is the reason.
func Gate(predConf, threshold float64, triggerMatches int, momentum float64, recentDismissals float64) (ok bool, reason string) {
	return ProactiveGates().Check(threshold, Signals{Score: predConf, Triggers: triggerMatches, Momentum: momentum, RecentDismissals: recentDismissals})
}
