package sqlite

import (
	"context"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/memindex"
)

// GraphVersion returns a value that changes whenever a write changes the namespace's edges
// (ok is false before Rebuild: then there is none to give). Read it before reading the
// edges: a write that commits meanwhile moves it on afterwards, so whatever was computed
// from the edges is never older than the version it is stored under.
func (s *Store) GraphVersion(ctx context.Context, ns string) (uint64, bool, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, false, err
	}
	if !s.ready.Load() {
		return 0, false, nil
	}
	v, ok := s.mem.GraphVersion(ns)
	return v, ok, nil
}

// Ready reports whether Rebuild has loaded the in-memory indexes.
func (s *Store) Ready() bool { return s.ready.Load() }

// SearchText returns the top k indexed units of ns by BM25 over nlp.Terms of the query, plus
// the learned field (memindex.LearnedWeight); empty when the query has no terms.
// EUNAVAILABLE before Rebuild; EINVALID when k < 1.
func (s *Store) SearchText(ctx context.Context, ns, query string, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	terms := nlp.Terms(query)
	sp, err := s.searchSpace(ctx, ns)
	if sp == nil || err != nil || len(terms) == 0 {
		return nil, err
	}
	return sp.SearchText(terms, k), nil
}

// Phrases answers recall's phrase check from ns's text index (models.PhraseIndex).
func (s *Store) Phrases(ctx context.Context, ns string, pairs [][2]string, ids []string) ([]float64, []bool, error) {
	sp, err := s.searchSpace(ctx, ns)
	if sp == nil || err != nil {
		return make([]float64, len(ids)), make([]bool, len(ids)), err
	}
	shares, found := sp.Phrases(pairs, ids)
	return shares, found, nil
}

// SearchVector returns the top k indexed units of ns by cosine similarity to vec.
// EUNAVAILABLE before Rebuild; EINVALID when k < 1, vec is empty or not finite, or its
// dimension differs from the namespace's.
func (s *Store) SearchVector(ctx context.Context, ns string, vec []float32, k int) ([]models.Hit, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, models.Invalid("k", "k must be at least 1")
	}
	if len(vec) == 0 {
		return nil, models.Invalid("vector", "the query vector is empty")
	}
	if _, err := index.Normalize(vec); err != nil {
		return nil, models.Invalid("vector", "the query vector has a NaN or infinite component")
	}
	sp, err := s.searchSpace(ctx, ns)
	if sp == nil || err != nil {
		return nil, err
	}
	vecs := sp.Vectors()
	if vecs == nil {
		return nil, nil
	}
	if d := vecs.Dims(); d != len(vec) {
		return nil, models.Invalid("vector", "the query vector has %d dimensions; namespace %s uses %d", len(vec), ns, d)
	}
	return vecs.Search(vec, k), nil
}

// Neighbors returns copies of every edge touching any of ids, each once.
// EUNAVAILABLE before Rebuild.
func (s *Store) Neighbors(ctx context.Context, ns string, ids []string) ([]*models.Edge, error) {
	sp, err := s.searchSpace(ctx, ns)
	if sp == nil || err != nil || len(ids) == 0 {
		return nil, err
	}
	return sp.Graph().Neighbors(ids), nil
}

// StrongestNeighbors returns, per node, at most perNode of its edges of the given types,
// heaviest first (see models.Store). EUNAVAILABLE before Rebuild.
func (s *Store) StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([]*models.Edge, error) {
	sp, err := s.searchSpace(ctx, ns)
	if sp == nil || err != nil || len(ids) == 0 || perNode <= 0 {
		return nil, err
	}
	return sp.StrongestNeighbors(ids, perNode, types), nil
}

// searchSpace returns ns's space for a search (nil: the namespace has none), loading it in
// budget mode: EINVALID for a bad namespace, EUNAVAILABLE before Rebuild.
func (s *Store) searchSpace(ctx context.Context, ns string) (*memindex.Space, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if !s.ready.Load() {
		return nil, unavailable()
	}
	return s.space(ctx, ns)
}
