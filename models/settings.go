package models

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// Settings is a namespace's settings record: the overrides of the server's defaults that
// make one bot's recall its own (its "character"), plus the record's version and who wrote
// it last. A zero or absent field means "the server default". The record is one JSON object
// kept by the store under SettingsKey(ns); older records that held only {"rerank": …} read
// as version 0 with that one override.
type Settings struct {
	// Version counts the writes of the record: 0 before the first, then 1, 2, … Each
	// surfacing records the version it was ranked under. On a write, a non-zero Version is
	// the version the writer read: another is ECONFLICT (a lost update refused).
	Version   int       `json:"version"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	UpdatedBy string    `json:"updated_by,omitempty"` // the API key's name

	// Weights replace the server's score weights of a mode (ambient, search) whole: the
	// character's affinity, e.g. a bot that favours what it was told recently weighs
	// freshness higher. Σ of a mode's weights must be positive.
	Weights map[Mode]ScoreWeights `json:"weights,omitempty"`
	// FreshnessHalfLifeHours: freshness halves every this many hours of a memory's age.
	FreshnessHalfLifeHours float64 `json:"freshness_half_life_hours,omitempty"`
	// Diversity is the ambient diversity strength in 0..1: 0 ranks by score alone, 1 by
	// dissimilarity alone (it is 1 − the MMR lambda; the server default is 0.3).
	Diversity *float64 `json:"diversity,omitempty"`
	// Startup bounds the startup package.
	Startup *StartupLimits `json:"startup,omitempty"`
	// Decay chooses the namespace's decay policy and its parameters.
	Decay *DecaySettings `json:"decay,omitempty"`
	// ImplicitIgnoreAfterHours: a surfacing with no engagement event this many hours after
	// it was shown counts as ignored (the implicit-ignore job), and its turn settles for the
	// threshold bandit. 0 or absent: the server's --implicit-ignore-after.
	ImplicitIgnoreAfterHours float64 `json:"implicit_ignore_after_hours,omitempty"`
	// HistoryRetentionDays: the prune-history job deletes this namespace's turn history
	// (what models/prune.go's Prunable rules let go) older than this many days. 0 or absent: the server's --history-retention.
	HistoryRetentionDays float64 `json:"history_retention_days,omitempty"`
	// Rerank is the LLM reranking policy: "on", "off", or "" for the server's --rerank.
	Rerank string `json:"rerank,omitempty"`
	// ThresholdPolicy decides each ambient turn's threshold when a request names none:
	// bandit, fixed:default, fixed:<x> (0 ≤ x ≤ 1, on p_use) or off; "" = bandit.
	ThresholdPolicy string `json:"threshold_policy,omitempty"`
	// EmptyTurnReward is the bandit's reward for a turn that surfaced nothing, 0..1 (absent:
	// 0.4, docs/design.md#prediction-and-thresholds): how much this bot's users prefer silence to a memory they ignore.
	EmptyTurnReward *float64 `json:"empty_turn_reward,omitempty"`
}

// ScoreWeights are the weights of the score's features for one mode (docs/design.md#score).
type ScoreWeights struct {
	Relevance  float64 `json:"relevance"`
	Confidence float64 `json:"confidence"`
	Freshness  float64 `json:"freshness"`
	Proximity  float64 `json:"proximity"`
	Importance float64 `json:"importance"`
	Novelty    float64 `json:"novelty"`
}

// StartupLimits are how many crystals, anchors, summaries and important facts (with
// insights) the startup package holds; 0 keeps the server default of that kind.
type StartupLimits struct {
	Crystals  int `json:"crystals,omitempty"`
	Anchors   int `json:"anchors,omitempty"`
	Summaries int `json:"summaries,omitempty"`
	Facts     int `json:"facts,omitempty"`
}

// DecaySettings name the decay policy ("linear" or "fsrs"; "" = the server's --decay-policy)
// and override its parameters; an absent parameter is the server's flag. Each policy reads
// only its own (Threshold: linear; TargetRetention: fsrs; the cooldown: both), so a switch of
// policy keeps the parameters of the other for a switch back.
type DecaySettings struct {
	Policy string `json:"policy,omitempty"`
	// Threshold (linear): due when days since last use / (uses + 1) reaches it; above 0, at
	// most MaxDecayThreshold. 0 or absent: --decay-threshold.
	Threshold float64 `json:"threshold,omitempty"`
	// TargetRetention (fsrs): due when the retrievability falls below it; strictly between
	// 0 and 1. 0 or absent: --target-retention.
	TargetRetention float64 `json:"target_retention,omitempty"`
	// DismissCooldownHours (both): a dismissed memory is not resurfaced for this many hours;
	// 0 is no cooldown, at most MaxDismissCooldownHours. Absent: --dismiss-cooldown.
	DismissCooldownHours *float64 `json:"dismiss_cooldown_hours,omitempty"`
}

// Settings limits.
const (
	// MaxHalfLifeHours bounds the freshness half-life at ten years: beyond, freshness no
	// longer changes any order.
	MaxHalfLifeHours = 10 * 365 * 24
	// MinHalfLifeHours: below an hour every memory but the last minutes' has freshness ~0,
	// and a half-life of 1e-9 h silenced recall altogether.
	MinHalfLifeHours = 1
	// MaxStartupCount bounds each startup kind at the largest response.
	MaxStartupCount = 100
	// MaxIgnoreAfterHours bounds the implicit-ignore timeout at 30 days: a bot that has not
	// reported on a memory within a month will not, and the job keeps re-reading the
	// surfacings still inside a namespace's timeout.
	MaxIgnoreAfterHours = 30 * 24
	// MaxDecayThreshold bounds the linear policy's threshold as --decay-threshold does.
	MaxDecayThreshold = 1e6
	// MinHistoryRetentionDays is the shortest history retention: a day, so that a turn's
	// surfacings, its engagement reports (late ones included) and its bandit reward are all
	// settled, and the day's experiment report taken, before anything of it may go.
	MinHistoryRetentionDays = 1
	// MaxHistoryRetentionDays bounds a namespace's history retention at a hundred years.
	MaxHistoryRetentionDays = 36500
	// MaxDismissCooldownHours bounds the dismissal cooldown at a year.
	MaxDismissCooldownHours = 365 * 24
)

// SettingsKeyPrefix starts the store state key of a namespace's settings record.
const SettingsKeyPrefix = "settings/"

// SettingsKey returns the store state key of ns's settings record.
func SettingsKey(ns string) string { return SettingsKeyPrefix + ns }

// Validate checks the overrides; errors are EINVALID naming the JSON field.
func (s *Settings) Validate() error {
	modes := make([]string, 0, len(s.Weights))
	for m := range s.Weights {
		modes = append(modes, string(m))
	}
	sort.Strings(modes) // report the same field every time
	for _, m := range modes {
		if m != string(ModeAmbient) && m != string(ModeSearch) {
			return Invalid("weights."+m, "weights are set per mode: ambient or search")
		}
		if err := s.Weights[Mode(m)].validate("weights." + m); err != nil {
			return err
		}
	}
	if h := s.FreshnessHalfLifeHours; !finiteNumber(h) || h != 0 && (h < MinHalfLifeHours || h > MaxHalfLifeHours) {
		return Invalid("freshness_half_life_hours", "must be a number of hours from %d to %d (0 or absent: the server default)", MinHalfLifeHours, MaxHalfLifeHours)
	}
	if d := s.Diversity; d != nil && (!finiteNumber(*d) || *d < 0 || *d > 1) {
		return Invalid("diversity", "must be between 0 and 1")
	}
	if st := s.Startup; st != nil {
		for _, c := range []struct {
			name string
			n    int
		}{{"crystals", st.Crystals}, {"anchors", st.Anchors}, {"summaries", st.Summaries}, {"facts", st.Facts}} {
			if c.n < 0 || c.n > MaxStartupCount {
				return Invalid("startup."+c.name, "must be between 0 and %d (0: the server default)", MaxStartupCount)
			}
		}
	}
	if d := s.Decay; d != nil {
		if err := d.validate(); err != nil {
			return err
		}
	}
	if h := s.ImplicitIgnoreAfterHours; !finiteNumber(h) || h < 0 || h > MaxIgnoreAfterHours {
		return Invalid("implicit_ignore_after_hours", "must be a number of hours above 0 and at most %d (0 or absent: the server's --implicit-ignore-after)", MaxIgnoreAfterHours)
	}
	if d := s.HistoryRetentionDays; !finiteNumber(d) || d < 0 || (d > 0 && d < MinHistoryRetentionDays) || d > MaxHistoryRetentionDays {
		return Invalid("history_retention_days", "must be a number of days from %d to %d (0 or absent: the server's --history-retention)",
			MinHistoryRetentionDays, MaxHistoryRetentionDays)
	}
	switch s.Rerank {
	case "", "on", "off":
	default:
		return Invalid("rerank", "rerank must be on or off (absent: the server's --rerank)")
	}
	if !ValidThresholdPolicy(s.ThresholdPolicy) {
		return Invalid("threshold_policy", "threshold policy %q: want bandit, fixed:default, fixed:<0..1> or off", Clip(s.ThresholdPolicy, 40))
	}
	if r := s.EmptyTurnReward; r != nil && (!finiteNumber(*r) || *r < 0 || *r > 1) {
		return Invalid("empty_turn_reward", "must be between 0 and 1 (absent: 0.4)")
	}
	if s.Version < 0 {
		return Invalid("version", "must not be negative")
	}
	return nil
}

func (d *DecaySettings) validate() error {
	switch d.Policy {
	case "", "linear", "fsrs":
	default:
		return Invalid("decay.policy", "unknown decay policy %q: want linear or fsrs", Clip(d.Policy, 40))
	}
	if t := d.Threshold; !finiteNumber(t) || t < 0 || t > MaxDecayThreshold {
		return Invalid("decay.threshold", "must be above 0 and at most %g (0 or absent: the server's --decay-threshold)", float64(MaxDecayThreshold))
	}
	if r := d.TargetRetention; !finiteNumber(r) || r < 0 || r >= 1 {
		return Invalid("decay.target_retention", "must be between 0 and 1, exclusive (0 or absent: the server's --target-retention)")
	}
	if c := d.DismissCooldownHours; c != nil && (!finiteNumber(*c) || *c < 0 || *c > MaxDismissCooldownHours) {
		return Invalid("decay.dismiss_cooldown_hours", "must be a number of hours from 0 (no cooldown) to %d (absent: the server's --dismiss-cooldown)", MaxDismissCooldownHours)
	}
	return nil
}

// IgnoreAfter returns the implicit-ignore timeout the settings set, or def when they set none.
func (s *Settings) IgnoreAfter(def time.Duration) time.Duration {
	if s == nil || !(s.ImplicitIgnoreAfterHours > 0) {
		return def
	}
	return hours(s.ImplicitIgnoreAfterHours)
}

// Retention returns the history retention the settings set, or def when they set none.
func (s *Settings) Retention(def time.Duration) time.Duration {
	if s == nil || !(s.HistoryRetentionDays > 0) {
		return def
	}
	return hours(24 * s.HistoryRetentionDays)
}

// DismissCooldown returns the dismissal cooldown the settings set (0: none), and whether
// they set one.
func (d *DecaySettings) DismissCooldown() (time.Duration, bool) {
	if d == nil || d.DismissCooldownHours == nil {
		return 0, false
	}
	return hours(*d.DismissCooldownHours), true
}

func hours(h float64) time.Duration { return time.Duration(h * float64(time.Hour)) }

func (w ScoreWeights) validate(field string) error {
	vs := []struct {
		name string
		v    float64
	}{{"relevance", w.Relevance}, {"confidence", w.Confidence}, {"freshness", w.Freshness}, {"proximity", w.Proximity}, {"importance", w.Importance}, {"novelty", w.Novelty}}
	sum := 0.0
	for _, f := range vs {
		if !finiteNumber(f.v) || f.v < 0 || f.v > 1 {
			return Invalid(field+"."+f.name, "a weight must be between 0 and 1")
		}
		sum += f.v
	}
	if sum == 0 {
		return Invalid(field, "at least one weight must be above 0")
	}
	return nil
}

func finiteNumber(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// SettingsChange is one entry of a namespace's settings audit trail.
type SettingsChange struct {
	Version int           `json:"version"` // the version the write produced
	At      time.Time     `json:"at"`
	By      string        `json:"by"` // the API key's name, or "migration"
	Changes []FieldChange `json:"changes"`
}

// FieldChange is one setting that changed: its JSON path and its values before and after
// (absent: null).
type FieldChange struct {
	Field string          `json:"field"`
	Old   json.RawMessage `json:"old"`
	New   json.RawMessage `json:"new"`
}

// DiffSettings lists the settings that differ between a and b by JSON path ("weights.search.
// relevance"), sorted by path; the version and who/when fields are not settings and are
// left out.
func DiffSettings(a, b *Settings) ([]FieldChange, error) {
	fa, err := flatSettings(a)
	if err != nil {
		return nil, err
	}
	fb, err := flatSettings(b)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []FieldChange
	for k := range keys {
		o, n := fa[k], fb[k]
		if string(o) == string(n) {
			continue
		}
		if o == nil {
			o = json.RawMessage("null")
		}
		if n == nil {
			n = json.RawMessage("null")
		}
		out = append(out, FieldChange{Field: k, Old: o, New: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out, nil
}

// flatSettings maps each leaf of s's JSON to its dotted path.
func flatSettings(s *Settings) (map[string]json.RawMessage, error) {
	if s == nil {
		s = &Settings{}
	}
	c := *s
	c.Version, c.UpdatedAt, c.UpdatedBy = 0, time.Time{}, ""
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	delete(tree, "version")
	out := map[string]json.RawMessage{}
	var walk func(prefix string, v any) error
	walk = func(prefix string, v any) error {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, sub := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if err := walk(p, sub); err != nil {
					return err
				}
			}
			return nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		out[prefix] = raw
		return nil
	}
	if err := walk("", tree); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	delete(out, "")
	return out, nil
}
