package decay

import "github.com/salience-ai/salience/models"

// MinTriggerMatches is how many distinct context concepts must match a queued memory's
// triggers or concepts before it joins ambient recall (DESIGN §4.2): one shared word is a
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
