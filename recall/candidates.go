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
	textScore  float64 // BM25 score of the best unit
	vecSim     float64 // cosine of the best unit
	bm         float64 // BM25 score over the query's best
	base       float64 // fused direct relevance: text and vector scores
	activation float64 // spreading activation reaching the memory
	resurface  int     // trigger matches when it came from the resurfacing queue
	phrase     bool    // among the best direct matches: checked for phrase matches
	mem        *models.Memory
	unitMem    *models.Memory
	comps      models.Components
	score      float64
}

func (c *candidate) direct() bool { return c.textRank > 0 || c.vecRank > 0 }

type candidates struct {
	byID map[string]*candidate
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
	for i, h := range textHits {
		c := cs.get(parentOf(h.ID))
		if c.textRank == 0 {
			c.textRank, c.textScore, c.unit = i+1, h.Score, h.ID
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
	p.fuse(cs, textHits)

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

// fuse sets each candidate's direct relevance: BM25 normalized by the query's best BM25
// score, blended with the vector cosine. Score fusion keeps the size of a match, which rank
// fusion throws away; on LoCoMo it measured better than RRF (see README, Benchmarks).
func (p *Pipeline) fuse(cs *candidates, textHits []models.Hit) {
	top := 0.0
	if len(textHits) > 0 {
		top = textHits[0].Score
	}
	wv := p.opts.VectorWeight
	for _, c := range cs.byID {
		bm := 0.0
		if top > 0 && c.textRank > 0 {
			bm = c.textScore / top
		}
		c.bm = bm
		c.base = (1-wv)*bm + wv*c.vecSim
	}
}

// Bounds of lending: the strongest seeds lend, along their strongest memory edges.
const (
	maxLendSeeds = 64
	maxLendEdges = 8
)

var lendTypes = []models.EdgeType{models.EdgeTemporal, models.EdgeCoRetrieved}

// strongest returns the n strongest entries of m (ties by id).
func strongest(m map[string]float64, n int) map[string]float64 {
	if len(m) <= n {
		return m
	}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return m[ids[i]] > m[ids[j]] || (m[ids[i]] == m[ids[j]] && ids[i] < ids[j]) })
	out := make(map[string]float64, n)
	for _, id := range ids[:n] {
		out[id] = m[id]
	}
	return out
}

// memoryEdges are the edges relevance flows along between memories: a strong match lends
// relevance to its neighbours in the conversation (temporal) and to the memories it was
// used together with (co_retrieved, learned from engagement).
var memoryEdges = map[models.EdgeType]float64{
	models.EdgeMentions: 0, models.EdgeDomain: 0, models.EdgeTrigger: 0, models.EdgeConcept: 0,
	models.EdgeRelation: 0, models.EdgeTemporal: 1, models.EdgeCoRetrieved: 1,
}

// associate is the associative half of DESIGN.md §4.2, in two bounded waves so a hub never
// floods the walk: first activation flows from the context's concepts to the memories tied
// to them (one hop, seeds scaled by how specific each concept is; engagement strengthens
// exactly these ties), then from every memory matched so far to its neighbours along
// memory-to-memory edges. A memory's activation is the sum of both.
func (p *Pipeline) associate(ctx context.Context, req *Request, in *intake, cs *candidates, concepts []*models.Concept) error {
	next := func(ctx context.Context, ids []string) ([]*models.Edge, error) {
		return p.store.StrongestNeighbors(ctx, req.Namespace, ids, graph.DefaultMaxFanout, nil)
	}
	act := map[string]float64{}
	if len(concepts) > 0 {
		nodes, _, err := p.store.GraphStats(ctx, req.Namespace)
		if err != nil {
			return err
		}
		seeds := map[string]float64{}
		for _, c := range concepts {
			seeds[models.ConceptID(c.Name)] = specificity(c.Mentions, nodes)
		}
		a, err := graph.Spread(ctx, seeds, next, graph.SpreadOptions{MaxHops: 1})
		if err != nil {
			return err
		}
		for id, v := range a {
			if !models.IsConceptID(id) {
				act[id] += v
			}
		}
	}
	seeds := map[string]float64{}
	for id, c := range cs.byID {
		if s := c.base + act[id]; s > 0 {
			seeds[id] = math.Min(1, s)
		}
	}
	for id, v := range act {
		if _, ok := seeds[id]; !ok {
			seeds[id] = math.Min(1, v)
		}
	}
	lent, err := p.lend(ctx, req.Namespace, strongest(seeds, maxLendSeeds))
	if err != nil {
		return err
	}
	for id, v := range lent {
		act[id] += v
	}
	limit := p.opts.Overfetch * req.Limit
	type scored struct {
		id string
		a  float64
	}
	var extra []scored
	for id, a := range act {
		if c, ok := cs.byID[id]; ok {
			c.activation = a
		} else if _, isChunk := ids.Parent(id); !isChunk && !models.IsConceptID(id) {
			extra = append(extra, scored{id, a})
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		return extra[i].a > extra[j].a || (extra[i].a == extra[j].a && extra[i].id < extra[j].id)
	})
	for i, s := range extra {
		if i >= limit || s.a < p.opts.AssocFloor {
			break
		}
		c := cs.get(s.id)
		c.activation = s.a
		c.assocRank = i + 1
	}
	return nil
}

// lend passes relevance along memory-to-memory edges for MaxHops hops: each memory gains
// Σ strength(neighbour) × weight over its neighbours, seeds included — unlike graph.Spread,
// which never returns its seeds — because a match is worth more when its neighbour matched
// too: the turn that answers a question usually sits right after the turn that asks it.
func (p *Pipeline) lend(ctx context.Context, ns string, seeds map[string]float64) (map[string]float64, error) {
	out := map[string]float64{}
	cur := seeds
	for hop := 0; hop < p.opts.MaxHops && len(cur) > 0; hop++ {
		frontier := make([]string, 0, len(cur))
		for id := range cur {
			frontier = append(frontier, id)
		}
		sort.Strings(frontier) // deterministic float sums
		edges, err := p.store.StrongestNeighbors(ctx, ns, frontier, maxLendEdges, lendTypes)
		if err != nil {
			return nil, err
		}
		nextWave := map[string]float64{}
		for _, e := range edges {
			w := e.Weight * memoryEdges[e.Type]
			if w <= 0 {
				continue
			}
			if s, ok := cur[e.From]; ok {
				nextWave[e.To] += s * w
			}
			if s, ok := cur[e.To]; ok {
				nextWave[e.From] += s * w
			}
		}
		for id, v := range nextWave {
			out[id] += v
		}
		cur = nextWave
	}
	return out, nil
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
		if m.Schedule.CooldownTo.After(req.Now) {
			// Dismissed after the scan queued it: the queue is rebuilt hourly, the
			// cooldown holds now.
			continue
		}
		if n := decay.TriggerMatches(m, in.concepts); n >= decay.MinTriggerMatches {
			c := cs.get(m.ID)
			c.resurface = n
			c.mem = m
		}
	}
	return nil
}
