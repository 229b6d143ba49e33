// Package decay holds the spaced-repetition arithmetic of Salience (docs/design.md#decay-and-jobs): the FSRS-6
// memory model, the linear policy of the source design, the edge-decay and dismissal-cooldown
// rules the jobs apply, and the trigger match that lets queued memories back into ambient
// recall. Everything here is pure: functions take the time as an argument and never read the
// clock.
package decay

import (
	"math"
	"time"

	"github.com/salience-ai/salience/models"
)

// Weights are the 21 parameters w0…w20 of FSRS-6.
type Weights [21]float64

// DefaultWeights are the FSRS-6 defaults: medians of per-user fits over about 10,000 Anki
// collections (docs/formulas.md#fsrs-6). For bot memories they give the shape of decay and
// reinforcement, not a fitted model.
var DefaultWeights = Weights{
	0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
	1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
}

// Grade is an FSRS review grade.
type Grade int

// The four FSRS grades.
const (
	Again Grade = 1
	Hard  Grade = 2
	Good  Grade = 3
	Easy  Grade = 4
)

// clamp maps any value into the four grades, so arithmetic never sees an out-of-range grade.
func (g Grade) clamp() Grade { return Grade(min(max(int(g), int(Again)), int(Easy))) }

// Clamps of the FSRS-6 state (docs/formulas.md#fsrs-6).
const (
	MinStability  = 0.001
	MaxStability  = 36500.0
	MinDifficulty = 1.0
	MaxDifficulty = 10.0
)

// Defaults of the FSRS policy.
const (
	// DefaultTargetRetention: a memory is due when its retrievability falls below this.
	DefaultTargetRetention = 0.9
	// DefaultCooldown: how long a dismissed memory stays out of the resurfacing queue.
	DefaultCooldown = 7 * 24 * time.Hour
	// DefaultMaxInterval caps the gap between reviews at the stability clamp, 100 years; it
	// also keeps day counts inside time.Duration's range.
	DefaultMaxInterval = time.Duration(MaxStability) * 24 * time.Hour
)

// Day is the unit of FSRS time.
const Day = 24 * time.Hour

// FSRS is the FSRS-6 memory model with the settings of one namespace. The zero value is
// usable: zero W means DefaultWeights, zero TargetRetention means 0.9, zero Cooldown means
// 7 days (negative: no cooldown), zero MaxInterval means DefaultMaxInterval.
//
// Time is measured in fractional days. FSRS itself counts whole calendar days; bot memories
// are reviewed many times a day, so we keep the fraction (no rounding) for retrievability and
// intervals, and take any review less than one day after the previous one as the "same day"
// branch, which is what FSRS does for an elapsed whole-day count of 0. The test
// vectors of docs/formulas.md#fsrs-6 use whole days and are reproduced exactly.
type FSRS struct {
	W               Weights
	TargetRetention float64
	Cooldown        time.Duration
	MaxInterval     time.Duration
}

// NewFSRS returns an FSRS policy with the default weights and settings.
func NewFSRS() *FSRS {
	return &FSRS{W: DefaultWeights, TargetRetention: DefaultTargetRetention, Cooldown: DefaultCooldown, MaxInterval: DefaultMaxInterval}
}

func (f *FSRS) w() *Weights {
	if f.W == (Weights{}) {
		return &DefaultWeights
	}
	return &f.W
}

func (f *FSRS) target() float64 {
	if !(f.TargetRetention > 0 && f.TargetRetention < 1) {
		return DefaultTargetRetention
	}
	return f.TargetRetention
}

func (f *FSRS) cooldown() time.Duration {
	switch {
	case f.Cooldown == 0:
		return DefaultCooldown
	case f.Cooldown < 0:
		return 0
	}
	return f.Cooldown
}

func (f *FSRS) maxIntervalDays() float64 {
	if f.MaxInterval <= 0 {
		return MaxStability
	}
	return f.MaxInterval.Hours() / 24
}

// Factor returns F = 0.9^(−1/w20) − 1, chosen so that R(S, S) = 0.9.
func (f *FSRS) Factor() float64 {
	w := f.w()
	return math.Pow(0.9, -1/w[20]) - 1
}

// Retrievability is the forgetting curve R(t, S) = (1 + F·t/S)^(−w20): the probability of
// recall t days after a review of a memory of stability S. Negative t counts as 0.
func (f *FSRS) Retrievability(elapsedDays, stability float64) float64 {
	w := f.w()
	t := max(elapsedDays, 0)
	s := clampStability(stability)
	return math.Pow(1+f.Factor()*t/s, -w[20])
}

// Interval is I(r, S) = (S/F)·(r^(−1/w20) − 1): the days after which retrievability falls to
// r; I(0.9, S) = S. r must be in (0, 1).
func (f *FSRS) Interval(retention, stability float64) float64 {
	w := f.w()
	return stability / f.Factor() * (math.Pow(retention, -1/w[20]) - 1)
}

// InitStability is S0(G) = w[G−1], at least 0.1.
func (f *FSRS) InitStability(g Grade) float64 {
	return max(f.w()[g.clamp()-1], 0.1)
}

// InitDifficulty is D0(G) = w4 − e^(w5·(G−1)) + 1, clamped to [1, 10].
func (f *FSRS) InitDifficulty(g Grade) float64 {
	return clampDifficulty(f.initDifficultyRaw(g.clamp()))
}

