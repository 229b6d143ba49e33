// Package experiment holds the pure half of A/B experiments: the statistics of
// docs/formulas.md#experiment-statistics over the tallies a store counts from the engagement log, the report they make, and its
// renderings (JSON, CSV, terminal text, an HTML page with inline SVG plots, PNG plots).
package experiment

import "time"

// Tally is what the store counts for one variant from the engagement log, as of a time.
type Tally struct {
	Variant       string     `json:"variant"`
	Share         float64    `json:"share"`         // planned traffic share (SRM check)
	Conversations int        `json:"conversations"` // distinct conversations assigned and seen
	Turns         int        `json:"turns"`         // recall turns
	EmptyTurns    int        `json:"empty_turns"`   // of Turns, those that surfaced nothing
	Surfaced      int        `json:"surfaced"`      // surfacings
	Used          int        `json:"used"`
	Helpful       int        `json:"helpful"`
	Ignored       int        `json:"ignored"` // explicit and implicit
	Dismissed     int        `json:"dismissed"`
	LatenciesMS   []float64  `json:"-"`    // recall latency of each turn, ms (any order)
	Days          []DayTally `json:"days"` // per UTC day, ascending
}

// DayTally is one UTC day of a variant (for precision over time).
type DayTally struct {
	Day        time.Time `json:"day"` // midnight UTC
	Turns      int       `json:"turns"`
	EmptyTurns int       `json:"empty_turns"`
	Surfaced   int       `json:"surfaced"`
	Used       int       `json:"used"`
	Helpful    int       `json:"helpful"`
	Ignored    int       `json:"ignored"`
	Dismissed  int       `json:"dismissed"`
}

// Input is everything a report is computed from. Variants[0] is the control.
type Input struct {
	ExperimentID string
	Name         string
	Status       string // "running" or "stopped"
	CreatedAt    time.Time
	StoppedAt    time.Time // zero while running
	AsOf         time.Time // the report's time (now, or a snapshot's date)
	// PrimaryMetric is what the comparisons rank by (models.Metric…); "" is the default,
	// reward per turn.
	PrimaryMetric string
	Variants      []Tally
}

// Report is the JSON report; its json field names are the API. A statistic that cannot be
// computed (nothing surfaced, no latencies, a control with zero precision) is a nil pointer,
// so it is omitted from the JSON rather than written as NaN.
type Report struct {
	ExperimentID string     `json:"experiment_id"`
	Name         string     `json:"name"`
	Status       string     `json:"status"`
	CreatedAt    time.Time  `json:"created_at"`
	StoppedAt    *time.Time `json:"stopped_at,omitempty"`
	AsOf         time.Time  `json:"as_of"`
	Control      string     `json:"control"` // the control variant's name (Variants[0])
	// PrimaryMetric is the metric the comparisons and their verdicts rank by:
	// reward_per_turn, used_per_turn, precision or dismissal_rate (lower is better).
	PrimaryMetric string `json:"primary_metric"`
	// Variants are in the order of the Input, the control first.
	Variants []VariantReport `json:"variants"`
	// Comparisons are each treatment against the control, in variant order.
	Comparisons []Comparison `json:"comparisons"`
	// SRM is the sample-ratio-mismatch check over all variants' conversations; nil with fewer
	// than two variants, no conversations, or a variant whose planned share is not positive.
	SRM     *SRM    `json:"srm,omitempty"`
	Methods Methods `json:"methods"`
}

// Interval is a confidence (or credible) interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// VariantReport is one variant's counts and rates.
type VariantReport struct {
	Variant       string  `json:"variant"`
	Share         float64 `json:"share"`
	Conversations int     `json:"conversations"`
	Turns         int     `json:"turns"`
	Surfaced      int     `json:"surfaced"`
	Used          int     `json:"used"`
	Helpful       int     `json:"helpful"`
	Ignored       int     `json:"ignored"`
	Dismissed     int     `json:"dismissed"`
	// Precision = (used + helpful) / surfaced, with its Wilson 95 % interval.
	Precision   *float64  `json:"precision,omitempty"`
	PrecisionCI *Interval `json:"precision_ci,omitempty"`
	// DismissalRate = dismissed / surfaced, with its Wilson 95 % interval.
	DismissalRate   *float64  `json:"dismissal_rate,omitempty"`
	DismissalRateCI *Interval `json:"dismissal_rate_ci,omitempty"`
	// What a bot gains per turn (nil without turns), each with a normal 95 % interval
	// (Methods.PerTurn): (used + helpful) / turns, surfaced / turns, and the bandit's reward
	// averaged over turns (empty turns earn 0.4).
	EmptyTurns        int         `json:"empty_turns"`
	UsedPerTurn       *float64    `json:"used_per_turn,omitempty"`
	UsedPerTurnCI     *Interval   `json:"used_per_turn_ci,omitempty"`
	SurfacedPerTurn   *float64    `json:"surfaced_per_turn,omitempty"`
	SurfacedPerTurnCI *Interval   `json:"surfaced_per_turn_ci,omitempty"`
	RewardPerTurn     *float64    `json:"reward_per_turn,omitempty"`
	RewardPerTurnCI   *Interval   `json:"reward_per_turn_ci,omitempty"`
	LatencyP50MS      *float64    `json:"latency_p50_ms,omitempty"`
	LatencyP95MS      *float64    `json:"latency_p95_ms,omitempty"`
	Days              []DayReport `json:"days"`
}

