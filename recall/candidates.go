package recall

import (
	"context"
	"math"
	"sort"
	"sync"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/graph"
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
	vecSim     float64 // cosine of the best unit
	activation float64 // spreading activation reaching the memory
	resurface  int     // trigger matches when it came from the resurfacing queue
	mem        *models.Memory
	unitMem    *models.Memory
	comps      models.Components
	score      float64
}

func (c *candidate) direct() bool { return c.textRank > 0 || c.vecRank > 0 }

type candidates struct {
	byID  map[string]*candidate
	lists int // ranked lists that contributed (for fusion normalization)
}

func (cs *candidates) get(id string) *candidate {
	c := cs.byID[id]
	if c == nil {
		c = &candidate{id: id}
		cs.byID[id] = c
	}
	return c
}

// parentOf maps an indexed unit id to its memory id.
func parentOf(unit string) string {
	if p, ok := ids.Parent(unit); ok {
		return p
	}
	return unit
}

// candidates gathers text, vector and associative candidates (DESIGN.md §4.2).
func (p *Pipeline) candidates(ctx context.Context, req *Request, in *intake, sw *stopwatch) (*candidates, []string, error) {
	k := p.opts.Overfetch * req.Limit
	var (
		wg                sync.WaitGroup
		textHits, vecHits []models.Hit
		concepts          []*models.Concept
		textErr, conErr   error
		vecErr            error
	)
	wg.Add(3)
	go func() {
		defer wg.Done()
		textHits, textErr = p.store.SearchText(ctx, req.Namespace, in.text, k)
	}()
	go func() {
		defer wg.Done()
		vecHits, vecErr = p.searchVector(ctx, req, in.text, k)
	}()
	go func() {
		defer wg.Done()
		names := append([]string(nil), in.concepts...)
		if in.focal != "" {
			names = append(names, in.focal)
		}
		if len(names) > 0 {
			concepts, conErr = p.store.GetConcepts(ctx, req.Namespace, names)
		}
	}()
	wg.Wait()
	sw.lap("search")
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

	cs := &candidates{byID: map[string]*candidate{}}
	if len(textHits) > 0 {
		cs.lists++
	}
	for i, h := range textHits {
		c := cs.get(parentOf(h.ID))
		if c.textRank == 0 {
			c.textRank, c.unit = i+1, h.ID
		}
	}
	rank := 0
	for _, h := range vecHits {
		if h.Score < p.opts.VectorFloor {
			break
		}
		rank++
		c := cs.get(parentOf(h.ID))
		if c.vecRank == 0 {
			c.vecRank, c.vecSim = rank, h.Score
			if c.unit == "" {
				c.unit = h.ID
			}
		}
	}
	if rank > 0 {
		cs.lists++
	}

	if err := p.associate(ctx, req, in, cs, concepts); err != nil {
		return nil, nil, err
	}
	sw.lap("graph")
	if req.Mode == models.ModeAmbient {
		if err := p.resurfacing(ctx, req, in, cs); err != nil {
			return nil, nil, err
		}
	}
	return cs, degraded, nil
}

