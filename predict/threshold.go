// Package predict holds the proactive side of recall (docs/design.md#prediction-and-thresholds): the per-conversation-type
// thresholds, the discounted Thompson-sampling bandit that tunes them, conversation
// momentum and the gates a proactive surfacing must pass. Everything here is pure: time and
// randomness come in as arguments.
package predict

import (
	"math"

	"github.com/salience-ai/salience/models"
)

// DefaultThresholds are the source design's volunteer thresholds per conversation type, on
// its scale of volunteer score and prediction confidence: a memory is volunteered only when
// its volunteer score reaches the threshold. Debugging and help-seeking want memories
// readily; casual talk wants only sure ones.
var DefaultThresholds = map[string]float64{
	models.ConvDebugging:   0.6,
	models.ConvHelpSeeking: 0.5,
	models.ConvExploration: 0.8,
	models.ConvCasual:      0.9,
	models.ConvOther:       0.7,
}

// DefaultThreshold returns the source design's threshold of a conversation type; unknown
// types get the "other" threshold.
func DefaultThreshold(convType string) float64 {
	if t, ok := DefaultThresholds[convType]; ok {
		return t
	}
	return DefaultThresholds[models.ConvOther]
}

// PUseOffset is how far the p_use scale of the bandit's arms lies below the source's scale.
//
// The source's thresholds (0.5 … 0.9) were set on an uncalibrated confidence. p_use is a
// calibrated probability of use, and on it those numbers would hold back nearly everything:
// on the LoCoMo replay even the best match of a question is used about a third of the time
// (a calibrated model gives 0.3–0.5 to a typical best match), so gating at 0.5 … 0.9 leaves
// almost every turn empty. The reward of docs/design.md#prediction-and-thresholds fixes where the bar belongs instead: a turn
// that surfaces one memory of probability p earns 0.2 + 0.6·p on average against 0.4 for an
// empty turn, so surfacing pays from p = 1/3. The source's ladder is kept — its order, its
// 0.1 steps, a threshold per type — and moved so that its middle, the "other" type's 0.7,
// sits at that break-even: 0.3. Help-seeking starts at 0.1, casual talk at 0.5.
const PUseOffset = 0.4

// DefaultPUseThreshold is a conversation type's default threshold on p_use: the source
// default less PUseOffset, the centre of the bandit's prior (NewArms) and the threshold of
// the fixed:default policy.
func DefaultPUseThreshold(convType string) float64 {
	return round2(DefaultThreshold(convType) - PUseOffset)
}

// VolunteerThreshold is the threshold on the source's scale that corresponds to a p_use
// threshold: what a volunteered memory's volunteer score must reach. A threshold of 0 (the
// off policy) stays 0: nothing is held back.
func VolunteerThreshold(pUse float64) float64 {
	if pUse <= 0 {
		return 0
	}
	return min(1, round2(pUse+PUseOffset))
}

// round2 keeps the scale arithmetic exact to the hundredth (0.7 − 0.4 is 0.29999…).
func round2(x float64) float64 { return math.Round(x*100) / 100 }
