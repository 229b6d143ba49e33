package api

import "time"

// EngagementRequest is the body of POST /v1/namespaces/{ns}/engagement: at most 1,000
// events.
type EngagementRequest struct {
	Events []EngagementEvent `json:"events"`
}

// EngagementEvent reports what the bot did with one surfaced memory.
type EngagementEvent struct {
	// ID is chosen by the client (at most 200 bytes) and makes the report idempotent: an id
	// already recorded in the namespace for the same surfacing is a duplicate and changes
	// nothing; for another surfacing, the event is rejected with code conflict.
	ID string `json:"id"`
	// SurfacingID is the surfacing_id recall returned with the memory. Without it, give
	// MemoryID and ConversationID; the event is then tied to the memory's latest surfacing in
	// that conversation at or before At (and rejected when there is none). One surfacing has
	// one outcome: the first report on it decides; later ones are duplicates.
	SurfacingID    string `json:"surfacing_id,omitempty"`
	MemoryID       string `json:"memory_id,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	// Type is used, helpful, ignored or dismissed.
	Type string `json:"type"`
	// At is when it happened; absent means now. Before the surfacing, or more than 5 minutes
	// ahead of the server's clock, is rejected (that event only, as is a value that is not
	// an RFC 3339 time).
	At time.Time `json:"at,omitzero"`
	// Concepts are the context the memory was (or was not) relevant to, at most 64; absent
	// means the context recall recorded with the surfacing (for used and helpful, only the
	// concepts of the message that asked, when it links to the memory: learn.LinkedConcepts).
	Concepts []string `json:"concepts,omitempty"`
}

// EngagementResponse is the answer to an engagement batch: counts and one result per event,
// in order. It is 200 even when every event was rejected; rejections are per event.
type EngagementResponse struct {
	Applied    int                `json:"applied"`
	Duplicates int                `json:"duplicates"`
	Rejected   int                `json:"rejected"`
	Results    []EngagementResult `json:"results"`
}

// EngagementResult is the outcome of one event: applied, duplicate (its id was already
// recorded, or its surfacing already has its outcome; nothing changed) or rejected (Error
// says why: code invalid, not_found or conflict, and Field the culprit as "events[i].field").
type EngagementResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *Error `json:"error,omitempty"`
}

// MetricsResponse is the body of GET /v1/namespaces/{ns}/metrics: engagement metrics over
// the surfacings and events of the window [since, until). package engagement computes it
// and defines each figure in full.
type MetricsResponse struct {
	Namespace     string    `json:"namespace"`
	Since         time.Time `json:"since,omitzero"`
	Until         time.Time `json:"until,omitzero"`
	Conversations int       `json:"conversations"`
	Turns         int       `json:"turns"`
	// Overall counts every surfacing once, by its outcome; the two maps split it by
	// conversation type ("unknown" when none) and by mode.
	Overall            OutcomeCounts            `json:"overall"`
	ByConversationType map[string]OutcomeCounts `json:"by_conversation_type"`
	ByMode             map[string]OutcomeCounts `json:"by_mode"`
	Events             EventCounts              `json:"events"`
	ProactiveRecall    ProactiveRecall          `json:"proactive_recall"`
	LeadTime           LeadTime                 `json:"lead_time"`
	Latency            LatencyPercentiles       `json:"latency"`
	Graph              GraphHealth              `json:"graph"`
	Calibration        Calibration              `json:"calibration"`
	DecayEffectiveness DecayEffectiveness       `json:"decay_effectiveness"`
	// Embedder made the namespace's vectors (absent when it has none): only it serves them.
	Embedder *Embedder `json:"embedder,omitempty"`
}

// OutcomeCounts are the outcomes of a set of surfacings; Pending ones have no outcome yet.
// Precision is (used + helpful) / surfaced; the rates are dismissed / surfaced and
// ignored / surfaced; all 0 when nothing was surfaced.
type OutcomeCounts struct {
	Surfaced      int     `json:"surfaced"`
	Used          int     `json:"used"`
	Helpful       int     `json:"helpful"`
	Ignored       int     `json:"ignored"`
	Dismissed     int     `json:"dismissed"`
	Pending       int     `json:"pending"`
	Precision     float64 `json:"precision"`
	DismissalRate float64 `json:"dismissal_rate"`
	IgnoreRate    float64 `json:"ignore_rate"`
}

// EventCounts count the window's engagement events by type; Implicit are those the
// implicit-ignore job wrote.
type EventCounts struct {
	Total     int `json:"total"`
	Used      int `json:"used"`
	Helpful   int `json:"helpful"`
	Ignored   int `json:"ignored"`
	Dismissed int `json:"dismissed"`
	Implicit  int `json:"implicit"`
}

// ProactiveRecall: of the explicit searches whose result was used (Searches), how many
// found a memory already volunteered in an earlier turn of the conversation (Anticipated).
type ProactiveRecall struct {
	Searches    int     `json:"searches"`
	Anticipated int     `json:"anticipated"`
	Recall      float64 `json:"recall"`
}

// LeadTime: uses of a memory volunteered in an earlier turn of the conversation, and the
// mean number of turns between that showing and the use.
type LeadTime struct {
	Uses     int     `json:"uses"`
	AvgTurns float64 `json:"avg_turns"`
}

// LatencyPercentiles are server-side recall latencies over the window's turns.
type LatencyPercentiles struct {
	Calls int     `json:"calls"`
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
}

// GraphHealth describes the namespace's whole graph: nodes, edges, average degree, average
// clustering coefficient, Louvain communities and their modularity.
type GraphHealth struct {
	Nodes       int     `json:"nodes"`
	Edges       int     `json:"edges"`
	AvgDegree   float64 `json:"avg_degree"`
	Clustering  float64 `json:"clustering"`
	Communities int     `json:"communities"`
	Modularity  float64 `json:"modularity"`
}

// Calibration is how well what was known at surfacing predicted usefulness, over N
// surfacings with an outcome: the correlation of confidence with usefulness, and how
// calibrated the relevance model's p_use was (overall and by conversation type).
type Calibration struct {
	N           int                        `json:"n"`
	Correlation float64                    `json:"correlation"`
	PUse        PUseCalibration            `json:"p_use"`
	ByConvType  map[string]PUseCalibration `json:"p_use_by_conversation_type,omitempty"`
}

// PUseCalibration scores p_use at surfacing against outcomes (1 used or helpful, 0 ignored or
// dismissed): the Brier score, the expected calibration error over 10 equal-width bins, the
// Brier score of the best constant predictor (the positive rate), and the reliability
// curve, one point per non-empty bin.
type PUseCalibration struct {
	N             int                `json:"n"`
	Brier         float64            `json:"brier"`
	ECE           float64            `json:"ece"`
	Rate          float64            `json:"rate"`
	ConstantBrier float64            `json:"constant_brier"`
	Curve         []ReliabilityPoint `json:"reliability,omitempty"`
}

// ReliabilityPoint is one bin of a reliability curve: Count predictions of mean Predicted,
// of which the share Observed came true.
type ReliabilityPoint struct {
	Count     int     `json:"count"`
	Predicted float64 `json:"predicted"`
	Observed  float64 `json:"observed"`
}

// DecayEffectiveness is the share of resurfaced memories that were used or helpful.
type DecayEffectiveness struct {
	Resurfaced int     `json:"resurfaced"`
	Useful     int     `json:"useful"`
	Rate       float64 `json:"rate"`
}