// searchVector embeds the query and searches the vectors; with no embedder it returns nothing.
func (p *Pipeline) searchVector(ctx context.Context, req *Request, text string, k int) ([]models.Hit, error) {
	if p.embedder == nil || text == "" {
		return nil, nil
	}
	// The embedder may be a remote service: it gets at most half the latency budget.
	ectx, cancel := context.WithTimeout(ctx, req.LatencyBudget/2)
	defer cancel()
	vecs, err := p.embedder.Embed(ectx, []string{text})
	if err != nil {
		return nil, models.Errorf(models.EUNAVAILABLE, "embedder: %v", err)
	}
	if len(vecs) != 1 || isZero(vecs[0]) {
		return nil, nil
	}
	return p.store.SearchVector(ctx, req.Namespace, vecs[0], k)
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// associate spreads activation from the context's concepts and from the strongest direct
// matches (so a temporal neighbour of a strong match gains relevance), and admits
// associative-only candidates whose activation reaches MinActivation (DESIGN.md §4.2).
func (p *Pipeline) associate(ctx context.Context, req *Request, in *intake, cs *candidates, concepts []*models.Concept) error {
	seeds := map[string]float64{}
	nodes, _, err := p.store.GraphStats(ctx, req.Namespace)
	if err != nil {
		return err
	}
	for _, c := range concepts {
		seeds[models.ConceptID(c.Name)] = specificity(c.Mentions, nodes)
	}
	// The best few direct matches lend relevance to their neighbours.
	direct := make([]*candidate, 0, len(cs.byID))
	for _, c := range cs.byID {
		direct = append(direct, c)
	}
	sort.Slice(direct, func(i, j int) bool {
		return rrf(direct[i], p.opts.RRFK) > rrf(direct[j], p.opts.RRFK) || (rrf(direct[i], p.opts.RRFK) == rrf(direct[j], p.opts.RRFK) && direct[i].id < direct[j].id)
	})
	for i, c := range direct {
		if i >= 5 {
			break
		}
		seeds[c.id] = math.Max(seeds[c.id], 1/float64(i+1))
	}
	if len(seeds) == 0 {
		return nil
	}
	next := func(ctx context.Context, ids []string) ([]*models.Edge, error) {
		return p.store.Neighbors(ctx, req.Namespace, ids)
	}
	act, err := graph.Spread(ctx, seeds, next, graph.SpreadOptions{MaxHops: p.opts.MaxHops})
	if err != nil {
		return err
	}
	type scored struct {
		id string
		a  float64
	}
	var list []scored
	for id, a := range act {
		if models.IsConceptID(id) {
			continue
		}
		if _, isChunk := ids.Parent(id); isChunk {
			continue
		}
		list = append(list, scored{id, a})
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].a > list[j].a || (list[i].a == list[j].a && list[i].id < list[j].id)
	})
	limit := p.opts.Overfetch * req.Limit
	added := 0
	for i, s := range list {
		c, ok := cs.byID[s.id]
		if !ok {
			if s.a < p.opts.MinActivation || added >= limit {
				continue
			}
			c = cs.get(s.id)
			added++
		}
		c.activation = s.a
		c.assocRank = i + 1
	}
	if len(list) > 0 {
		cs.lists++
	}
	return nil
}

// specificity scales a concept's seed strength by how rare it is, so a name that appears in
// half the memories (a speaker's own name) does not flood the graph: ln(1+N/m)/ln(1+N).
func specificity(mentions, nodes int) float64 {
	if nodes < 2 || mentions < 1 {
		return 1
	}
	s := math.Log1p(float64(nodes)/float64(mentions)) / math.Log1p(float64(nodes))
	return math.Min(1, math.Max(0.05, s))
}

// resurfacing adds queued memories whose triggers and concepts match the context in at least
// decay.MinTriggerMatches places (DESIGN.md §4.2, §6).
func (p *Pipeline) resurfacing(ctx context.Context, req *Request, in *intake, cs *candidates) error {
	if len(in.concepts) == 0 {
		return nil
	}
	items, err := p.store.Queue(ctx, req.Namespace, 200)
	if err != nil || len(items) == 0 {
		return err
	}
	idl := make([]string, len(items))
	for i, it := range items {
		idl[i] = it.MemoryID
	}
	ms, err := p.store.GetMemories(ctx, req.Namespace, idl)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if n := decay.TriggerMatches(m, in.concepts); n >= decay.MinTriggerMatches {
			c := cs.get(m.ID)
			c.resurface = n
			c.mem = m
		}
	}
	return nil
}

// rrf is the reciprocal-rank-fusion sum of a candidate over its ranked lists.
func rrf(c *candidate, k float64) float64 {
	s := 0.0
	for _, r := range []int{c.textRank, c.vecRank, c.assocRank} {
		if r > 0 {
			s += 1 / (k + float64(r))
		}
	}
	return s
}
