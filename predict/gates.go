package predict

import "time"

// Proactive surfacing limits (DESIGN §7).
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

// Reasons a gate gives for blocking a proactive surfacing.
const (
	ReasonThreshold  = "below_threshold"    // gate 1
	ReasonTriggers   = "too_few_triggers"   // gate 2
	ReasonMomentum   = "momentum_too_high"  // gate 3
	ReasonDismissals = "recently_dismissed" // gate 4
)

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

// Gate applies the four proactive gates of DESIGN §7 in order and returns the first that
// blocks: (1) prediction confidence ≥ threshold, (2) at least MinTriggerMatches trigger
// matches, (3) momentum ≤ MaxMomentum, (4) recent dismissals ≤ MaxRecentDismissals. A NaN
// input fails its gate. It returns true and "" when all pass.
func Gate(predConf, threshold float64, triggerMatches int, momentum float64, recentDismissals float64) (ok bool, reason string) {
	switch {
	case !(predConf >= threshold):
		return false, ReasonThreshold
	case triggerMatches < MinTriggerMatches:
		return false, ReasonTriggers
	case !(momentum <= MaxMomentum):
		return false, ReasonMomentum
	case !(recentDismissals <= MaxRecentDismissals):
		return false, ReasonDismissals
	}
	return true, ""
}
