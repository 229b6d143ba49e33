package storetest

import (
	"testing"

	"github.com/salience-ai/salience/models"
)

// testReadTurn: a store that reads a turn at once (models.TurnReader) answers each read as
// its method does, misses and errors included. Stores that are not one skip it.
func testReadTurn(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	tr, ok := s.(models.TurnReader)
	if !ok {
		t.Skip("not a models.TurnReader")
	}
	graphFixture(t, s)
	v := mem(ns, "v1", "cat and dog in the garden", at(3))
	v.Embedding = []float32{1, 0, 0, 0}
	mustCreate(t, s, write(v))
	st := &models.ConversationState{Namespace: ns, ConversationID: "conv", Type: "chat", Turns: 2, UpdatedAt: at(4)}
	mustNil(t, s.RecordSurfacings(ctx, nil, st))
	mustNil(t, s.SetState(ctx, "turn-key", "value"))

	for _, q := range []*models.TurnQuery{
		{Namespace: ns, ConversationID: "conv", StateKeys: []string{"turn-key", "missing-key"}, Texts: []string{"cat garden", "two chunks", "nothing matches"},
			TextK: 5, Vector: []float32{0.9, 0.1, 0, 0}, VectorK: 3, Concepts: []string{"Cat", "dog", "unknown"}, ConceptFanout: 2, GraphStats: true},
		{Namespace: ns, ConversationID: "no-such-conversation", Vector: []float32{1, 0}, VectorK: 3}, // ENOTFOUND, EINVALID
		{Namespace: "nobody", Texts: []string{"cat"}, TextK: 5, Concepts: []string{"cat"}, ConceptFanout: 2, GraphStats: true},
	} {
		r := tr.ReadTurn(ctx, q)
		if q.ConversationID != "" {
			c, err := s.GetConversation(ctx, q.Namespace, q.ConversationID)
			assertEqual(t, "conversation", r.Conversation, c)
			assertEqual(t, "conversation error", models.ErrorCode(r.ConversationErr), models.ErrorCode(err))
		}
		for i, k := range q.StateKeys {
			v, err := s.GetState(ctx, k)
			mustNil(t, err)
			mustNil(t, r.StateErrs[i])
			assertEqual(t, "state "+k, r.States[i], v)
		}
		for i, text := range q.Texts {
			hits, err := s.SearchText(ctx, q.Namespace, text, q.TextK)
			mustNil(t, err)
			mustNil(t, r.TextErrs[i])
			assertEqual(t, "text hits of "+text, r.Texts[i], hits)
		}
		if q.Vector != nil {
			hits, err := s.SearchVector(ctx, q.Namespace, q.Vector, q.VectorK)
			assertEqual(t, "vector hits", r.Vector, hits)
			assertEqual(t, "vector error", models.ErrorCode(r.VectorErr), models.ErrorCode(err))
		}
		if len(q.Concepts) > 0 {
			cs, err := s.GetConcepts(ctx, q.Namespace, q.Concepts)
			mustNil(t, err)
			mustNil(t, r.ConceptsErr)
			mustNil(t, r.ConceptEdgesErr)
			assertEqual(t, "concepts", r.Concepts, cs)
			if len(r.ConceptEdges) != len(cs) {
				t.Fatalf("edges of %d concepts, want %d", len(r.ConceptEdges), len(cs))
			}
			for _, c := range cs {
				id := models.ConceptID(c.Name)
				es, err := s.StrongestNeighbors(ctx, q.Namespace, []string{id}, q.ConceptFanout, nil)
				mustNil(t, err)
				assertEqual(t, "edges of "+id, r.ConceptEdges[id], es)
			}
		}
		if q.GraphStats {
			n, e, err := s.GraphStats(ctx, q.Namespace)
			mustNil(t, err)
			mustNil(t, r.GraphStatsErr)
			assertEqual(t, "graph stats", [2]int{r.Nodes, r.Edges}, [2]int{n, e})
		}
	}
}
