package recall

import (
	"context"
	"sync"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// candidate is one memory (a parent, never a chunk) that some source proposed.
type candidate struct {
	id         string  // the memory id (graph node)
	unit       string  // the best-matching indexed unit: the memory itself or one of its chunks
	textRank   int     // 1-based rank in text search, 0 = not found there
	vecRank    int     // 1-based rank in vector search among hits over the floor
	assocRank  int     // 1-based rank by activation
	textScore  float64 // BM25 score of the best unit
	cover      float64 // BM25 score over the query's information (models.Hit.Norm), at most 1
	vecSim     float64 // cosine of the best unit
	bm         float64 // BM25 score over the query's best
	base       float64 // fused direct relevance: text and vector scores
	activation float64 // spreading activation reaching the memory
	resurface  int     // trigger matches when it came from the resurfacing queue
	phrase     bool    // among the best direct matches: checked for phrase matches
	// phraseShare is the phrase check's answer when the store's text index gave it
	// (phraseIndexed); otherwise signals analyses the unit's content.
	phraseShare   float64
	phraseIndexed bool
	mem           *models.Memory
	unitMem       *models.Memory
	vec           []float32 // the best unit's embedding, for diversity (withVectors); nil before
	comps         models.Components
	score         float64 // the ranking score: the weighted score blended with pUse
	pUse          float64 // the relevance model's probability of use
}

func (c *candidate) direct() bool { return c.textRank > 0 || c.vecRank > 0 }

// candidates is every memory proposed for one request, and what the graph said of them.
type candidates struct {
	byID     map[string]*candidate
	concepts []*models.Concept // the context's concepts that exist: association's seeds
	hops     map[string]int    // distance from the focal entity's node; nil without one
	slab     []candidate       // where get makes candidates, a block at a time
}

func (cs *candidates) get(id string) *candidate {
	c := cs.byID[id]
	if c == nil {
		if len(cs.slab) == cap(cs.slab) {
			cs.slab = make([]candidate, 0, max(2*len(cs.byID), 16)) // a full slab stays where it is
		}
		cs.slab = append(cs.slab, candidate{id: id})
		c = &cs.slab[len(cs.slab)-1]
		cs.byID[id] = c
	}
	return c
}

// candidates gathers the direct candidates — text and vector matches — and looks up the
// context's concepts for association (docs/design.md#candidates, docs/design.md#embedders).
func (p *Pipeline) candidates(ctx context.Context, req *Request, in *intake) (*candidates, []string, error) {
	k := p.opts.Overfetch * req.Limit
	var (
		wg                sync.WaitGroup
		textHits, vecHits []models.Hit
		concepts          []*models.Concept
		textErr, conErr   error
		vecErr            error
	)
	// The vector search, the longest of the three, runs on this goroutine: started as a
	// goroutine of its own it began 0.15 ms late on average (behind the others on this
	// core, or waiting for the idle one to wake), and the stage took that much longer. The
	// text search starts when a core is free, usually once the vector scan's halves are
	// done, and ends well before the rescoring does.
	var askedHits []models.Hit
	wg.Add(2)
	go func() {
		defer wg.Done()
		textHits, textErr = p.store.SearchText(ctx, req.Namespace, in.text, k)
		if textErr == nil && in.askedText != "" && len(textHits) > 0 {
			askedHits, textErr = p.store.SearchText(ctx, req.Namespace, in.askedText, k)
		}
	}()
	go func() {
		defer wg.Done()
		if names := contextConcepts(in); len(names) > 0 {
			concepts, conErr = p.store.GetConcepts(ctx, req.Namespace, names)
		}
	}()
	vecHits, vecErr = p.searchVector(ctx, req, in, k)
	wg.Wait()
	if textErr != nil {
		return nil, nil, textErr
	}
	if conErr != nil {
		return nil, nil, conErr
	}
	var degraded []string
	if vecErr != nil {
		if models.ErrorCode(vecErr) != models.EUNAVAILABLE && ctx.Err() != nil {
			return nil, nil, vecErr
		}
		degraded = append(degraded, "vector: "+models.ErrorMessage(vecErr))
		vecHits = nil
	}

	// Room for every hit and for as many associated memories (associate adds up to k).
	n := len(textHits) + len(vecHits) + k
	cs := &candidates{byID: make(map[string]*candidate, n), concepts: concepts, slab: make([]candidate, 0, n)}
	for i, h := range textHits {
		c := cs.get(ids.MemoryOf(h.ID))
		if c.textRank == 0 {
			c.textRank, c.textScore, c.unit = i+1, h.Score, h.ID
			c.cover = coverage(h.Score, h.Norm, textHits[0].Score)
		}
	}
	rank := 0
	for _, h := range vecHits {
		if h.Score < p.opts.VectorFloor {
			break
		}
		rank++
		c := cs.get(ids.MemoryOf(h.ID))
		if c.vecRank == 0 {
			c.vecRank, c.vecSim = rank, h.Score
			if c.unit == "" {
				c.unit = h.ID
			}
		}
	}
	top := 0.0
	if len(textHits) > 0 {
		top = textHits[0].Score
	}
	for _, c := range cs.byID {
		c.bm, c.base = fuse(c.textScore, top, c.textRank > 0, c.vecSim, p.opts.VectorWeight)
	}
	// A memory's match to the turn is to the window, or to what asks now if that is more:
	// a window of three messages dilutes a match to the latest one, which is what the turn
	// is about, and its best text match may be about an earlier message. (The ranking's
	// fused relevance stays the window's.)
	for _, h := range askedHits {
		if c := cs.byID[ids.MemoryOf(h.ID)]; c != nil && c.unit == h.ID {
			c.cover = max(c.cover, coverage(h.Score, h.Norm, askedHits[0].Score))
			c.bm = max(c.bm, h.Score/askedHits[0].Score)
		}
	}
	return cs, degraded, nil
}

// searchVector embeds the query (unless prefetch did) and searches the vectors; with no
// embedder it returns nothing.
func (p *Pipeline) searchVector(ctx context.Context, req *Request, in *intake, k int) ([]models.Hit, error) {
	vec, err := in.vec, in.vecErr
	if !in.embedded {
		vec, err = p.embedQuery(ctx, req, in.text)
	}
	if err != nil || vec == nil {
		return nil, err
	}
	return p.store.SearchVector(ctx, req.Namespace, vec, k)
}

// embedQuery embeds text within the request's share of its budget; nil for no embedder, no
// text, or a zero vector.
func (p *Pipeline) embedQuery(ctx context.Context, req *Request, text string) ([]float32, error) {
	if p.embedder == nil || text == "" {
		return nil, nil
	}
	ectx, cancel := context.WithTimeout(ctx, time.Duration(float64(req.LatencyBudget)*p.opts.EmbedBudgetShare))
	defer cancel()
	vecs, err := p.embedder.Embed(ectx, []string{text})
	if err != nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "embedder: %v", err)
	}
	if len(vecs) != 1 || isZero(vecs[0]) {
		return nil, nil
	}
	return vecs[0], nil
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
