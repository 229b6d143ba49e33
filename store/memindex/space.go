package memindex

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

// Space is one namespace's in-memory state: the search indexes and a cache of every memory
// and chunk row (packed, packed.go) and every concept. Indexed units are cached without
// their embedding, which lives once, in the vector index. The indexes lock themselves; mu
// guards the rest.
type Space struct {
	text    *index.BM25
	learned *index.Learned // the text index's learned field (feedback expansion)
	graph   *index.Graph

	mu       sync.RWMutex
	vecs     *index.Vectors // nil until the namespace has an embedding dimension
	mems     map[string]packed
	concepts map[string]*models.Concept
	parents  int // memories that are not chunks

	// graphVer changes whenever a committed write changes the graph's edges; values come
	// from the Set's sequence, so a replaced space never repeats an old one.
	graphVer atomic.Uint64
	bytes    int64        // estimated heap, set when published in budget mode
	lastUse  atomic.Int64 // the Set's use clock when last used, for eviction
}

// The builder side: a load fills a Space nobody else holds yet, then publishes it.

// SetDims gives the space a vector index of d dimensions if it has none (d > 0).
func (sp *Space) SetDims(d int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if d > 0 && sp.vecs == nil {
		sp.vecs = index.NewVectors(d)
	}
}

// Grow sizes the space for n more units: growing row by row would copy the vectors (150 MB
// at 100k × 384) several times over.
func (sp *Space) Grow(n int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.mems = make(map[string]packed, n)
	sp.text.Grow(n)
	if sp.vecs != nil {
		sp.vecs.Grow(n)
	}
}

// Vectors returns the space's vector index, nil when it has no dimension yet.
func (sp *Space) Vectors() *index.Vectors {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	return sp.vecs
}

// Add puts a memory or chunk (the space's own copy from now on) into the cache and, when it
// is indexed, its terms into BM25 and its embedding, if any, into the vector index.
func (sp *Space) Add(m *models.Memory, terms []string) error {
	err := sp.index(m, terms, sp.Vectors())
	sp.mu.Lock()
	sp.cache(m)
	sp.mu.Unlock()
	return err
}

// index adds an indexed unit to BM25 and its embedding to vecs, leaving m.Embedding nil (the
// vector lives once, in the index). Other units are left as they are.
func (sp *Space) index(m *models.Memory, terms []string, vecs *index.Vectors) error {
	if !m.Indexed() {
		return nil
	}
	sp.text.Add(m.ID, terms)
	var err error
	if len(m.Embedding) > 0 && vecs != nil {
		err = vecs.Add(m.ID, m.Embedding)
		m.Embedding = nil
	}
	return err
}

// cache stores m in the cache; the caller holds mu for writing.
func (sp *Space) cache(m *models.Memory) {
	if _, ok := sp.mems[m.ID]; !ok && !m.IsChunk() {
		sp.parents++
	}
	sp.mems[m.ID] = pack(m)
	if len(m.Learned) > 0 {
		sp.learned.Set(m.ID, m.Learned)
	}
}

// SetCounters sets a loaded memory's surfacing counters (the bulk load reads them apart).
func (sp *Space) SetCounters(id string, n int, last time.Time) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if p, ok := sp.mems[id]; ok {
		m := p.memory()
		m.SurfaceCount, m.LastSurfaced = n, last
		sp.mems[id] = pack(m)
	}
}

// SetGraph replaces the space's graph and concepts with loaded ones (nil: keep).
func (sp *Space) SetGraph(g *index.Graph, concepts map[string]*models.Concept) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if g != nil {
		sp.graph = g
	}
	if concepts != nil {
		sp.concepts = concepts
	}
}

// The reading side.

// Memories returns the cached units among ids, with their embeddings, in order (none from a
// nil space). Each is the caller's own.
func (sp *Space) Memories(ids []string) []*models.Memory {
	return sp.View(ids, true)
}

