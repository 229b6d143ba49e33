package recall

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/salience-ai/salience/graph"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
)

// lendTypes are the edges relevance flows along between memories: a strong match lends
// relevance to its neighbours in the conversation (temporal) and to the memories it was
// used together with (co_retrieved, learned from engagement). The other edge types tie
// memories to concepts.
var lendTypes = []models.EdgeType{models.EdgeTemporal, models.EdgeCoRetrieved}

// conceptHops is how far the first wave goes: from a concept to the memories tied to it.
// It is the graph's shape, not a tuning: a second hop would run back out to every concept
// of those memories (the first design's 3-hop spreading cost 13–27 ms at 10,000 memories and added
// noise: docs/design.md#ranking-in-detail).
const conceptHops = 1

// associate is the associative half of docs/design.md#candidates, in two bounded waves so a hub never
// floods the walk: first activation flows from the context's concepts to the memories tied
// to them (one hop, seeds scaled by how specific each concept is; engagement strengthens
// exactly these ties), then from every memory matched so far to its neighbours along
// memory-to-memory edges. A memory's activation is the sum of both. It also measures each
// memory's distance from the focal entity, for the proximity feature.
func (p *Pipeline) associate(ctx context.Context, req *Request, in *intake, cs *candidates) error {
	var act map[string]float64
	if len(cs.concepts) > 0 {
		nodes, _, err := p.store.GraphStats(ctx, req.Namespace)
		if err != nil {
			return err
		}
		next := func(ctx context.Context, ids []string) ([]*models.Edge, error) {
			return p.store.StrongestNeighbors(ctx, req.Namespace, ids, p.opts.ConceptFanout, nil)
		}
		if act, err = graph.Spread(ctx, conceptSeeds(cs.concepts, nodes, p.opts.MinSpecificity), next, graph.SpreadOptions{MaxHops: conceptHops}); err != nil {
			return err
		}
		for id := range act { // the first wave's activation of memories: Spread's, concepts aside
			if models.IsConceptID(id) {
				delete(act, id)
			}
		}
	}
	if act == nil {
		act = map[string]float64{}
	}
	lent, err := p.lend(ctx, req.Namespace, lendSeeds(cs, act, p.opts.LendSeeds))
	if err != nil {
		return err
	}
	for id, v := range lent {
		act[id] += v
	}
	for i, s := range associated(cs, act, p.opts.Overfetch*req.Limit, p.opts.AssocFloor) {
		c := cs.get(s.id)
		c.activation = s.a
		c.assocRank = i + 1
	}
	if in.focal != "" {
		next := func(ctx context.Context, ids []string) ([]*models.Edge, error) {
			return p.store.StrongestNeighbors(ctx, req.Namespace, ids, p.opts.ConceptFanout, nil)
		}
		hops, err := graph.Distances(ctx, []string{models.ConceptID(in.focal)}, next, p.opts.FocalHops)
		if err != nil {
			return err
		}
		cs.hops = hops
	}
	return nil
}

// lend passes relevance along memory-to-memory edges for MaxHops hops (see lendWave).
func (p *Pipeline) lend(ctx context.Context, ns string, seeds map[string]float64) (map[string]float64, error) {
	var out map[string]float64
	cur := seeds
	for hop := 0; hop < p.opts.MaxHops && len(cur) > 0; hop++ {
		frontier := make([]string, 0, len(cur))
		for id := range cur {
			frontier = append(frontier, id)
		}
		sort.Strings(frontier) // deterministic float sums
		edges, err := p.store.StrongestNeighbors(ctx, ns, frontier, p.opts.LendEdges, lendTypes)
		if err != nil {
			return nil, err
		}
		next := lendWave(cur, edges)
		if out == nil {
			out = next // the first hop's sums as they are; lendWave no longer writes next
		} else {
			for id, v := range next {
				out[id] += v
			}
		}
		cur = next
	}
	return out, nil
}

// The arithmetic of association, apart from the store.

// specificity scales a concept's seed strength by how rare it is, so a name that appears in
// half the memories (a speaker's own name) does not flood the graph: ln(1+N/m)/ln(1+N) for
// a concept with m mentions in a graph of N nodes, within [floor, 1].
func specificity(mentions, nodes int, floor float64) float64 {
	if nodes < 2 || mentions < 1 {
		return 1
	}
	s := math.Log1p(float64(nodes)/float64(mentions)) / math.Log1p(float64(nodes))
	return math.Min(1, math.Max(floor, s))
}

