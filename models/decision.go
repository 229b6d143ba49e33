package models

import "time"

// Decision is the threshold in force for one ambient turn (docs/design.md#prediction-and-thresholds): which arm the bandit
// chose (or the fixed threshold of the policy), the probability of that choice, and how many
// memories the turn surfaced — recorded for every turn, empty ones included, so the bandit's
// reward and an off-policy replay see the turns that showed nothing. Reward is set once, when
// the bandit has learned from the turn.
type Decision struct {
	Namespace      string  `json:"namespace"`
	TurnID         string  `json:"turn_id"`
	ConversationID string  `json:"conversation_id"`
	ConvType       string  `json:"conversation_type"`
	Variant        string  `json:"variant,omitempty"`
	Experiment     string  `json:"experiment,omitempty"` // the experiment of Variant
	Policy         string  `json:"policy"`               // bandit, fixed:default, fixed:<x>, off
	Arm            int     `json:"arm"`                  // index into predict.Arms; −1 when no bandit chose
	Threshold      float64 `json:"threshold"`            // the threshold in force
	Prob           float64 `json:"probability"`          // P(this arm | the posterior); 1 for a fixed policy
	Surfaced       int     `json:"surfaced"`             // memories the turn surfaced
	// Concepts are the turn's context concepts (recall's intake): the log of turns that
	// proactive prediction learns its topic transitions and usage patterns from.
	Concepts []string `json:"concepts,omitempty"`
	// LatencyMS is the server-side time the recall took up to recording the turn (an
	// experiment's latency per turn, empty turns included).
	LatencyMS  float64   `json:"latency_ms,omitempty"`
	At         time.Time `json:"at"`
	Rewarded   bool      `json:"rewarded"`
	Reward     float64   `json:"reward,omitempty"`
	RewardedAt time.Time `json:"rewarded_at,omitzero"`
}

// DecisionFilter selects decisions, oldest first (newest first with Desc). Namespace is
// required.
type DecisionFilter struct {
	Namespace string
	Pending   bool      // only those not rewarded yet
	Before    time.Time // At < Before; zero: no bound
	Limit     int       // 0 = 1000
	// Desc lists newest first (by At, then turn id, both descending): with Limit, the
	// latest decisions (the turn log proactive prediction learns from).
	Desc bool
}

// Check validates f as every store reads it and returns the number of decisions it asks for.
func (f *DecisionFilter) Check() (limit int, err error) {
	if err := ValidateNamespace(f.Namespace); err != nil {
		return 0, err
	}
	return defaultLimit(f.Limit, 1000)
}
