package decay

import (
	"time"

	"github.com/salience-ai/salience/models"
)

// Policy is a decay policy: it moves a memory's schedule on engagement and says when the
// memory is due for resurfacing. Policies only read and write m.Schedule and read the
// memory's other fields; engagement rules (package engagement) own the counters.
type Policy interface {
	// Name is the configuration name of the policy ("linear" or "fsrs").
	Name() string
	// OnEvent updates m.Schedule for an engagement event at now. Unknown events change
	// nothing. A dismissal sets a cooldown: the memory is not due again before now + Cooldown.
	OnEvent(m *models.Memory, ev models.EventType, now time.Time)
	// Due reports whether m is due at now (exactly when now ≥ NextDue(m)) and a score of how
	// overdue it is: higher first, comparable between memories of one policy only.
	Due(m *models.Memory, now time.Time) (due bool, score float64)
	// NextDue is the time m becomes due, never before its cooldown ends.
	NextDue(m *models.Memory) time.Time
}

// Policy names for configuration.
const (
	PolicyLinear = "linear"
	PolicyFSRS   = "fsrs"
	// DefaultPolicy is used when a namespace names none.
	DefaultPolicy = PolicyFSRS
)

// Params configure a policy; zero fields take the defaults.
type Params struct {
	Threshold       float64       // linear: due when the decay score reaches it (0.7)
	TargetRetention float64       // fsrs: due when retrievability falls below it (0.9)
	Weights         *Weights      // fsrs: nil = DefaultWeights
	Cooldown        time.Duration // both: a dismissed memory stays away this long (7 days); < 0 = none
	MaxInterval     time.Duration // fsrs: cap on the gap between reviews (100 years)
}

// PolicyByName returns the policy configured by name: "linear" or "fsrs" ("" means
// DefaultPolicy). At most one Params may be given. An unknown name is EINVALID.
func PolicyByName(name string, params ...Params) (Policy, error) {
	var p Params
	switch len(params) {
	case 0:
	case 1:
		p = params[0]
	default:
		return nil, models.Invalid("decay_policy", "at most one set of decay parameters")
	}
	if name == "" {
		name = DefaultPolicy
	}
	switch name {
	case PolicyLinear:
		l := Linear(p.Threshold)
		if p.Cooldown != 0 {
			l.Cooldown = p.Cooldown
		}
		return l, nil
	case PolicyFSRS:
		f := NewFSRS()
		if p.Weights != nil {
			f.W = *p.Weights
		}
		if p.TargetRetention != 0 {
			if !(p.TargetRetention > 0 && p.TargetRetention < 1) {
				return nil, models.Invalid("target_retention", "target retention must be between 0 and 1, exclusive")
			}
			f.TargetRetention = p.TargetRetention
		}
		if p.Cooldown != 0 {
			f.Cooldown = p.Cooldown
		}
		if p.MaxInterval > 0 {
			f.MaxInterval = p.MaxInterval
		}
		return f, nil
	}
	return nil, models.Invalid("decay_policy", "unknown decay policy %q (linear or fsrs)", name)
}

// GradeFor maps an engagement event to an FSRS grade: helpful→Easy, used→Good,
// ignored→Hard, dismissed→Again (docs/formulas.md#fsrs-6). Unknown events map to 0, which no
// policy acts on.
func GradeFor(ev models.EventType) Grade {
	switch ev {
	case models.EventHelpful:
		return Easy
	case models.EventUsed:
		return Good
	case models.EventIgnored:
		return Hard
	case models.EventDismissed:
		return Again
	}
	return 0
}

