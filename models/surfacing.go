package models

import "time"

// Mode is how a memory came to be shown.
type Mode string

const (
	ModeAmbient   Mode = "ambient"   // volunteered before a reply
	ModeSearch    Mode = "search"    // asked for explicitly
	ModePredict   Mode = "predict"   // proactive, from predicted topics
	ModeResurface Mode = "resurface" // from the spaced-repetition queue
	ModeStartup   Mode = "startup"   // the startup package
)

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool {
	switch m {
	case ModeAmbient, ModeSearch, ModePredict, ModeResurface, ModeStartup:
		return true
	}
	return false
}

// Components are the parts of a recall score, each in 0..1, as returned under explain.
type Components struct {
	Relevance float64 `json:"relevance"`
	BM25      float64 `json:"bm25,omitempty"`     // BM25 score over the query's best
	Coverage  float64 `json:"coverage,omitempty"` // BM25 score over the query's information
	// Match is direct relevance on the absolute scale (Coverage in BM25's place, no
	// association): how strongly the memory itself matches the turn, comparable across
	// turns, as the relevance model reads it.
	Match      float64 `json:"match,omitempty"`
	Vector     float64 `json:"vector,omitempty"`     // cosine similarity of the best vector match
	Phrase     float64 `json:"phrase,omitempty"`     // share of the query's word pairs found as phrases
	Activation float64 `json:"activation,omitempty"` // spreading-activation strength
	Confidence float64 `json:"confidence"`
	Freshness  float64 `json:"freshness"`
	Proximity  float64 `json:"proximity,omitempty"`
	Importance float64 `json:"importance"`
	Novelty    float64 `json:"novelty"` // 1 − wallpaper penalty
	Volunteer  float64 `json:"volunteer,omitempty"`
	// What the relevance model reads besides the above (package learn): the weighted score of
	// the components, the memory's engagement history when shown, whether the query named
	// its speaker, whether it is a conversation turn.
	Score   float64 `json:"weighted_score,omitempty"` // Σ w·f / Σ w, the score before the model
	Used    float64 `json:"used,omitempty"`           // times used or helpful before
	Speaker float64 `json:"speaker,omitempty"`        // 1 when the query names the memory's speaker
	Turn    float64 `json:"turn,omitempty"`           // 1 for a conversation turn
	// Top is 1 for the turn's best direct match by Score, and Margin its lead over the
	// runner-up (0 for every other memory): features relative to the turn, which a memory's
	// own score cannot give, since how high a best match scores varies with the query.
	Top    float64 `json:"top,omitempty"`
	Margin float64 `json:"margin,omitempty"`
	// Question is 1 when the turn's latest message (or the query) asks a question.
	Question float64 `json:"question,omitempty"`
	// Features is the relevance model's feature set these were measured for (learn.Version):
	// a surfacing recorded under another trains no model.
	Features int `json:"features,omitempty"`
}

// Surfacing is one memory shown in one turn; engagement events point at it.
type Surfacing struct {
	ID             string     `json:"id"`
	Namespace      string     `json:"namespace"`
	ConversationID string     `json:"conversation_id"`
	TurnID         string     `json:"turn_id"`
	MemoryID       string     `json:"memory_id"`
	Mode           Mode       `json:"mode"`
	Rank           int        `json:"rank"`
	Score          float64    `json:"score"`
	Components     Components `json:"components"`
	ConvType       string     `json:"conversation_type,omitempty"`
	Threshold      float64    `json:"threshold,omitempty"`
	ArmProb        float64    `json:"arm_probability,omitempty"`
	Variant        string     `json:"variant,omitempty"`
	// Experiment is the id of the experiment whose Variant ranked the turn ("" outside one).
	Experiment string   `json:"experiment,omitempty"`
	Concepts   []string `json:"concepts,omitempty"` // the context concepts of the turn
	// Terms are the analysed words of the message that asked — the query, else the latest
	// message, not the window before it — (nlp.Terms, at most learn.MaxQueryTerms): a memory
	// used in the turn learns those of them that link to it (feedback expansion, learn.Linked).
	Terms []string `json:"terms,omitempty"`
	// PUse is the relevance model's probability that the memory would be used, and
	// ModelVersion the model's version (events trained on) when it was shown.
	PUse         float64 `json:"p_use"`
	ModelVersion int64   `json:"model_version"`
	// LatencyMS is the server-side time the recall call took up to recording its surfacings,
	// for the retrieval-latency metric (all surfacings of a turn carry the same value).
	LatencyMS float64 `json:"latency_ms,omitempty"`
	// SettingsVersion is the version of the namespace settings the turn was ranked under
	// (0: none written yet), so engagement can be read per version of a bot's character.
	SettingsVersion int       `json:"settings_version,omitempty"`
	At              time.Time `json:"at"`
	// Outcome is what became of the surfacing, once known: the first report on it, or
	// ignored by the implicit-ignore job (which a later report replaces). OutcomeAt is the
	// deciding report's time; it is zero for the job's outcome, whose event is dated at the
	// surfacing in the log.
	Outcome   EventType `json:"outcome,omitempty"`
	OutcomeAt time.Time `json:"outcome_at,omitzero"`
}

// EventType is what a bot did with a surfaced memory.
type EventType string

const (
	EventUsed      EventType = "used"
	EventHelpful   EventType = "helpful"
	EventIgnored   EventType = "ignored"
	EventDismissed EventType = "dismissed"
)

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	switch t {
	case EventUsed, EventHelpful, EventIgnored, EventDismissed:
		return true
	}
	return false
}

// Positive reports whether the event counts as the memory having been useful.
func (t EventType) Positive() bool { return t == EventUsed || t == EventHelpful }

// Event is one engagement report. ID is chosen by the client and makes the report idempotent.
type Event struct {
	ID             string    `json:"id"`
	Namespace      string    `json:"namespace"`
	SurfacingID    string    `json:"surfacing_id,omitempty"`
	MemoryID       string    `json:"memory_id,omitempty"`
	ConversationID string    `json:"conversation_id,omitempty"`
	Type           EventType `json:"type"`
	At             time.Time `json:"at"`
	Concepts       []string  `json:"concepts,omitempty"`
	Implicit       bool      `json:"implicit,omitempty"` // written by the implicit-ignore job
	// Seq is the event's position in the namespace's application order, assigned by
	// Tx.InsertEvent (1, 2, …): the relevance model is rebuilt from the log in this order.
	Seq int64 `json:"seq,omitempty"`
}

// ConversationState is what Salience keeps about a conversation between recall calls.
type ConversationState struct {
	Namespace      string      `json:"namespace"`
	ConversationID string      `json:"conversation_id"`
	Type           string      `json:"type"`
	Turns          int         `json:"turns"`
	RecentTopics   []string    `json:"recent_topics,omitempty"`
	MessageTimes   []time.Time `json:"message_times,omitempty"` // last few, for momentum
	Participants   []string    `json:"participants,omitempty"`
	// RecentSurfaced holds the memory ids surfaced in the latest turns, newest turn last;
	// ambient recall does not repeat them.
	RecentSurfaced [][]string `json:"recent_surfaced,omitempty"`
	// RecentTurns are the context concepts of the latest turns (at most 3, the topic
	// window of proactive prediction), newest turn last.
	RecentTurns [][]string `json:"recent_turns,omitempty"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// Conversation types with source-design default thresholds.
const (
	ConvDebugging   = "debugging"
	ConvHelpSeeking = "help-seeking"
	ConvExploration = "exploration"
	ConvCasual      = "casual"
	ConvOther       = "other"
)
