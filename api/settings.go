package api

import (
	"encoding/json"
	"time"
)

// Settings is a namespace's settings record: GET, PUT and PATCH
// /v1/namespaces/{ns}/settings. Absent or zero fields mean the server's defaults. PUT
// replaces every setting; PATCH is a JSON merge patch (RFC 7396: null removes a setting).
// On a write, a non-zero Version must equal the version held (else 409 conflict), so a
// read-modify-write loses no one else's change; UpdatedAt and UpdatedBy are ignored.
type Settings struct {
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	UpdatedBy string    `json:"updated_by,omitempty"` // the name of the API key that wrote last

	// Weights are the score weights of a mode ("ambient", "search"), each 0..1, replacing
	// the server's weights of that mode whole: the bot's character.
	Weights map[string]ScoreWeights `json:"weights,omitempty"`
	// FreshnessHalfLifeHours: freshness halves every this many hours (default 336).
	FreshnessHalfLifeHours float64 `json:"freshness_half_life_hours,omitempty"`
	// Diversity is ambient recall's diversity strength, 0..1 (default 0.3).
	Diversity *float64 `json:"diversity,omitempty"`
	// Startup bounds the startup package (defaults 3 crystals, 2 anchors, 2 summaries, 5 facts).
	Startup *StartupLimits `json:"startup,omitempty"`
	// Decay chooses the decay policy — linear or fsrs (default the server's --decay-policy)
	// — and its parameters.
	Decay *DecaySettings `json:"decay,omitempty"`
	// ImplicitIgnoreAfterHours: a surfacing with no engagement event this many hours after
	// it was shown counts as ignored; above 0, at most 720 (default the server's
	// --implicit-ignore-after, 30 minutes).
	ImplicitIgnoreAfterHours float64 `json:"implicit_ignore_after_hours,omitempty"`
	// HistoryRetentionDays: prune-history deletes this namespace's turn history older than
	// this many days; 1 to 36,500 (default the server's --history-retention: keep all).
	HistoryRetentionDays float64 `json:"history_retention_days,omitempty"`
	// Rerank is on or off (default the server's --rerank).
	Rerank string `json:"rerank,omitempty"`
	// ThresholdPolicy is the ambient threshold policy of requests that name none: bandit
	// (default), fixed:default, fixed:<x> with 0 ≤ x ≤ 1 on p_use, or off.
	ThresholdPolicy string `json:"threshold_policy,omitempty"`
	// EmptyTurnReward is the bandit's reward for a turn that surfaced nothing, 0..1
	// (default 0.4).
	EmptyTurnReward *float64 `json:"empty_turn_reward,omitempty"`
}

// ScoreWeights are the weights of a result's score components for one mode.
type ScoreWeights struct {
	Relevance  float64 `json:"relevance"`
	Confidence float64 `json:"confidence"`
	Freshness  float64 `json:"freshness"`
	Proximity  float64 `json:"proximity"`
	Importance float64 `json:"importance"`
	Novelty    float64 `json:"novelty"`
}

// StartupLimits are the startup package's counts per kind; 0 keeps the default.
type StartupLimits struct {
	Crystals  int `json:"crystals,omitempty"`
	Anchors   int `json:"anchors,omitempty"`
	Summaries int `json:"summaries,omitempty"`
	Facts     int `json:"facts,omitempty"` // important facts and insights
}

// DecaySettings name a decay policy and set its parameters; absent ones are the server's
// flags. Each policy reads its own: Threshold the linear one, TargetRetention fsrs, the
// cooldown both.
type DecaySettings struct {
	Policy string `json:"policy,omitempty"`
	// Threshold (linear): due when days since last use / (uses + 1) reaches it; above 0,
	// at most 1e6 (default the server's --decay-threshold, 0.7).
	Threshold float64 `json:"threshold,omitempty"`
	// TargetRetention (fsrs): due when the retrievability falls below it; between 0 and 1,
	// exclusive (default the server's --target-retention, 0.9).
	TargetRetention float64 `json:"target_retention,omitempty"`
	// DismissCooldownHours: a dismissed memory is not resurfaced for this many hours, 0 to
	// 8760; 0 is no cooldown (default the server's --dismiss-cooldown, 168).
	DismissCooldownHours *float64 `json:"dismiss_cooldown_hours,omitempty"`
}

// SettingsHistory is the body of GET /v1/namespaces/{ns}/settings/history: the audit
// trail, newest first.
type SettingsHistory struct {
	Changes []SettingsChange `json:"changes"`
}

// SettingsChange is one write of a namespace's settings: who (the API key's name, or
// "migration"), when, the version it produced, and each setting that changed.
type SettingsChange struct {
	Version int           `json:"version"`
	At      time.Time     `json:"at"`
	By      string        `json:"by"`
	Changes []FieldChange `json:"changes"`
}

// FieldChange is one setting's JSON path ("weights.search.relevance") and its values
// before and after (null: absent).
type FieldChange struct {
	Field string          `json:"field"`
	Old   json.RawMessage `json:"old"`
	New   json.RawMessage `json:"new"`
}
