// Package predict holds the proactive side of recall (DESIGN §7): the per-conversation-type
// volunteer thresholds, the discounted Thompson-sampling bandit that tunes them, conversation
// momentum and the gates a proactive surfacing must pass. Everything here is pure: time and
// randomness come in as arguments.
package predict

import "github.com/salience-ai/salience/models"

// DefaultThresholds are the source design's volunteer thresholds per conversation type: a
// memory is volunteered only when its volunteer score reaches the threshold. Debugging and
// help-seeking want memories readily; casual talk wants only sure ones.
var DefaultThresholds = map[string]float64{
	models.ConvDebugging:   0.6,
	models.ConvHelpSeeking: 0.5,
	models.ConvExploration: 0.8,
	models.ConvCasual:      0.9,
	models.ConvOther:       0.7,
}

// DefaultThreshold returns the default threshold of a conversation type; unknown types get
// the "other" threshold.
func DefaultThreshold(convType string) float64 {
	if t, ok := DefaultThresholds[convType]; ok {
		return t
	}
	return DefaultThresholds[models.ConvOther]
}
