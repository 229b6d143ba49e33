package api

import "time"

// RecallRequest is the body of POST /v1/namespaces/{ns}/recall.
type RecallRequest struct {
	ConversationID string `json:"conversation_id,omitempty"`
	// TurnID identifies the bot's turn; one is assigned when empty.
	TurnID string `json:"turn_id,omitempty"`
	// Mode is ambient (default), search or startup.
	Mode string `json:"mode,omitempty"`
	// Query and/or Messages say what the turn is about; one of them is required except in
	// startup mode.
	Query    string    `json:"query,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	// Entities the bot already knows the turn is about.
	Entities []string `json:"entities,omitempty"`
	// ConversationType is debugging, help-seeking, exploration, casual or other; inferred
	// when empty.
	ConversationType string `json:"conversation_type,omitempty"`
	// FocalEntity turns on the graph-proximity feature of the score.
	FocalEntity string `json:"focal_entity,omitempty"`
	// Limit is 1..100; 0 leaves it out of the body: 10 (startup: 100). A 0 written in
	// the JSON is a 400.
	Limit int `json:"limit,omitempty"`
	// TokenBudget caps the context block, each result's whole line and the header
	// (≈ 4 characters a token); 0 means no budget.
	TokenBudget int `json:"token_budget,omitempty"`
	// LatencyBudgetMS bounds optional stages such as reranking; 0 means 300.
	LatencyBudgetMS int `json:"latency_budget_ms,omitempty"`
	// Rerank is auto (default), off or on.
	Rerank string `json:"rerank,omitempty"`
	// Kinds restricts results to these kinds.
	Kinds []string `json:"kinds,omitempty"`
	// Since and Until restrict results to memories about [Since, Until).
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// IncludeInvalid also returns facts that stopped being true.
	IncludeInvalid bool `json:"include_invalid,omitempty"`
	// Explain returns the score components of every result.
	Explain bool `json:"explain,omitempty"`
	// Namespaces are more namespaces to recall from besides the route's (shared memory),
	// each one the key is granted, at most 8. They are read-only sources: the route's
	// namespace's settings, threshold and conversation state apply. Each result says its
	// namespace; report engagement on it to that namespace.
	Namespaces []string `json:"namespaces,omitempty"`
	// ThresholdPolicy overrides the namespace's threshold policy for an ambient turn:
	// bandit, fixed:default, fixed:<0..1> or off.
	ThresholdPolicy string `json:"threshold_policy,omitempty"`
	// Proactive (ambient only) adds Predictions: memories the conversation's predicted
	// topics lead to, through the four gates of POST …/predict, recorded as surfacings of
	// mode predict of this turn.
	Proactive bool `json:"proactive,omitempty"`
}

// Message is one recent message of the conversation.
type Message struct {
	Speaker string    `json:"speaker,omitempty"`
	Content string    `json:"content"`
	At      time.Time `json:"at,omitzero"`
}

// RecallResponse is the answer to a recall request.
type RecallResponse struct {
	Results []RecallResult `json:"results"`
	// Context is the formatted block a bot injects into its prompt; empty when nothing is
	// relevant.
	Context          string `json:"context"`
	TurnID           string `json:"turn_id"`
	ConversationType string `json:"conversation_type,omitempty"`
	// Threshold is the volunteer threshold in force for the conversation type.
	Threshold float64 `json:"threshold"`
	// ThresholdPolicy is the policy that set it in ambient mode (bandit, fixed:default,
	// fixed:<x>, off) and ArmProbability the probability the bandit had of choosing it (1
	// for a fixed policy).
	ThresholdPolicy string  `json:"threshold_policy,omitempty"`
	ArmProbability  float64 `json:"arm_probability,omitempty"`
	// Variant is the experiment variant the conversation is assigned to, if any.
	Variant string `json:"variant,omitempty"`
	// Experiment is the id of the experiment of Variant.
	Experiment string `json:"experiment,omitempty"`
	// SettingsVersion is the version of the namespace settings the results were ranked
	// under (0: none written); the surfacings record it too.
	SettingsVersion int          `json:"settings_version"`
	Rerank          RerankStatus `json:"rerank"`
	// Degraded lists dependencies that failed and were worked around ("embedder: timeout").
	Degraded []string `json:"degraded,omitempty"`
	// LatencyMS is the server-side duration of the pipeline; Stages splits it by stage.
	LatencyMS float64            `json:"latency_ms"`
	Stages    map[string]float64 `json:"stages,omitempty"`
	// Startup is set in startup mode.
	Startup *Startup `json:"startup,omitempty"`
	// Predictions are the proactive memories of the turn (with the request's proactive),
	// and Proactive what they were judged on.
	Predictions []PredictedMemory `json:"predictions,omitempty"`
	Proactive   *Proactive        `json:"proactive,omitempty"`
}

// PredictRequest is the body of POST /v1/namespaces/{ns}/predict: which memories the
// conversation's next turns are likely to want, before anyone asks.
type PredictRequest struct {
	// ConversationID is required: predictions follow a conversation's turns.
	ConversationID string `json:"conversation_id"`
	// TurnID is the turn the surfaced predictions are recorded under; assigned when empty.
	TurnID string `json:"turn_id,omitempty"`
	// Messages are the latest messages, optional: their concepts (and the entities') are the
	// current turn. Without them the conversation's last recorded turn is.
	Messages []Message `json:"messages,omitempty"`
	Entities []string  `json:"entities,omitempty"`
	// ConversationType is debugging, help-seeking, exploration, casual or other; when empty,
	// inferred from the messages, else the conversation's.
	ConversationType string `json:"conversation_type,omitempty"`
	// Explain adds Judged: every candidate with the gate that stopped it.
	Explain bool `json:"explain,omitempty"`
}

// PredictResponse is the answer of POST /v1/namespaces/{ns}/predict.
type PredictResponse struct {
	// Predictions are the surfaced memories, best first, at most 3.
	Predictions []PredictedMemory `json:"predictions"`
	Proactive
	TurnID           string   `json:"turn_id"`
	ConversationType string   `json:"conversation_type"`
	ThresholdPolicy  string   `json:"threshold_policy"`
	Variant          string   `json:"variant,omitempty"`
	Experiment       string   `json:"experiment,omitempty"`
	SettingsVersion  int      `json:"settings_version"`
	Degraded         []string `json:"degraded,omitempty"`
}

// Proactive is what proactive surfacing judged its candidates on.
type Proactive struct {
	// Topics are the predicted topics, best first: P is the probability that the concept
	// comes up within the next 3 turns, From the recent concept that predicts it.
	Topics []PredictedTopic `json:"topics"`
	// Momentum is the conversation's pace in messages per minute over the last 5 minutes.
	Momentum float64 `json:"momentum"`
	// Threshold is gate 1's threshold on the prediction confidence: the threshold on p_use
	// in force for the conversation type.
	Threshold float64 `json:"threshold"`
	// Judged (with explain) is every candidate judged, surfaced first, each blocked one
	// with the gate that stopped it.
	Judged []PredictedMemory `json:"judged,omitempty"`
}

// PredictedTopic is one predicted topic.
type PredictedTopic struct {
	Concept string  `json:"concept"`
	P       float64 `json:"p"`
	From    string  `json:"from"`
}

// PredictedMemory is one proactive candidate and the verdict of the gates on it.
type PredictedMemory struct {
	Memory Memory `json:"memory"`
	// SurfacingID identifies this showing in engagement reports (surfaced ones only).
	SurfacingID string `json:"surfacing_id,omitempty"`
	// Confidence is the probability that a concept of the memory (Topic) comes up within the
	// next 3 turns: the proactive memory's p_use estimate, which gate 1 compares with the
	// threshold.
	Confidence float64 `json:"confidence"`
	Topic      string  `json:"topic"`
	From       string  `json:"from"`
	// Matches are the concepts of the last 3 turns found among the memory's triggers, its
	// own or learned from the turns before its uses (gate 2 wants 2).
	Matches []string `json:"matches"`
	// LeadTurns is how many turns before its use the learned triggers usually appear.
	LeadTurns float64 `json:"lead_turns"`
	Surfaced  bool    `json:"surfaced"`
	// Reason says why a surfaced memory passed each gate; BlockedBy which gate stopped the
	// others: below_threshold, too_few_triggers, momentum_too_high, recently_dismissed,
	// in_cooldown, or over_limit (3 better ones surfaced).
	Reason    string `json:"reason,omitempty"`
	BlockedBy string `json:"blocked_by,omitempty"`
}

// RecallResult is one recalled memory.
type RecallResult struct {
	// ID is the memory's id (the parent's id for a fragment).
	ID string `json:"id"`
	// Namespace is the namespace the memory lives in: the route's, or one of the request's
	// namespaces. Its surfacing is recorded there.
	Namespace string `json:"namespace"`
	// SurfacingID identifies this showing of the memory in engagement reports; startup
	// results have none (the startup package is not engagement-tracked).
	SurfacingID string `json:"surfacing_id,omitempty"`
	Kind        string `json:"kind"`
	// Content is what is shown: the memory's content, or one chunk of it (see Fragment).
	Content  string    `json:"content"`
	Fragment *Fragment `json:"fragment,omitempty"`
	Score    float64   `json:"score"`
	// PUse is the namespace's relevance model's probability that the memory will be used.
	PUse float64 `json:"p_use"`
	// Components are returned with explain.
	Components *Components `json:"components,omitempty"`
	// Reasons say how the memory was found: text, vector, association, resurface.
	Reasons []string `json:"reasons,omitempty"`
	// Volunteered is true when the memory was reached only by association, prediction or
	// resurfacing rather than by matching the turn directly.
	Volunteered bool      `json:"volunteered"`
	CreatedAt   time.Time `json:"created_at"`
	ValidAt     time.Time `json:"valid_at,omitzero"`
	Source      *Source   `json:"source,omitempty"`
}

// Fragment says which chunk of a long memory a result shows; GET the parent for the whole.
type Fragment struct {
	ParentID string `json:"parent_id"`
	Index    int    `json:"index"` // 1-based, as in "[Fragment 2/5]"
	Count    int    `json:"count"`
}

// Components are the parts of a result's score, each in 0..1.
type Components struct {
	// Relevance is how well the memory matches the turn, from the signals below.
	Relevance float64 `json:"relevance"`
	// BM25 is the text score relative to the query's best match; Vector the cosine
	// similarity of the best vector match; Phrase the share of the query's word pairs found
	// as phrases; Activation the strength of spreading activation through the graph.
	BM25       float64 `json:"bm25,omitempty"`
	Vector     float64 `json:"vector,omitempty"`
	Phrase     float64 `json:"phrase,omitempty"`
	Activation float64 `json:"activation,omitempty"`
	Confidence float64 `json:"confidence"`
	// Freshness halves every 14 days of the memory's age.
	Freshness float64 `json:"freshness"`
	// Proximity is 1/(1+hops) to the focal entity, when one is given.
	Proximity  float64 `json:"proximity,omitempty"`
	Importance float64 `json:"importance"`
	// Novelty is 1 minus the penalty for being surfaced often lately.
	Novelty float64 `json:"novelty"`
	// Volunteer is the score a volunteered memory must bring over the threshold.
	Volunteer float64 `json:"volunteer,omitempty"`
	// What the relevance model reads besides the above: WeightedScore is the weighted sum of
	// the components (the score before the model, not a feature); Coverage the text match's
	// share of the query's information; Match the absolute match (coverage and vector,
	// comparable across turns); Used the times the memory was used before; Speaker 1 when the
	// query names the memory's speaker; Turn 1 for a conversation turn; Top 1 for the turn's
	// best direct match by Match and Margin its lead over the runner-up; Question 1 when the
	// turn asks a question; Features the relevance model's feature version.
	WeightedScore float64 `json:"weighted_score"`
	Coverage      float64 `json:"coverage,omitempty"`
	Match         float64 `json:"match,omitempty"`
	Used          float64 `json:"used,omitempty"`
	Speaker       float64 `json:"speaker,omitempty"`
	Turn          float64 `json:"turn,omitempty"`
	Top           float64 `json:"top,omitempty"`
	Margin        float64 `json:"margin,omitempty"`
	Question      float64 `json:"question,omitempty"`
	Features      int     `json:"features,omitempty"`
	// Model is each feature's contribution w·x to the logit of p_use, and Lambda how much
	// what the namespace's reports taught moves the score: score = weighted_score +
	// λ·0.1·(logit − prior logit), λ = n/(n+50) after n events.
	Model  map[string]float64 `json:"model,omitempty"`
	Lambda float64            `json:"lambda,omitempty"`
	// Learned are the memory's learned words (Memory.Learned) that the turn's words hold:
	// what text search matched beyond the memory's own words.
	Learned []LearnedTerm `json:"learned,omitempty"`
}

// RerankStatus says whether the LLM reranker ran and, if not, why: status is one of
// applied, skipped_budget, timeout, error, circuit_open, off, unconfigured (docs/rerank.md).
type RerankStatus struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Startup carries the extra figures of the startup package.
type Startup struct {
	Now      time.Time `json:"now"`
	Memories int       `json:"memories"`
	Concepts int       `json:"concepts"`
	Edges    int       `json:"edges"`
}

// ThresholdsResponse is the answer of GET /v1/namespaces/{ns}/thresholds: the threshold
// bandit's posterior per conversation type (docs/design.md#prediction-and-thresholds).
type ThresholdsResponse struct {
	Namespace string           `json:"namespace"`
	Types     []TypeThresholds `json:"types"`
}

// TypeThresholds is one conversation type's (and experiment variant's) bandit state.
type TypeThresholds struct {
	ConversationType string `json:"conversation_type"`
	Variant          string `json:"variant,omitempty"`
	// DefaultThreshold is the type's default threshold on p_use (the source design's less
	// predict.PUseOffset), on which the prior is centred.
	DefaultThreshold float64 `json:"default_threshold"`
	// Best is the arm with the highest posterior mean reward.
	Best float64 `json:"best"`
	// Updates counts the turns' rewards learned from; 0: the prior alone.
	Updates   int64          `json:"updates"`
	UpdatedAt time.Time      `json:"updated_at,omitzero"`
	Arms      []ThresholdArm `json:"arms"`
}

// ThresholdArm is one arm's Beta posterior of the turn reward.
type ThresholdArm struct {
	Threshold float64 `json:"threshold"`
	Alpha     float64 `json:"alpha"`
	Beta      float64 `json:"beta"`
	Mean      float64 `json:"mean"`
}