// initDifficultyRaw is D0 without the clamp; the mean reversion of NextDifficulty uses the
// unclamped D0(Easy), which is negative with the default weights (that is what reproduces the
// reference vectors: 2.118104 → 2.111214 after a Good).
func (f *FSRS) initDifficultyRaw(g Grade) float64 {
	w := f.w()
	return w[4] - math.Exp(w[5]*float64(g-1)) + 1
}

// NextDifficulty is D″ = w7·D0(Easy) + (1−w7)·D′ with D′ = D + ΔD·(10−D)/9 and
// ΔD = −w6·(G−3) (linear damping towards 10, then mean reversion), clamped to [1, 10].
func (f *FSRS) NextDifficulty(d float64, g Grade) float64 {
	w := f.w()
	g = g.clamp()
	d = clampDifficulty(d)
	delta := -w[6] * float64(g-3)
	next := d + delta*(10-d)/9
	next = w[7]*f.initDifficultyRaw(Easy) + (1-w[7])*next
	return clampDifficulty(next)
}

// NextStability returns the stability after a review with grade g of a memory of stability s
// and difficulty d whose retrievability at the review was r, elapsedDays after the previous
// review. Reviews less than a day apart take the same-day branch
// S′ = S·e^(w17·(G−3+w18))·S^(−w19) (the multiplier is at least 1 when G ≥ 2); otherwise a
// lapse (Again) takes min(w11·D^(−w12)·((S+1)^w13 − 1)·e^(w14·(1−R)), S/e^(w17·w18)) and a
// success S·(1 + e^w8·(11−D)·S^(−w9)·(e^(w10·(1−R)) − 1)·h·b) with h = w15 for Hard and
// b = w16 for Easy. The result is clamped to [0.001, 36500].
func (f *FSRS) NextStability(s, d, r float64, g Grade, elapsedDays float64) float64 {
	w := f.w()
	g = g.clamp()
	s = clampStability(s)
	d = clampDifficulty(d)
	var next float64
	switch {
	case elapsedDays < 1:
		inc := math.Exp(w[17]*(float64(g)-3+w[18])) * math.Pow(s, -w[19])
		if g >= Hard {
			inc = max(inc, 1)
		}
		next = s * inc
	case g == Again:
		lapse := w[11] * math.Pow(d, -w[12]) * (math.Pow(s+1, w[13]) - 1) * math.Exp(w[14]*(1-r))
		next = min(lapse, s/math.Exp(w[17]*w[18]))
	default:
		h, b := 1.0, 1.0
		if g == Hard {
			h = w[15]
		}
		if g == Easy {
			b = w[16]
		}
		next = s * (1 + math.Exp(w[8])*(11-d)*math.Pow(s, -w[9])*(math.Exp(w[10]*(1-r))-1)*h*b)
	}
	return clampStability(next)
}

// Review applies one review with grade g at now to a schedule and returns the new schedule.
// With Reps == 0 it is the first review (S0, D0). Otherwise t is the fractional number of
// days since LastReview; a review dated before LastReview (a late event) counts as a
// same-day review at LastReview. Reps grows by one; Lapses by one for an Again after the
// first review. Due becomes the review time + I(TargetRetention, S′) (at most MaxInterval),
// and never earlier than CooldownTo, which Review keeps as it is.
func (f *FSRS) Review(state models.Schedule, g Grade, now time.Time) models.Schedule {
	g = g.clamp()
	next := state
	at := now
	if state.Reps <= 0 {
		next.Stability = f.InitStability(g)
		next.Difficulty = f.InitDifficulty(g)
		next.Reps = 0
	} else {
		if at.Before(state.LastReview) {
			at = state.LastReview
		}
		t := days(at.Sub(state.LastReview))
		r := f.Retrievability(t, state.Stability)
		next.Stability = f.NextStability(state.Stability, state.Difficulty, r, g, t)
		next.Difficulty = f.NextDifficulty(state.Difficulty, g)
		if g == Again {
			next.Lapses++
		}
	}
	next.Reps++
	next.LastReview = at
	next.Due = at.Add(f.intervalDuration(next.Stability))
	if next.Due.Before(next.CooldownTo) {
		next.Due = next.CooldownTo
	}
	return next
}

// intervalDuration is I(target, S) as a duration, capped at MaxInterval.
func (f *FSRS) intervalDuration(stability float64) time.Duration {
	d := min(f.Interval(f.target(), stability), f.maxIntervalDays())
	return fromDays(d)
}

func clampStability(s float64) float64 {
	if s != s { // NaN: a corrupt state restarts from the smallest stability
		return MinStability
	}
	return min(max(s, MinStability), MaxStability)
}

func clampDifficulty(d float64) float64 {
	if d != d {
		return MaxDifficulty
	}
	return min(max(d, MinDifficulty), MaxDifficulty)
}

// days converts a duration to fractional days.
func days(d time.Duration) float64 { return d.Hours() / 24 }

// fromDays converts fractional days to a duration, saturating instead of overflowing.
func fromDays(d float64) time.Duration {
	const maxDays = float64(math.MaxInt64) / float64(Day)
	switch {
	case d != d || d <= 0:
		return 0
	case d >= maxDays:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(d * float64(Day))) // round: 0.7·3 days is 2.1 days, not a nanosecond less
}
