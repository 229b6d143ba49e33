package models

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Experiment is an A/B experiment of a namespace (docs/design.md#experiments): variants, each a set of
// overrides of per-turn recall knobs and a share of the conversations. A namespace runs at
// most one experiment at a time, so a conversation is never in two and every surfacing
// carries at most one variant; a stopped experiment keeps its record and its report.
type Experiment struct {
	ID          string `json:"id"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Status is ExperimentRunning until stopped.
	Status string `json:"status"`
	// Variants: the first is the control, the rest are treatments; shares sum to 1.
	Variants []Variant `json:"variants"`
	// PrimaryMetric is what the report's headline and verdicts compare (a Metric…
	// constant); "" in a record stored before experiments declared one means the default.
	PrimaryMetric string    `json:"primary_metric,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	CreatedBy     string    `json:"created_by,omitempty"` // the API key's name
	StoppedAt     time.Time `json:"stopped_at,omitzero"`
}

// Experiment statuses.
const (
	ExperimentRunning = "running"
	ExperimentStopped = "stopped"
)

// Primary metrics an experiment may declare: what its report ranks the variants by.
// Reward per turn is the default because it is what the threshold bandit optimises and what
// a bot gains per turn: precision alone favours a variant that surfaces less.
const (
	MetricRewardPerTurn  = "reward_per_turn"
	MetricUsedPerTurn    = "used_per_turn"
	MetricPrecision      = "precision"
	MetricDismissalRate  = "dismissal_rate" // lower is better
	DefaultPrimaryMetric = MetricRewardPerTurn
)

// PrimaryMetrics lists the primary metrics, the default first.
var PrimaryMetrics = []string{MetricRewardPerTurn, MetricUsedPerTurn, MetricPrecision, MetricDismissalRate}

// ParsePrimaryMetric returns the primary metric s names: "" is the default, the others are
// spelled exactly as in PrimaryMetrics. ok is false for anything else.
func ParsePrimaryMetric(s string) (string, bool) {
	if s == "" {
		return DefaultPrimaryMetric, true
	}
	for _, m := range PrimaryMetrics {
		if s == m {
			return m, true
		}
	}
	return "", false
}

// Variant is one arm of an experiment.
type Variant struct {
	Name string `json:"name"`
	// Share is the fraction of conversations assigned to the variant, in (0, 1].
	Share     float64   `json:"share"`
	Overrides Overrides `json:"overrides"`
}

// Overrides are the per-turn knobs a variant may set (docs/design.md#experiments); a zero or absent field
// leaves the namespace's setting (or the default) in force. Learning state, decay policy
// and startup limits are the namespace's and cannot be overridden: an experiment compares
// how memories are chosen, not what is learned from them.
type Overrides struct {
	// Weights, FreshnessHalfLifeHours and Diversity mean what they mean in Settings.
	Weights                map[Mode]ScoreWeights `json:"weights,omitempty"`
	FreshnessHalfLifeHours float64               `json:"freshness_half_life_hours,omitempty"`
	Diversity              *float64              `json:"diversity,omitempty"`
	// RelevanceModel "off" ranks by the weighted score alone (the learned model's p_use is
	// still computed and recorded, but has no say); "on" or "" blends it in as usual.
	RelevanceModel string `json:"relevance_model,omitempty"`
	// ThresholdPolicy is bandit, fixed:default, fixed:<0..1> or off (the grammar of
	// predict.ParsePolicy); "" leaves the namespace's.
	ThresholdPolicy string `json:"threshold_policy,omitempty"`
	// Rerank is the LLM reranking policy, "on" or "off"; "" leaves the namespace's.
	Rerank string `json:"rerank,omitempty"`
}

// Experiment limits.
const (
	MaxVariants         = 10
	maxExperimentName   = 200
	maxDescription      = 2000
	shareSumTolerance   = 1e-9
	ExperimentKeyPrefix = "experiment-snapshot/"
)

var variantNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Validate checks an experiment before it is stored; errors are EINVALID naming the JSON
// field. At least two variants with unique names, each share in (0, 1], the shares summing
// to 1 within 1e-9.
func (e *Experiment) Validate() error {
	if err := ValidateNamespace(e.Namespace); err != nil {
		return err
	}
	if e.ID == "" || len(e.ID) > 64 {
		return Invalid("id", "id is required (at most 64 characters)")
	}
	if strings.TrimSpace(e.Name) == "" || len(e.Name) > maxExperimentName {
		return Invalid("name", "name is required (at most %d bytes)", maxExperimentName)
	}
	if len(e.Description) > maxDescription {
		return Invalid("description", "at most %d bytes", maxDescription)
	}
	switch e.Status {
	case ExperimentRunning, ExperimentStopped:
	default:
		return Invalid("status", "status must be running or stopped")
	}
	if _, ok := ParsePrimaryMetric(e.PrimaryMetric); !ok {
		return Invalid("primary_metric", "primary metric %q: want one of %s", Clip(e.PrimaryMetric, 40), strings.Join(PrimaryMetrics, ", "))
	}
	if len(e.Variants) < 2 || len(e.Variants) > MaxVariants {
		return Invalid("variants", "an experiment has 2 to %d variants: the control first, then the treatments", MaxVariants)
	}
	seen := map[string]bool{}
	sum := 0.0
	for i, v := range e.Variants {
		field := "variants[" + strconv.Itoa(i) + "]"
		if !variantNameRE.MatchString(v.Name) {
			return Invalid(field+".name", "a variant name is 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit")
		}
		if seen[v.Name] {
			return Invalid(field+".name", "variant name %q is used twice", v.Name)
		}
		seen[v.Name] = true
		if !finiteNumber(v.Share) || v.Share <= 0 || v.Share > 1 {
			return Invalid(field+".share", "a share is above 0 and at most 1")
		}
		sum += v.Share
		if err := v.Overrides.Validate(); err != nil {
			return WithFieldPrefix(err, field+".overrides.")
		}
	}
	if math.Abs(sum-1) > shareSumTolerance {
		return Invalid("variants", "the shares sum to %g: they must sum to 1", sum)
	}
	if e.CreatedAt.IsZero() {
		return Invalid("created_at", "created_at is required")
	}
	if e.Status == ExperimentStopped && e.StoppedAt.IsZero() {
		return Invalid("stopped_at", "a stopped experiment has stopped_at")
	}
	return nil
}

// Validate checks the overrides; errors are EINVALID naming the JSON field (relative to
// the overrides object).
func (o *Overrides) Validate() error {
	s := Settings{Weights: o.Weights, FreshnessHalfLifeHours: o.FreshnessHalfLifeHours, Diversity: o.Diversity, Rerank: o.Rerank}
	if err := s.Validate(); err != nil {
		return err
	}
	switch o.RelevanceModel {
	case "", "on", "off":
	default:
		return Invalid("relevance_model", "relevance_model must be on or off")
	}
	if !ValidThresholdPolicy(o.ThresholdPolicy) {
		return Invalid("threshold_policy", "threshold policy %q: want bandit, fixed:default, fixed:<0..1> or off", Clip(o.ThresholdPolicy, 40))
	}
	return nil
}

// ValidThresholdPolicy reports whether p is "" or a threshold policy predict.ParsePolicy
// accepts (bandit, fixed:default, fixed:<x> with 0 ≤ x ≤ 1, off). models cannot import
// predict; recall parses the policy with predict again, and a test there checks the two
// agree.
func ValidThresholdPolicy(p string) bool {
	switch p = strings.TrimSpace(p); p {
	case "", "bandit", "off", "fixed:default":
		return true
	}
	x, ok := strings.CutPrefix(p, "fixed:")
	if !ok {
		return false
	}
	_, ok = ParseFixedThreshold(x)
	return ok
}

// fixedThreshold is the grammar of x in fixed:<x>: a plain decimal number. strconv.ParseFloat
// alone also took 1e-400 (which rounds to 0), 0x1p-2, Inf and 1_0 spellings no reader expects
// of a threshold.
var fixedThreshold = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseFixedThreshold parses the x of a fixed:<x> threshold policy: a decimal number (digits,
// optionally a point and more digits) from 0 to 1. The one grammar of it, for predict and
// for the validation here.
func ParseFixedThreshold(x string) (float64, bool) {
	if !fixedThreshold.MatchString(x) {
		return 0, false
	}
	v, err := strconv.ParseFloat(x, 64)
	if err != nil || v < 0 || v > 1 {
		return 0, false
	}
	return v, true
}

// UpgradeThresholdPolicy respells a policy stored before fixed:<x> took decimals only: an x
// that strconv.ParseFloat read as a number in [0, 1] (fixed:1e-1, fixed:0x1p-2) becomes that
// number as a decimal, so settings and experiments written then still load and mean what
// they meant. Anything else comes back as it is.
func UpgradeThresholdPolicy(p string) string {
	x, ok := strings.CutPrefix(strings.TrimSpace(p), "fixed:")
	if !ok || ValidThresholdPolicy(p) {
		return p
	}
	v, err := strconv.ParseFloat(x, 64)
	if err != nil || v < 0 || v > 1 {
		return p
	}
	return "fixed:" + strconv.FormatFloat(v, 'f', -1, 64)
}

// VariantNames returns the experiment's variant names in order, the control first.
func (e *Experiment) VariantNames() []string {
	out := make([]string, len(e.Variants))
	for i, v := range e.Variants {
		out[i] = v.Name
	}
	return out
}

// Variant returns the named variant, or nil.
func (e *Experiment) Variant(name string) *Variant {
	for i := range e.Variants {
		if e.Variants[i].Name == name {
			return &e.Variants[i]
		}
	}
	return nil
}

// SnapshotKey is the store state key of an experiment's report snapshot of one UTC day
// (report-snapshot job); the date sorts as text.
func SnapshotKey(ns, id string, day time.Time) string {
	return ExperimentKeyPrefix + ns + "/" + id + "/" + day.UTC().Format(time.DateOnly)
}

// VariantTally is what a store counts of one variant of an experiment from the surfacing
// log, as of a time (experiment.Tally is built from it).
type VariantTally struct {
	Variant       string
	Conversations int // distinct conversations with an ambient turn in the variant
	Turns         int // ambient turns (threshold decisions), empty ones included
	EmptyTurns    int // of Turns, those that surfaced nothing
	Surfaced      int
	Used          int // each surfacing's outcome, known by the as-of day
	Helpful       int
	Ignored       int // explicit and implicit
	Dismissed     int
	LatenciesMS   []float64 // one per turn, to a tenth of a millisecond
	Days          []DayTally
}

// DayTally is one UTC day of a variant: turns and surfacings made that day and their
// outcomes.
type DayTally struct {
	Day                                                            time.Time // midnight UTC
	Turns, EmptyTurns, Surfaced, Used, Helpful, Ignored, Dismissed int
}

// SortDays orders days ascending.
func SortDays(days []DayTally) {
	sort.Slice(days, func(i, j int) bool { return days[i].Day.Before(days[j].Day) })
}

// ExperimentStore is the part of the store contract that keeps experiments (Store embeds
// it). Experiments are small and few; reading them is not on recall's hot path (the
// experiment service caches the running one).
type ExperimentStore interface {
	// CreateExperiment stores a new, valid experiment (EINVALID otherwise). ECONFLICT when
	// its id exists, or when it is running and the namespace already runs another.
	CreateExperiment(ctx context.Context, e *Experiment) error
	// GetExperiment returns one experiment; ENOTFOUND when missing.
	GetExperiment(ctx context.Context, ns, id string) (*Experiment, error)
	// FindExperiments lists a namespace's experiments, newest first (CreatedAt, then id
	// descending).
	FindExperiments(ctx context.Context, ns string) ([]*Experiment, error)
	// StopExperiment marks a running experiment stopped at at and returns it; stopping a
	// stopped one changes nothing and returns it as it is. ENOTFOUND when missing.
	StopExperiment(ctx context.Context, ns, id string, at time.Time) (*Experiment, error)
	// TallyExperiment counts, per variant of the experiment, the ambient turns and
	// surfacings recorded with its id and the outcome each surfacing has, as the rule of
	// tally.go says (Tallies.Report): every count known on a UTC day begun before asOf, an
	// outcome under its surfacing's day from the day it was decided. Latencies are in tenths
	// of a millisecond (LatencyTenths). Variants are in the experiment's order (the control
	// first), every variant present even with nothing counted; days ascending, only days
	// with something counted. ENOTFOUND when the experiment is missing.
	TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*VariantTally, error)
}