// startCooldown keeps a dismissed memory away until now + d. In FSRS a lapse comes back
// sooner; a dismissed memory must not, so the cooldown bounds Due from below.
func startCooldown(s *models.Schedule, now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	if until := now.Add(d); until.After(s.CooldownTo) {
		s.CooldownTo = until
	}
	if s.Due.Before(s.CooldownTo) {
		s.Due = s.CooldownTo
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Name is "fsrs".
func (f *FSRS) Name() string { return PolicyFSRS }

// OnEvent reviews m with GradeFor(ev) at now. The first event is the memory's first review
// (S0 and D0 of its grade): a schedule comes from real reviews, not from the memory being
// stored. A dismissal also starts the cooldown.
func (f *FSRS) OnEvent(m *models.Memory, ev models.EventType, now time.Time) {
	g := GradeFor(ev)
	if g == 0 {
		return
	}
	s := m.Schedule
	if s.Reps <= 0 {
		s = models.Schedule{CooldownTo: m.Schedule.CooldownTo}
	}
	s = f.Review(s, g, now)
	if ev == models.EventDismissed {
		startCooldown(&s, now, f.cooldown())
	}
	m.Schedule = s
}

// schedule returns m's schedule, or for a memory never reviewed the prior curve of a Good
// review at its last use (a memory used under the linear policy) or else at its creation.
// Only Resurface's Important memories are queued on that prior; the rest need real reviews.
func (f *FSRS) schedule(m *models.Memory) models.Schedule {
	if m.Schedule.Reps > 0 {
		return m.Schedule
	}
	at := m.CreatedAt
	if m.LastUsed.After(at) {
		at = m.LastUsed
	}
	return f.Review(models.Schedule{CooldownTo: m.Schedule.CooldownTo}, Good, at)
}

// NextDue is LastReview + I(TargetRetention, S) (recomputed, so a changed target applies to
// every memory at once), never before CooldownTo. A memory never reviewed is due on the prior
// curve: about 2.3 days after CreatedAt with the defaults.
func (f *FSRS) NextDue(m *models.Memory) time.Time {
	s := f.schedule(m)
	return later(s.LastReview.Add(f.intervalDuration(s.Stability)), s.CooldownTo)
}

// Due reports whether now ≥ NextDue(m); the score is 1 − R(now): the more forgotten, the
// sooner it should come back.
func (f *FSRS) Due(m *models.Memory, now time.Time) (bool, float64) {
	s := f.schedule(m)
	r := f.Retrievability(days(now.Sub(s.LastReview)), s.Stability)
	return !now.Before(f.NextDue(m)), 1 - r
}

// LinearThreshold is the source design's resurfacing threshold of the linear policy.
const LinearThreshold = 0.7

// LinearPolicy is the source design's decay: score = days since last use / (usage count + 1),
// due when the score reaches Threshold, i.e. Threshold·(n+1) days after the last use (or
// after creation for a memory never used). It is stateless apart from the cooldown: Due and
// NextDue read UsageCount, LastUsed and CreatedAt.
type LinearPolicy struct {
	Threshold float64
	Cooldown  time.Duration // zero = DefaultCooldown; negative = none
}

// Linear returns the linear policy with the given threshold (≤ 0 means LinearThreshold).
func Linear(threshold float64) *LinearPolicy {
	if !(threshold > 0) {
		threshold = LinearThreshold
	}
	return &LinearPolicy{Threshold: threshold, Cooldown: DefaultCooldown}
}

func (l *LinearPolicy) threshold() float64 {
	if !(l.Threshold > 0) {
		return LinearThreshold
	}
	return l.Threshold
}

// Name is "linear".
func (l *LinearPolicy) Name() string { return PolicyLinear }

// OnEvent starts the cooldown on a dismissal and refreshes m.Schedule.Due as a cache of
// NextDue for stores that index it. Call it after engagement has updated UsageCount and
// LastUsed, or the cached Due lags one event behind (Due and NextDue never read the cache).
func (l *LinearPolicy) OnEvent(m *models.Memory, ev models.EventType, now time.Time) {
	if GradeFor(ev) == 0 {
		return
	}
	if ev == models.EventDismissed {
		cd := l.Cooldown
		if cd == 0 {
			cd = DefaultCooldown
		}
		startCooldown(&m.Schedule, now, cd)
	}
	m.Schedule.Due = l.NextDue(m)
}

func linearBase(m *models.Memory) time.Time {
	if m.LastUsed.IsZero() {
		return m.CreatedAt
	}
	return m.LastUsed
}

// NextDue is LastUsed (CreatedAt when never used) + Threshold·(UsageCount+1) days, never
// before the cooldown ends.
func (l *LinearPolicy) NextDue(m *models.Memory) time.Time {
	n := float64(max(m.UsageCount, 0) + 1)
	return later(linearBase(m).Add(fromDays(l.threshold()*n)), m.Schedule.CooldownTo)
}

// Due reports whether now ≥ NextDue(m); the score is the source's decay score,
// days since last use / (usage count + 1).
func (l *LinearPolicy) Due(m *models.Memory, now time.Time) (bool, float64) {
	score := days(now.Sub(linearBase(m))) / float64(max(m.UsageCount, 0)+1)
	return !now.Before(l.NextDue(m)), score
}
