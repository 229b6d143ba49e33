package neo4j

import (
	"context"
	"slices"
	"sync"

	"github.com/salience-ai/salience/models"
)

var _ models.TurnReader = (*Store)(nil)

// ReadTurn makes a recall turn's first reads at once (models.TurnReader), each on its own
// connection: the turn waits for the slowest, not for their sum. The concepts' edges follow
// the concepts in the same goroutine, so association's first wave needs no round trip of
// its own. Each answer is its method's.
func (s *Store) ReadTurn(ctx context.Context, q *models.TurnQuery) *models.TurnReads {
	r := &models.TurnReads{
		States: make([]string, len(q.StateKeys)), StateErrs: make([]error, len(q.StateKeys)),
		Texts: make([][]models.Hit, len(q.Texts)), TextErrs: make([]error, len(q.Texts)),
	}
	var wg sync.WaitGroup
	do := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	ns := q.Namespace
	if q.ConversationID != "" {
		do(func() { r.Conversation, r.ConversationErr = s.GetConversation(ctx, ns, q.ConversationID) })
	}
	for i, key := range q.StateKeys {
		do(func() { r.States[i], r.StateErrs[i] = s.GetState(ctx, key) })
	}
	for i, text := range q.Texts {
		do(func() { r.Texts[i], r.TextErrs[i] = s.SearchText(ctx, ns, text, q.TextK) })
	}
	if q.Vector != nil {
		do(func() { r.Vector, r.VectorErr = s.SearchVector(ctx, ns, q.Vector, q.VectorK) })
	}
	if len(q.Concepts) > 0 {
		do(func() {
			if r.Concepts, r.ConceptsErr = s.GetConcepts(ctx, ns, q.Concepts); r.ConceptsErr != nil || q.ConceptFanout <= 0 {
				return
			}
			ids := make([]string, len(r.Concepts))
			for i, c := range r.Concepts {
				ids[i] = models.ConceptID(c.Name)
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			if len(ids) == 0 {
				r.ConceptEdges = map[string][]*models.Edge{}
				return
			}
			groups, err := s.strongestGroups(ctx, ns, ids, q.ConceptFanout, nil)
			if r.ConceptEdgesErr = err; err == nil {
				r.ConceptEdges = make(map[string][]*models.Edge, len(ids))
				for i, id := range ids {
					r.ConceptEdges[id] = groups[i]
				}
			}
		})
	}
	if q.GraphStats {
		do(func() { r.Nodes, r.Edges, r.GraphStatsErr = s.GraphStats(ctx, ns) })
	}
	wg.Wait()
	return r
}
