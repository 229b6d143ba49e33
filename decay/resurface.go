package decay

import (
	"math"
	"time"

	"github.com/salience-ai/salience/models"
)

// MinTriggerMatches is how many distinct context concepts must match a queued memory's
// triggers or concepts before it joins ambient recall (docs/design.md#candidates): one shared word is a
// coincidence, two are a topic.
const MinTriggerMatches = 2

// TriggerMatches counts the distinct context concepts that equal one of the memory's
// triggers or concepts, all compared after models.NormalizeConcept; empty names never match.
func TriggerMatches(m *models.Memory, context []string) int {
	if m == nil || len(context) == 0 {
		return 0
	}
	own := make(map[string]struct{}, len(m.Triggers)+len(m.Concepts))
	for _, list := range [][]string{m.Triggers, m.Concepts} {
		for _, c := range list {
			if n := models.NormalizeConcept(c); n != "" {
				own[n] = struct{}{}
			}
		}
	}
	seen := make(map[string]struct{}, len(context))
	for _, c := range context {
		n := models.NormalizeConcept(c)
		if _, ok := own[n]; !ok {
			continue
		}
		seen[n] = struct{}{}
	}
	return len(seen)
}

// Resurfacing is for what earned it. Spaced repetition over everything ever said brings back
// small talk; a memory enters the resurfacing queue only when it is due under its policy and
// either was used (Earned: its schedule then comes from those real reviews) or is marked
// important (Important). A conversation turn that was only said is never queued.
const (
	// ImportantAt is the importance (0..1, set by the client) from which a memory is worth
	// bringing back before any use: a client's "remember this".
	ImportantAt = 0.7
	// KindImportance is the importance a fact, anchor, insight or crystal counts with when its
	// own is lower: such a kind is a statement kept on purpose, not a passing turn.
	KindImportance = 0.5
	// ImportanceWeight is how many uses an importance of 1 is worth in Worth: a declaration is
	// a prior, a use is evidence, so one use outweighs any importance.
	ImportanceWeight = 0.25
)

// ImportantKind reports whether memories of kind k are kept on purpose: fact, anchor,
// insight, and crystal (a distilled insight).
func ImportantKind(k models.Kind) bool {
	switch k {
	case models.KindFact, models.KindAnchor, models.KindInsight, models.KindCrystal:
		return true
	}
	return false
}

// Important reports whether m is marked important: importance ≥ ImportantAt or an important
// kind. The learned p_use is not part of it: it is a function of the turn's context, which
// the decay scan does not have.
func Important(m *models.Memory) bool {
	return m.Importance >= ImportantAt || ImportantKind(m.Kind)
}

// Earned reports whether m was used or found helpful at least once.
func Earned(m *models.Memory) bool { return m.UsageCount > 0 }

// Worth is how useful m has been or is expected to be:
//
//	Worth = Confidence × (UsageCount + ImportanceWeight × max(Importance, KindImportance if ImportantKind))
//
// Uses are the evidence, importance the prior, and confidence (raised by uses, lowered by
// ignores and dismissals) scales both.
func Worth(m *models.Memory) float64 {
	imp := models.Clamp01(m.Importance)
	if ImportantKind(m.Kind) {
		imp = max(imp, KindImportance)
	}
	return models.Clamp01(m.Confidence) * (float64(max(m.UsageCount, 0)) + ImportanceWeight*imp)
}

// Resurface decides whether m belongs in the resurfacing queue at now under pol, and with
// which value (the queue's order, highest first). m qualifies when it may be volunteered
// (models.Memory.Resurfaceable), is Earned or Important, and is due under pol. Its value is
//
//	value = Worth(m) × forgotten,  forgotten = pol's due score: 1 − R(now) for fsrs (R the
//	FSRS retrievability since the last review), days since last use / (uses + 1) for linear
//
// so among due memories the one most useful and most forgotten comes back first. due is
// pol.NextDue(m).
func Resurface(pol Policy, m *models.Memory, now time.Time) (value float64, due time.Time, ok bool) {
	if m == nil || !m.Resurfaceable(now) || !(Earned(m) || Important(m)) {
		return 0, time.Time{}, false
	}
	isDue, forgotten := pol.Due(m, now)
	value = Worth(m) * forgotten
	if !isDue || value != value || math.IsInf(value, 0) {
		return 0, time.Time{}, false
	}
	return value, pol.NextDue(m), true
}
