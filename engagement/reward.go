package engagement

import "github.com/salience-ai/salience/models"

// Rewards of engagement events for the threshold bandit (docs/design.md#prediction-and-thresholds), in [0, 1].
const (
	RewardHelpful   = 1.0
	RewardUsed      = 0.8
	RewardIgnored   = 0.2
	RewardDismissed = 0.0

	// EmptyTurnReward is the reward of a turn that surfaced nothing (docs/design.md#prediction-and-thresholds; a namespace
	// may set another). It must be defined: if such turns were skipped, a high threshold
	// would be judged only on the rare turns it lets something through, which are its most
	// confident ones, and would look perfect while it silences the bot. 0.4 sits between
	// ignored (0.2) and used (0.8), below their midpoint: silence beats showing what will be
	// ignored, and loses to a turn where as many surfacings are used as ignored (0.5) — so
	// when in doubt the bandit leans towards showing.
	EmptyTurnReward = 0.4
)

// Reward returns the bandit reward of one event: helpful 1, used 0.8, ignored 0.2,
// dismissed 0; an unknown event counts as dismissed (0), the reward of the worst outcome.
func Reward(ev models.EventType) float64 {
	switch ev {
	case models.EventHelpful:
		return RewardHelpful
	case models.EventUsed:
		return RewardUsed
	case models.EventIgnored:
		return RewardIgnored
	}
	return RewardDismissed
}

// TurnReward is the reward of one turn: the mean reward over the memories it surfaced.
// events holds the outcome of each surfacing that has one (its first report, or the
// implicit-ignore job's ignored); surfacings without an outcome count as ignored, as the
// job will record them. More events than surfaced means surfaced was under-counted and the
// mean is over the events.
// A turn that surfaced nothing earns EmptyTurnReward.
func TurnReward(events []models.EventType, surfaced int) float64 {
	n := max(surfaced, len(events))
	if n == 0 {
		return EmptyTurnReward
	}
	sum := float64(n-len(events)) * RewardIgnored
	for _, ev := range events {
		sum += Reward(ev)
	}
	return sum / float64(n)
}