// View returns the cached units among ids, in order, each the caller's own; with their
// embeddings (an indexed unit's decoded from the vector index) when vectors, without
// otherwise. Their strings share the packed rows' bytes, except the ids, which are the
// strings asked with: the ids are what callers keep (a conversation's recent results), and
// one kept would keep alive a packed row that the next update replaces.
func (sp *Space) View(ids []string, vectors bool) []*models.Memory {
	if sp == nil {
		return nil
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	out := make([]*models.Memory, 0, len(ids))
	var indexed []string // ids of out's indexed units, whose vectors live in sp.vecs
	var at []int         // their places in out
	u := newUnpacker(len(ids))
	for _, id := range ids {
		p, ok := sp.mems[id]
		if !ok {
			continue
		}
		m := u.memory(p)
		m.ID = id
		if !vectors {
			m.Embedding = nil
		} else if m.Indexed() && sp.vecs != nil {
			indexed, at = append(indexed, id), append(at, len(out))
		}
		out = append(out, m)
	}
	if len(indexed) > 0 {
		for i, vec := range sp.vecs.GetMany(indexed) {
			out[at[i]].Embedding = vec
		}
	}
	return out
}

// Counters returns a cached memory's surfacing counters; false when it is not cached.
func (sp *Space) Counters(id string) (n int, last time.Time, ok bool) {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	p, ok := sp.mems[id]
	if !ok {
		return 0, time.Time{}, false
	}
	m := p.memory()
	return m.SurfaceCount, m.LastSurfaced, true
}

// Concepts returns copies of the named concepts the space holds, in the order named.
func (sp *Space) Concepts(names []string) []*models.Concept {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	var out []*models.Concept
	for _, n := range names {
		if c, ok := sp.concepts[n]; ok {
			c := *c
			c.Aliases = slices.Clone(c.Aliases)
			out = append(out, &c)
		}
	}
	return out
}

// GraphStats returns the node count — memories (not chunks) plus concepts — and the edges.
func (sp *Space) GraphStats() (nodes, edges int) {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	return sp.parents + len(sp.concepts), sp.graph.Len()
}

// Len returns how many memories and chunks the space holds.
func (sp *Space) Len() int {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	return len(sp.mems)
}

// LearnedWeight is the learned field's weight against content in SearchText
// (index.BM25.SearchLearned): a word learned once counts 0.3 of a content occurrence. On the
// LoCoMo learning replay (tuned on three dev conversations) 0.3 and 0.6 gave the same lift,
// 1.0 less.
const LearnedWeight = 0.3

// SearchText returns the top k indexed units by BM25 over terms, plus the learned field.
func (sp *Space) SearchText(terms []string, k int) []models.Hit {
	return sp.text.SearchLearned(terms, k, sp.learned, LearnedWeight)
}

// Phrases answers recall's phrase check (models.PhraseIndex).
func (sp *Space) Phrases(pairs [][2]string, ids []string) ([]float64, []bool) {
	return sp.text.Phrases(pairs, ids)
}

// Graph returns the space's graph; it locks itself.
func (sp *Space) Graph() *index.Graph {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	return sp.graph
}

// StrongestNeighbors returns, per node, at most perNode of its edges of the given types
// (all when none), heaviest first.
func (sp *Space) StrongestNeighbors(ids []string, perNode int, types []models.EdgeType) []*models.Edge {
	var set map[models.EdgeType]bool
	if len(types) > 0 {
		set = make(map[models.EdgeType]bool, len(types))
		for _, t := range types {
			set[t] = true
		}
	}
	return sp.Graph().Strongest(ids, perNode, set)
}

// SetEdit copies the fields an edit of a memory may change from src into dst.
func SetEdit(dst, src *models.Memory) {
	dst.Importance, dst.ValidAt, dst.InvalidAt, dst.Sensitive = src.Importance, src.ValidAt, src.InvalidAt, src.Sensitive
}

// SetMeta copies the fields an engagement update may change — the retrieval metadata and
// the schedule — from src into dst (deeply).
func SetMeta(dst, src *models.Memory) {
	dst.Confidence = src.Confidence
	dst.UsageCount = src.UsageCount
	dst.LastUsed = src.LastUsed
	dst.SurfaceCount = src.SurfaceCount
	dst.LastSurfaced = src.LastSurfaced
	dst.RecentDismissals = src.RecentDismissals
	dst.IrrelevantContexts = (&models.Memory{IrrelevantContexts: src.IrrelevantContexts}).Clone().IrrelevantContexts
	dst.Schedule = src.Schedule
	dst.Learned = slices.Clone(src.Learned)
}

// sameLearned reports whether two lists of learned words are the same words, weights and
// times, in order.
func sameLearned(a, b []models.LearnedTerm) bool {
	return slices.EqualFunc(a, b, func(x, y models.LearnedTerm) bool {
		return x.Term == y.Term && x.Weight == y.Weight && x.At.Equal(y.At)
	})
}
