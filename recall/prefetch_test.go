package recall_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// turnReader is a store that reads a turn at once (models.TurnReader) as the contract has it,
// by calling its own methods; it counts the calls recall makes to the reads it answered.
type turnReader struct {
	*countingStore
	turns, reads atomic.Int64
}

func (s *turnReader) ReadTurn(ctx context.Context, q *models.TurnQuery) *models.TurnReads {
	s.turns.Add(1)
	st := s.countingStore.Store // uncounted
	r := &models.TurnReads{States: make([]string, len(q.StateKeys)), StateErrs: make([]error, len(q.StateKeys))}
	if q.ConversationID != "" {
		r.Conversation, r.ConversationErr = st.GetConversation(ctx, q.Namespace, q.ConversationID)
	}
	for i, k := range q.StateKeys {
		r.States[i], r.StateErrs[i] = st.GetState(ctx, k)
	}
	for _, text := range q.Texts {
		hits, err := st.SearchText(ctx, q.Namespace, text, q.TextK)
		r.Texts, r.TextErrs = append(r.Texts, hits), append(r.TextErrs, err)
	}
	if q.Vector != nil {
		r.Vector, r.VectorErr = st.SearchVector(ctx, q.Namespace, q.Vector, q.VectorK)
	}
	if len(q.Concepts) > 0 {
		r.Concepts, r.ConceptsErr = st.GetConcepts(ctx, q.Namespace, q.Concepts)
		r.ConceptEdges = map[string][]*models.Edge{}
		for _, c := range r.Concepts {
			id := models.ConceptID(c.Name)
			r.ConceptEdges[id], r.ConceptEdgesErr = st.StrongestNeighbors(ctx, q.Namespace, []string{id}, q.ConceptFanout, nil)
		}
	}
	if q.GraphStats {
		r.Nodes, r.Edges, r.GraphStatsErr = st.GraphStats(ctx, q.Namespace)
	}
	return r
}

func (s *turnReader) SearchText(ctx context.Context, ns, q string, k int) ([]models.Hit, error) {
	s.reads.Add(1)
	return s.countingStore.SearchText(ctx, ns, q, k)
}

func (s *turnReader) SearchVector(ctx context.Context, ns string, v []float32, k int) ([]models.Hit, error) {
	s.reads.Add(1)
	return s.countingStore.SearchVector(ctx, ns, v, k)
}

func (s *turnReader) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	s.reads.Add(1)
	return s.countingStore.GetConcepts(ctx, ns, names)
}

func (s *turnReader) GetConversation(ctx context.Context, ns, id string) (*models.ConversationState, error) {
	s.reads.Add(1)
	return s.countingStore.GetConversation(ctx, ns, id)
}

func (s *turnReader) GraphStats(ctx context.Context, ns string) (int, int, error) {
	s.reads.Add(1)
	return s.countingStore.GraphStats(ctx, ns)
}

// TestTurnReaderAnswersAsTheStore: with a store that reads a turn at once, recall asks it
// once a turn, makes none of those reads again, and answers as it does over the same
// memories read one call at a time: same results, same scores, same order.
func TestTurnReaderAnswersAsTheStore(t *testing.T) {
	memories := func() []*models.Memory {
		return []*models.Memory{
			mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-3*time.Hour)),
			mem(models.KindFact, "Nadia sells the cannery honey at the Saturday market.", t0.Add(-2*time.Hour)),
			mem(models.KindFact, "The harbour ferry leaves at seven every morning.", t0.Add(-time.Hour)),
			mem(models.KindTurn, "Omar asked Nadia whether the bees survived the winter storm.", t0.Add(-30*time.Minute)),
		}
	}
	plain, fast := newEnv(t), newEnv(t)
	plain.add(t, "a", memories()...)
	fast.add(t, "a", memories()...)
	tr := &turnReader{countingStore: fast.store}
	p := recall.New(tr, fast.emb, recall.Options{Now: func() time.Time { return t0 }, Seed: 1})
	for i, q := range []string{"where does Nadia keep her bees?", "when does the ferry leave", "honey market"} {
		req := func() *recall.Request {
			return &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: q, ConversationID: "c1", Entities: []string{"Nadia"}, Now: t0}
		}
		want, err := plain.p.Recall(context.Background(), req())
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Recall(context.Background(), req())
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) == 0 || len(got.Results) != len(want.Results) {
			t.Fatalf("%q: %d results, want %d (> 0)", q, len(got.Results), len(want.Results))
		}
		for j := range want.Results {
			if g, w := got.Results[j], want.Results[j]; g.Content != w.Content || g.Score != w.Score {
				t.Fatalf("%q result %d: %q %v, want %q %v", q, j, g.Content, g.Score, w.Content, w.Score)
			}
		}
		if n := tr.turns.Load(); n != int64(i+1) {
			t.Fatalf("%q: %d turns read, want %d", q, n, i+1)
		}
	}
	if n := tr.reads.Load(); n != 0 {
		t.Fatalf("recall made %d of the turn's reads again", n)
	}
}