// DayReport is one UTC day of a variant: its counts and precision with a Wilson 95 % band.
type DayReport struct {
	Day         time.Time `json:"day"`
	Turns       int       `json:"turns"`
	Surfaced    int       `json:"surfaced"`
	Used        int       `json:"used"`
	Helpful     int       `json:"helpful"`
	Ignored     int       `json:"ignored"`
	Dismissed   int       `json:"dismissed"`
	Precision   *float64  `json:"precision,omitempty"`
	PrecisionCI *Interval `json:"precision_ci,omitempty"`
}

// Comparison is one treatment against the control on the report's primary metric.
type Comparison struct {
	Variant string `json:"variant"`
	Control string `json:"control"`
	// Metric is the primary metric every number below is of.
	Metric string `json:"metric"`
	// Difference is metric(variant) − metric(control) with its 95 % (unpooled Wald)
	// interval; Z and P are the pooled two-proportion z-test for a rate, the Wald z-test of
	// the difference for a per-turn mean. For dismissal_rate a negative difference is the
	// better; ChanceToWin, ProbBeatControl and the expected losses already count it so.
	Difference   *float64  `json:"difference,omitempty"`
	DifferenceCI *Interval `json:"difference_ci,omitempty"`
	Z            *float64  `json:"z,omitempty"`
	P            *float64  `json:"p,omitempty"`
	// RelativeLift = difference / precision(control) with its delta-method standard error
	// and two-sided p; ChanceToWin = Φ(lift / SE), the chance to win on the relative lift.
	RelativeLift   *float64 `json:"relative_lift,omitempty"`
	RelativeLiftSE *float64 `json:"relative_lift_se,omitempty"`
	RelativeLiftP  *float64 `json:"relative_lift_p,omitempty"`
	ChanceToWin    *float64 `json:"chance_to_win,omitempty"`
	// ProbBeatControl is the chance the variant is the better on the absolute difference:
	// for a rate under Beta(1, 1) priors, for a per-turn mean by the normal approximation.
	ProbBeatControl *float64 `json:"prob_beat_control,omitempty"`
	// ExpectedLoss… are the expected metric lost by choosing that arm if the other is
	// better (normal approximation of the difference).
	ExpectedLossVariant *float64 `json:"expected_loss_variant,omitempty"`
	ExpectedLossControl *float64 `json:"expected_loss_control,omitempty"`
	// The always-valid (mixture SPRT) test on the relative lift, as docs/formulas.md#sequential-test runs
	// it: SequentialP is the minimum of its p-value over the daily looks and now, so reading
	// the report every day does not inflate false wins; SequentialHalfWidth and
	// SequentialLiftCI (lift ± half-width) are at the report's data.
	SequentialP         *float64  `json:"sequential_p,omitempty"`
	SequentialHalfWidth *float64  `json:"sequential_half_width,omitempty"`
	SequentialLiftCI    *Interval `json:"sequential_lift_ci,omitempty"`
	// Verdict is plain words; Outcome its machine-readable kind: "better", "worse",
	// "no_difference_yet", "not_enough_data" or "sample_ratio_mismatch". A variant is only
	// "better" or "worse" when the always-valid p is below α and the difference's interval
	// excludes zero; a noisy difference is never called a win.
	Outcome string `json:"outcome"`
	Verdict string `json:"verdict"`
}

// SRM is the sample-ratio-mismatch check: observed conversations against planned shares.
type SRM struct {
	Observed  []int     `json:"observed"`
	Expected  []float64 `json:"expected"`
	ChiSquare float64   `json:"chi_square"`
	DF        int       `json:"df"`
	P         float64   `json:"p"`
	// Mismatch is P below SRMAlpha: the assignment is not doing what was planned, and the
	// comparisons are not to be trusted.
	Mismatch bool `json:"mismatch"`
}

// Methods names the methods behind the numbers, so a reader knows which "chance" is which.
type Methods struct {
	Confidence      float64 `json:"confidence"` // 0.95
	Precision       string  `json:"precision"`
	DismissalRate   string  `json:"dismissal_rate"`
	PerTurn         string  `json:"per_turn"` // used and surfaced per turn
	RewardPerTurn   string  `json:"reward_per_turn"`
	PrimaryMetric   string  `json:"primary_metric"` // what ranks the variants, in words
	Latency         string  `json:"latency"`
	Difference      string  `json:"difference"`
	Prior           string  `json:"prior"`             // "Beta(1,1)"
	ChanceToWin     string  `json:"chance_to_win"`     // on the relative lift
	ProbBeatControl string  `json:"prob_beat_control"` // on the absolute difference
	ExpectedLoss    string  `json:"expected_loss"`     // normal approximation
	Sequential      string  `json:"sequential"`
	SRM             string  `json:"srm"`
	SRMAlpha        float64 `json:"srm_alpha"`
}
