package api

import "time"

// ExperimentCreate is the body of POST /v1/namespaces/{ns}/experiments: the first variant
// is the control, the others treatments; shares sum to 1.
type ExperimentCreate struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Variants    []Variant `json:"variants"`
	// PrimaryMetric is what the report ranks the variants by: reward_per_turn (the default
	// when absent), used_per_turn, precision or dismissal_rate (lower is better).
	PrimaryMetric string `json:"primary_metric,omitempty"`
}

// Experiment is an A/B experiment of a namespace.
type Experiment struct {
	ID          string    `json:"id"`
	Namespace   string    `json:"namespace"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Status      string    `json:"status"` // running or stopped
	Variants    []Variant `json:"variants"`
	// PrimaryMetric is what the report ranks the variants by.
	PrimaryMetric string    `json:"primary_metric"`
	CreatedAt     time.Time `json:"created_at"`
	CreatedBy     string    `json:"created_by,omitempty"`
	StoppedAt     time.Time `json:"stopped_at,omitzero"`
}

// Variant is one arm of an experiment: a name, a share of the conversations and the
// per-turn knobs it overrides.
type Variant struct {
	Name      string           `json:"name"`
	Share     float64          `json:"share"`
	Overrides VariantOverrides `json:"overrides"`
}

// VariantOverrides are the knobs a variant may set; absent ones keep the namespace's.
type VariantOverrides struct {
	Weights                map[string]ScoreWeights `json:"weights,omitempty"`
	FreshnessHalfLifeHours float64                 `json:"freshness_half_life_hours,omitempty"`
	Diversity              *float64                `json:"diversity,omitempty"`
	RelevanceModel         string                  `json:"relevance_model,omitempty"`  // on or off
	ThresholdPolicy        string                  `json:"threshold_policy,omitempty"` // bandit, fixed:default, fixed:<x>, off
	Rerank                 string                  `json:"rerank,omitempty"`           // on or off
}

// ExperimentList is the body of GET /v1/namespaces/{ns}/experiments, newest first.
type ExperimentList struct {
	Experiments []Experiment `json:"experiments"`
}