// conceptSeeds are the first wave's seeds: each context concept's node at its specificity.
func conceptSeeds(concepts []*models.Concept, nodes int, floor float64) map[string]float64 {
	seeds := make(map[string]float64, len(concepts))
	for _, c := range concepts {
		seeds[models.ConceptID(c.Name)] = specificity(c.Mentions, nodes, floor)
	}
	return seeds
}

// lendSeeds are the second wave's seeds: the n strongest (ties by id) of every memory
// matched so far, directly or by the first wave, at the strength of its match, direct
// relevance + activation, at most 1.
func lendSeeds(cs *candidates, act map[string]float64, n int) map[string]float64 {
	all := make([]activated, 0, len(cs.byID)+len(act))
	for id, c := range cs.byID {
		if s := c.base + act[id]; s > 0 {
			all = append(all, activated{id, math.Min(1, s)})
		}
	}
	for id, v := range act {
		if c, ok := cs.byID[id]; ok && c.base+v > 0 {
			continue // a seed already, above
		}
		all = append(all, activated{id, math.Min(1, v)})
	}
	if len(all) > n {
		// Selected as pairs: sorting a map's keys by looking both values up cost more than
		// the rest of the association wave.
		all = best(all, n)
	}
	out := make(map[string]float64, len(all))
	for _, s := range all {
		out[s.id] = s.a
	}
	return out
}

// stronger orders activations strongest first, ties by id.
func stronger(x, y activated) bool { return x.a > y.a || (x.a == y.a && x.id < y.id) }

// best moves the k strongest of xs (stronger; ids are distinct) to its front, sorted, and
// returns them: what sorting all of xs and keeping the first k gives, for a selection's
// cost. A bounded heap keeps the k best seen, its weakest at the root, so the long tail of
// a wave (a thousand activations for the forty kept) costs a comparison each.
func best(xs []activated, k int) []activated {
	if k <= 0 {
		return xs[:0]
	}
	if k < len(xs) {
		h := xs[:k]
		down := func(i int) {
			for {
				l, weakest := 2*i+1, i
				if l < k && stronger(h[weakest], h[l]) {
					weakest = l
				}
				if r := l + 1; r < k && stronger(h[weakest], h[r]) {
					weakest = r
				}
				if weakest == i {
					return
				}
				h[i], h[weakest] = h[weakest], h[i]
				i = weakest
			}
		}
		for i := k/2 - 1; i >= 0; i-- {
			down(i)
		}
		for j := k; j < len(xs); j++ {
			if stronger(xs[j], h[0]) {
				h[0] = xs[j]
				down(0)
			}
		}
		xs = h
	}
	slices.SortFunc(xs, func(x, y activated) int {
		switch {
		case stronger(x, y):
			return -1
		case stronger(y, x):
			return 1
		}
		return 0
	})
	return xs
}

// lendWave is one hop of lending: each memory gains Σ strength(neighbour) × edge weight over
// its neighbours along lendTypes edges, in either direction, seeds included — unlike
// graph.Spread, which never returns its seeds — because a match is worth more when its
// neighbour matched too: the turn that answers a question usually sits right after the turn
// that asks it. Edges are summed in the order given, so equal input gives equal floats.
func lendWave(cur map[string]float64, edges []*models.Edge) map[string]float64 {
	next := make(map[string]float64, len(edges))
	for _, e := range edges {
		if e.Weight <= 0 || !lends(e.Type) {
			continue
		}
		if s, ok := cur[e.From]; ok {
			next[e.To] += s * e.Weight
		}
		if s, ok := cur[e.To]; ok {
			next[e.From] += s * e.Weight
		}
	}
	return next
}

func lends(t models.EdgeType) bool {
	for _, l := range lendTypes {
		if t == l {
			return true
		}
	}
	return false
}

// activated is a memory the graph reached, with its activation.
type activated struct {
	id string
	a  float64
}

// associated sets the activation of the candidates the graph reached and returns the
// memories it reached that no source proposed, strongest first (ties by id): at most limit
// of them, each with activation ≥ floor. Chunks and concept nodes are never candidates.
func associated(cs *candidates, act map[string]float64, limit int, floor float64) []activated {
	extra := make([]activated, 0, len(act))
	for id, a := range act {
		if c, ok := cs.byID[id]; ok {
			c.activation = a
		} else if !(a >= floor) {
			continue // never returned: every one kept is stronger
		} else if _, isChunk := ids.Parent(id); !isChunk && !models.IsConceptID(id) {
			extra = append(extra, activated{id, a})
		}
	}
	return best(extra, limit)
}
