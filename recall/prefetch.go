package recall

import (
	"context"
	"slices"

	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
)

// prefetch makes the turn's first reads in one call when the store can (models.TurnReader,
// a remote store, where each call is a round trip): the conversation, the relevance model,
// text and vector search, the context's concepts with their edges, and the graph's size. It
// returns a pipeline whose store answers those reads from what came back, so the stages
// below run as they do on any store. The query is embedded here, once, for the vector search.
func (p *Pipeline) prefetch(ctx context.Context, req *Request, in *intake) *Pipeline {
	tr, ok := p.store.(models.TurnReader)
	if !ok || req.Mode == models.ModeStartup {
		return p
	}
	k := p.opts.Overfetch * req.Limit
	q := &models.TurnQuery{
		Namespace: req.Namespace, ConversationID: req.ConversationID, StateKeys: []string{learn.Key(req.Namespace)},
		TextK: k, VectorK: k, Concepts: contextConcepts(in), ConceptFanout: p.opts.ConceptFanout, GraphStats: true,
	}
	if in.text != "" {
		q.Texts = append(q.Texts, in.text)
		if in.askedText != "" {
			q.Texts = append(q.Texts, in.askedText)
		}
	}
	in.vec, in.vecErr = p.embedQuery(ctx, req, in.text)
	in.embedded = true
	q.Vector = in.vec
	c := *p
	c.store = &turnStore{Store: p.store, q: q, r: tr.ReadTurn(ctx, q)}
	return &c
}

// remote reports whether the pipeline's store is one whose every call is a round trip (it
// read the turn at once, prefetch): worth overlapping calls that a local store answers in
// microseconds, where a goroutine's start would cost more than it saves.
func (p *Pipeline) remote() bool {
	_, ok := p.store.(*turnStore)
	return ok
}

// contextConcepts are the names whose concepts candidates looks up: the context's, and the
// focal entity.
func contextConcepts(in *intake) []string {
	names := append([]string(nil), in.concepts...)
	if in.focal != "" {
		names = append(names, in.focal)
	}
	return names
}

// turnStore answers the reads of a TurnQuery from its TurnReads, and passes every other call
// (other arguments included) to the store.
type turnStore struct {
	models.Store
	q *models.TurnQuery
	r *models.TurnReads
}

func (s *turnStore) GetConversation(ctx context.Context, ns, id string) (*models.ConversationState, error) {
	if ns == s.q.Namespace && id == s.q.ConversationID && id != "" {
		return s.r.Conversation, s.r.ConversationErr
	}
	return s.Store.GetConversation(ctx, ns, id)
}

func (s *turnStore) GetState(ctx context.Context, key string) (string, error) {
	if i := slices.Index(s.q.StateKeys, key); i >= 0 {
		return s.r.States[i], s.r.StateErrs[i]
	}
	return s.Store.GetState(ctx, key)
}

func (s *turnStore) SearchText(ctx context.Context, ns, query string, k int) ([]models.Hit, error) {
	if i := slices.Index(s.q.Texts, query); i >= 0 && ns == s.q.Namespace && k == s.q.TextK {
		return s.r.Texts[i], s.r.TextErrs[i]
	}
	return s.Store.SearchText(ctx, ns, query, k)
}

func (s *turnStore) SearchVector(ctx context.Context, ns string, vec []float32, k int) ([]models.Hit, error) {
	if s.q.Vector != nil && ns == s.q.Namespace && k == s.q.VectorK && slices.Equal(vec, s.q.Vector) {
		return s.r.Vector, s.r.VectorErr
	}
	return s.Store.SearchVector(ctx, ns, vec, k)
}

func (s *turnStore) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	if len(s.q.Concepts) > 0 && ns == s.q.Namespace && slices.Equal(names, s.q.Concepts) {
		return s.r.Concepts, s.r.ConceptsErr
	}
	return s.Store.GetConcepts(ctx, ns, names)
}

// StrongestNeighbors answers for nodes whose edges came back (the concepts found): their
// groups in the order of ids, each edge once, as the contract has it.
func (s *turnStore) StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([]*models.Edge, error) {
	got := s.r.ConceptEdges
	if got == nil || ns != s.q.Namespace || perNode != s.q.ConceptFanout || len(types) > 0 || len(ids) == 0 ||
		slices.ContainsFunc(ids, func(id string) bool { _, ok := got[id]; return !ok }) {
		return s.Store.StrongestNeighbors(ctx, ns, ids, perNode, types)
	}
	var out []*models.Edge
	seen := map[models.EdgeKey]bool{}
	for _, id := range ids {
		for _, e := range got[id] {
			if !seen[e.Key()] {
				seen[e.Key()] = true
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func (s *turnStore) GraphStats(ctx context.Context, ns string) (int, int, error) {
	if s.q.GraphStats && ns == s.q.Namespace {
		return s.r.Nodes, s.r.Edges, s.r.GraphStatsErr
	}
	return s.Store.GraphStats(ctx, ns)
}
