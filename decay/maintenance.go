package decay

import (
	"time"

	"github.com/salience-ai/salience/models"
)

// Edge decay (docs/design.md#decay-and-jobs, the edge-decay job): an association that has not co-occurred for
// six months fades a little each month, but never below a floor, so a long-unused link is
// weakened rather than forgotten.
const (
	EdgeIdleAfter  = 180 * Day // "six months", taken as 180 days so the rule does not depend on the calendar
	EdgeDecayEvery = 30 * Day  // at most one step per edge in this period (LastDecayed)
	EdgeDecayStep  = 0.05
	EdgeFloor      = 0.1
)

// DecayEdge applies one step of edge decay at now and reports whether the edge changed.
// An edge loses EdgeDecayStep (not below EdgeFloor, and an edge already under the floor is
// never raised) when its LastCoOccurred is at least EdgeIdleAfter before now and its
// LastDecayed is zero or at least EdgeDecayEvery before now; LastDecayed becomes now.
//
// An edge whose LastCoOccurred is zero never co-occurred: ingest made it from the content
// (mentions, temporal, relation…) and no engagement ever touched it, so there is nothing
// learned to unlearn and it does not decay. Once engagement strengthens it, it carries a
// LastCoOccurred and follows the rule. This also keeps the job from rewriting every structural
// edge on its first pass. Applying DecayEdge twice at the same now changes nothing the second
// time.
func DecayEdge(e *models.Edge, now time.Time) bool {
	if e == nil || e.LastCoOccurred.IsZero() {
		return false
	}
	if now.Sub(e.LastCoOccurred) < EdgeIdleAfter {
		return false
	}
	if !e.LastDecayed.IsZero() && now.Sub(e.LastDecayed) < EdgeDecayEvery {
		return false
	}
	w := min(e.Weight, max(EdgeFloor, e.Weight-EdgeDecayStep))
	if !(w < e.Weight) { // at or under the floor (or NaN): nothing to do, keep LastDecayed
		return false
	}
	e.Weight = w
	e.LastDecayed = now
	return true
}

// DismissalFloor: halved dismissal counts below it become 0, so the count reaches zero in a
// few weeks instead of halving forever.
const DismissalFloor = 0.01

// HalveDismissals is the weekly dismissal-cooldown rule: RecentDismissals is halved, values
// below DismissalFloor (including negative ones) become 0. Without it gate 4 of the proactive
// gates (RecentDismissals ≤ 2) would block a memory forever. It reports whether m changed.
func HalveDismissals(m *models.Memory) bool {
	old := m.RecentDismissals
	v := old / 2
	if !(v >= DismissalFloor) { // also NaN
		v = 0
	}
	if v == old {
		return false
	}
	m.RecentDismissals = v
	return true
}
