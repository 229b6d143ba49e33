// Package engagement holds the learning rules of Salience (docs/design.md#engagement): how an engagement
// event moves a memory's confidence and counters, which graph edges it strengthens and by how
// much, and the reward the threshold bandit receives. The rules are pure; the service that
// reads and writes the store applies them inside one transaction.
package engagement

import (
	"slices"
	"time"

	"github.com/salience-ai/salience/models"
)

// Rules are the constants of the learning rules. DefaultRules holds the source design's
// values; experiments may override them.
type Rules struct {
	// Confidence after used/helpful: + PositiveDelta, at most MaxConfidence.
	PositiveDelta float64
	MaxConfidence float64
	// Confidence after ignored: − IgnoredDelta, not below IgnoredFloor.
	IgnoredDelta float64
	IgnoredFloor float64
	// Confidence after dismissed: − DismissedDelta, not below DismissedFloor.
	DismissedDelta float64
	DismissedFloor float64

	// Edges: created at EdgeInitial, then + EdgeDelta per co-occurrence, at most EdgeMax.
	EdgeDelta   float64
	EdgeMax     float64
	EdgeInitial float64

	// RecentDismissals grows by these on ignored and dismissed events.
	IgnoredDismissals   float64
	DismissedDismissals float64

	// MaxIrrelevantContexts bounds IrrelevantContexts; the oldest sets are dropped first.
	MaxIrrelevantContexts int
}

// DefaultRules returns the source design's constants (docs/design.md#engagement).
func DefaultRules() Rules {
	return Rules{
		PositiveDelta:         0.10,
		MaxConfidence:         1.0,
		IgnoredDelta:          0.02,
		IgnoredFloor:          0.3,
		DismissedDelta:        0.15,
		DismissedFloor:        0.2,
		EdgeDelta:             0.10,
		EdgeMax:               1.0,
		EdgeInitial:           0.30,
		IgnoredDismissals:     1,
		DismissedDismissals:   2,
		MaxIrrelevantContexts: 10,
	}
}

// raise adds delta up to limit, never lowering a value already above the limit.
func raise(v, delta, limit float64) float64 { return max(v, min(limit, v+delta)) }

// lower subtracts delta down to floor, never raising a value already below the floor. The
// source wrote max(floor, c − δ), which lifts a memory at 0.25 to 0.3 on an *ignored* event;
// negative feedback must never raise confidence.
func lower(v, delta, floor float64) float64 { return min(v, max(floor, v-delta)) }

// ApplyToMemory applies one engagement event at time at to m:
//   - used, helpful: confidence + PositiveDelta (≤ MaxConfidence), UsageCount++, LastUsed = at
//     (LastUsed never moves back when events arrive late);
//   - ignored: confidence − IgnoredDelta (floor IgnoredFloor), RecentDismissals += 1;
//   - dismissed: confidence − DismissedDelta (floor DismissedFloor), RecentDismissals += 2,
//     and the context concept set is recorded in IrrelevantContexts.
//
// Confidence is kept in [0, 1]. Unknown events change nothing. The decay policy's OnEvent
// is a separate step, to be called after this one.
func (r Rules) ApplyToMemory(m *models.Memory, ev models.EventType, contextConcepts []string, at time.Time) {
	c := m.Confidence
	switch ev {
	case models.EventUsed, models.EventHelpful:
		c = raise(c, r.PositiveDelta, r.MaxConfidence)
		m.UsageCount++
		if at.After(m.LastUsed) {
			m.LastUsed = at
		}
	case models.EventIgnored:
		c = lower(c, r.IgnoredDelta, r.IgnoredFloor)
		m.RecentDismissals += r.IgnoredDismissals
	case models.EventDismissed:
		c = lower(c, r.DismissedDelta, r.DismissedFloor)
		m.RecentDismissals += r.DismissedDismissals
		m.IrrelevantContexts = r.addContext(m.IrrelevantContexts, ConceptSet(contextConcepts))
	default:
		return
	}
	m.Confidence = models.Clamp01(c)
}

// addContext appends set as the newest irrelevant context. An equal set already present is
// moved to the end instead of being stored twice; beyond MaxIrrelevantContexts the oldest
// sets are dropped. An empty set records nothing: it would overlap nothing.
func (r Rules) addContext(list [][]string, set []string) [][]string {
	if len(set) == 0 {
		return list
	}
	out := make([][]string, 0, len(list)+1)
	for _, s := range list {
		if !slices.Equal(s, set) {
			out = append(out, s)
		}
	}
	out = append(out, set)
	if n := max(r.MaxIrrelevantContexts, 1); len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// ConceptSet normalizes concept names (models.NormalizeConcept), drops empty ones, and
// returns them sorted without duplicates: the canonical form of a context.
func ConceptSet(concepts []string) []string {
	out := make([]string, 0, len(concepts))
	for _, c := range concepts {
		if n := models.NormalizeConcept(c); n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Strengthen returns the edge after one co-occurrence at time at; e is not modified. When
// found is false, e carries only the edge's identity (Namespace, From, To, Type) and the
// result is the new edge at EdgeInitial; otherwise its weight grows by EdgeDelta up to
// EdgeMax (a weight already above the cap is kept). CoOccurrences grows by one and
// LastCoOccurred moves to at (never back).
func (r Rules) Strengthen(e *models.Edge, found bool, at time.Time) *models.Edge {
	out := *e
	if found {
		out.Weight = raise(out.Weight, r.EdgeDelta, r.EdgeMax)
	} else {
		out.Weight = r.EdgeInitial
		out.CoOccurrences = 0
		out.LastCoOccurred = time.Time{}
		out.LastDecayed = time.Time{}
	}
	out.Weight = models.Clamp01(out.Weight)
	out.CoOccurrences++
	if at.After(out.LastCoOccurred) {
		out.LastCoOccurred = at
	}
	return &out
}

// EdgesFor lists the edges a positive event strengthens (negative events strengthen none):
//   - for each distinct context concept, the edge memory → concept of type mentions. We use
//     mentions rather than a new type so that a memory and a concept share one edge: when
//     the memory already mentions the concept, engagement strengthens the edge ingest made;
//     when it does not, the new edge is the learned "relevant when this is discussed" link,
//     and spreading activation walks both the same way;
//   - for each other memory in coUsed, one co_retrieved edge with the smaller id as From, so
//     each pair is a single edge whichever memory's event comes first. coUsed should hold the
//     memories of the same turn whose positive event was already recorded, so that every pair
//     is strengthened once per turn, by the later of its two events.
//
// Keys come concept edges first, then co_retrieved edges, each group sorted. ns is not part
// of an EdgeKey; it is taken for symmetry with the store calls the caller makes with it.
func (r Rules) EdgesFor(ns, memoryID string, ev models.EventType, contextConcepts []string, coUsed []string) []models.EdgeKey {
	if !ev.Positive() || memoryID == "" {
		return nil
	}
	var keys []models.EdgeKey
	for _, c := range ConceptSet(contextConcepts) {
		keys = append(keys, models.EdgeKey{From: memoryID, To: models.ConceptID(c), Type: models.EdgeMentions})
	}
	others := slices.Clone(coUsed)
	slices.Sort(others)
	for _, o := range slices.Compact(others) {
		if o == "" || o == memoryID {
			continue
		}
		from, to := memoryID, o
		if to < from {
			from, to = to, from
		}
		keys = append(keys, models.EdgeKey{From: from, To: to, Type: models.EdgeCoRetrieved})
	}
	return keys
}
