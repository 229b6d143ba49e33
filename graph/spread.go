// Package graph holds Salience's graph algorithms over the neighbour lists a store hands
// out: spreading activation for associative recall, hop distances for graph proximity,
// and health metrics (clustering, communities, modularity) on gonum. It keeps no graph of
// its own; whichever store is underneath answers "the edges touching these nodes".
package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/salience-ai/salience/models"
)

// NeighborFunc returns every edge touching any of ids, in either direction (a store's
// Neighbors bound to a namespace). Edges are traversed both ways.
type NeighborFunc func(ctx context.Context, ids []string) ([]*models.Edge, error)

// Spreading-activation defaults (the first design's 3 hops: docs/design.md#ranking-in-detail).
const (
	DefaultMaxHops     = 3
	DefaultMaxFanout   = 64
	DefaultMinStrength = 0.01
)

// SpreadOptions bound spreading activation. Zero values mean the defaults.
type SpreadOptions struct {
	// MaxHops is the longest path followed, in edges (default 3).
	MaxHops int
	// MaxFanout: from each node only its MaxFanout strongest edges (by effective weight,
	// ties by neighbour id then edge type) are followed (default 64). It bounds the work a
	// hub — a concept mentioned by thousands of memories — can cause.
	MaxFanout int
	// MinStrength: a path weaker than this is dropped, neither counted nor extended
	// (default 0.01).
	MinStrength float64
	// TypeWeight multiplies an edge's weight by a factor per edge type; a type missing from
	// the map (or a nil map) has factor 1, a factor ≤ 0 disables the type.
	TypeWeight map[models.EdgeType]float64
}

func (o SpreadOptions) withDefaults() SpreadOptions {
	if o.MaxHops <= 0 {
		o.MaxHops = DefaultMaxHops
	}
	if o.MaxFanout <= 0 {
		o.MaxFanout = DefaultMaxFanout
	}
	if o.MinStrength <= 0 || math.IsNaN(o.MinStrength) {
		o.MinStrength = DefaultMinStrength
	}
	return o
}

// effective returns the weight Spread follows an edge with: Weight × TypeWeight[Type].
func (o SpreadOptions) effective(e *models.Edge) float64 {
	w := e.Weight
	if f, ok := o.TypeWeight[e.Type]; ok {
		w *= f
	}
	return w
}

// Spread runs spreading activation from seeds (node id → strength) and returns the
// activation of every other node reached (docs/design.md#candidates).
//
// What is summed: for every simple path s = v0, v1, …, vk from a seed s with 1 ≤ k ≤ MaxHops
// edges — no node twice on one path, each step along one of the MaxFanout strongest edges
// of its node, in either direction — the path's strength is
//
//	seeds[s] × w(v0,v1) × … × w(vk-1,vk),  w = Weight × TypeWeight[Type]
//
// and activation[vk] is the sum of the strengths of all such paths ending at vk, over all
// seeds. Parallel edges (two types between the same nodes) are distinct paths; the same
// edge returned twice is one. A path whose strength falls below MinStrength is dropped with
// all its extensions (with weights ≤ 1 they could only be weaker). The fan-out cap ranks
// all of a node's edges, the one a path arrived by included. Paths may pass through another
// seed; seeds are never in the result. Edges with a non-positive or NaN effective weight,
// and self-loops, are ignored.
//
// The walk goes hop by hop: one next call per hop, for the path ends whose edges are not
// known yet. Work is O(seeds × MaxFanout^MaxHops) paths in the worst case, plus reading
// every edge of every node reached before the last hop — a hub's thousands included — so
// MaxHops is the main cost lever.
func Spread(ctx context.Context, seeds map[string]float64, next NeighborFunc, opts SpreadOptions) (map[string]float64, error) {
	opts = opts.withDefaults()
	// Room for the first hop's nodes: growing the id map was a tenth of a recall's wave.
	g := newWalker(next, min(len(seeds)*(1+opts.MaxFanout), 1<<12))

	// A path is stored as its last node, strength and parent (index into the previous hop's
	// paths), so "is this node already on the path" walks at most MaxHops parents.
	type path struct {
		node     int32
		parent   int32
		strength float64
	}
	var prev []path
	ids := make([]string, 0, len(seeds))
	for id := range seeds {
		ids = append(ids, id)
	}
	slices.Sort(ids) // map order would make float sums differ in the last bit between runs
	for _, id := range ids {
		n := g.intern(id)
		if s := seeds[id]; s >= opts.MinStrength {
			prev = append(prev, path{node: n, parent: -1, strength: s})
		}
	}

	history := [][]path{}
	var act []float64 // by node number; seeds are numbered first
	nSeeds := int32(len(ids))
	for hop := 1; hop <= opts.MaxHops && len(prev) > 0; hop++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		frontier := make([]int32, 0, len(prev))
		for _, p := range prev {
			frontier = append(frontier, p.node)
		}
		if err := g.fetch(ctx, frontier, opts); err != nil {
			return nil, err
		}
		if n := len(g.names); len(act) < n {
			act = append(act, make([]float64, n-len(act))...)
		}
		history = append(history, prev)
		onPath := func(p path, n int32) bool {
			for h := len(history) - 1; ; h-- {
				if p.node == n {
					return true
				}
				if p.parent < 0 {
					return false
				}
				p = history[h-1][p.parent]
			}
		}
		var cur []path
		for i, p := range prev {
			for _, nb := range g.adj[p.node] {
				s := p.strength * nb.weight
				if s < opts.MinStrength || onPath(p, nb.node) {
					continue
				}
				if nb.node >= nSeeds {
					act[nb.node] += s
				}
				if hop < opts.MaxHops {
					cur = append(cur, path{node: nb.node, parent: int32(i), strength: s})
				}
			}
		}
		prev = cur
	}

	reached := 0
	for _, a := range act {
		if a > 0 {
			reached++
		}
	}
	out := make(map[string]float64, reached)
	for n, a := range act {
		if a > 0 {
			out[g.names[n]] = a
		}
	}
	return out, nil
}

// neighbor is one followed edge from a node.
type neighbor struct {
	node   int32
	weight float64
}

// walker interns node ids and caches each node's capped, sorted adjacency, fetched once.
// Nodes are numbered in the order interned; names, adj and fetched are by number.
type walker struct {
	next    NeighborFunc
	ids     map[string]int32
	names   []string
	adj     [][]neighbor
	fetched []bool
}

// newWalker returns a walker with room for about hint nodes.
func newWalker(next NeighborFunc, hint int) *walker {
	return &walker{next: next, ids: make(map[string]int32, hint),
		names: make([]string, 0, hint), adj: make([][]neighbor, 0, hint), fetched: make([]bool, 0, hint)}
}

func (g *walker) intern(id string) int32 {
	if n, ok := g.ids[id]; ok {
		return n
	}
	n := int32(len(g.names))
	g.ids[id] = n
	g.names = append(g.names, id)
	g.adj = append(g.adj, nil)
	g.fetched = append(g.fetched, false)
	return n
}

// fetch loads the adjacency of the nodes not fetched yet, with one next call.
func (g *walker) fetch(ctx context.Context, nodes []int32, opts SpreadOptions) error {
	var want []string
	for _, n := range nodes {
		if !g.fetched[n] {
			g.fetched[n] = true
			want = append(want, g.names[n])
		}
	}
	if len(want) == 0 {
		return nil
	}
	slices.Sort(want)
	wantNode := make([]int32, len(want))
	for i, id := range want {
		wantNode[i] = g.ids[id]
	}
	edges, err := g.next(ctx, want)
	if err != nil {
		return fmt.Errorf("graph: neighbors of %d nodes: %w", len(want), err)
	}

	// A hub can bring thousands of edges: gather them per requested node as small
	// candidates (edge index, direction, weight), keep the strongest MaxFanout of each node
	// by selection, and intern only those.
	slot := make(map[string]int32, len(want))
	for i, id := range want {
		slot[id] = int32(i)
	}
	type slotCand struct {
		slot int32
		c    cand
	}
	flat := make([]slotCand, 0, len(edges))
	count := make([]int, len(want)+1)
	var both map[*models.Edge]bool
	for i, e := range edges {
		if e == nil || e.From == e.To {
			continue
		}
		w := opts.effective(e)
		if !(w > 0) { // also NaN
			continue
		}
		sf, okf := slot[e.From]
		st, okt := slot[e.To]
		if okf && okt {
			// A store that looks edges up per end returns an edge between two requested
			// nodes twice; drop the second copy here (a copy in another struct is caught
			// after ranking, below).
			if both == nil {
				both = map[*models.Edge]bool{}
			}
			if both[e] {
				continue
			}
			both[e] = true
		}
		if okf {
			flat = append(flat, slotCand{sf, cand{edge: int32(i), out: true, weight: w}})
			count[sf+1]++
		}
		if okt {
			flat = append(flat, slotCand{st, cand{edge: int32(i), out: false, weight: w}})
			count[st+1]++
		}
	}
	// Counting sort by slot into one array; count[s]..count[s+1] is slot s's range.
	for s := 1; s < len(count); s++ {
		count[s] += count[s-1]
	}
	grouped := make([]cand, len(flat))
	fill := slices.Clone(count[:len(want)])
	for _, sc := range flat {
		grouped[fill[sc.slot]] = sc.c
		fill[sc.slot]++
	}
	cmpc := func(a, b cand) int { return compareCands(edges, a, b) }
	for s := range want {
		cs := grouped[count[s]:count[s+1]]
		if len(cs) == 0 {
			continue
		}
		same := func(a, b cand) bool { return cmpc(a, b) == 0 }
		if len(cs) > opts.MaxFanout {
			all := cs
			cs = topK(cs, opts.MaxFanout, cmpc)
			slices.SortFunc(cs, cmpc)
			if n := len(cs); len(slices.CompactFunc(cs, same)) < n {
				// The same edge came twice and took two places: rank them all instead.
				slices.SortFunc(all, cmpc)
				cs = slices.CompactFunc(all, same)
				cs = cs[:min(len(cs), opts.MaxFanout)]
			}
		} else {
			// The same edge returned twice sorts next to itself: keep one.
			slices.SortFunc(cs, cmpc)
			cs = slices.CompactFunc(cs, same)
		}
		nbs := make([]neighbor, len(cs))
		for j, c := range cs {
			e := edges[c.edge]
			other := e.To
			if !c.out {
				other = e.From
			}
			nbs[j] = neighbor{node: g.intern(other), weight: c.weight}
		}
		g.adj[wantNode[s]] = nbs
	}
	return nil
}

// cand is an edge seen from one of its ends, before the fan-out cap.
type cand struct {
	edge   int32 // index into the fetched edges
	out    bool  // the edge goes from this node to the other end
	weight float64
}

// compareCands orders strongest first, then by neighbour id, edge type and direction, so
// the fan-out cap is deterministic and an edge returned twice sorts next to itself.
func compareCands(edges []*models.Edge, a, b cand) int {
	if c := cmp.Compare(b.weight, a.weight); c != 0 {
		return c
	}
	ea, eb := edges[a.edge], edges[b.edge]
	oa, ob := ea.To, eb.To
	if !a.out {
		oa = ea.From
	}
	if !b.out {
		ob = eb.From
	}
	if c := cmp.Compare(oa, ob); c != 0 {
		return c
	}
	if c := cmp.Compare(ea.Type, eb.Type); c != 0 {
		return c
	}
	switch {
	case a.out == b.out:
		return 0
	case a.out:
		return -1
	default:
		return 1
	}
}

// topK moves the k smallest elements of cs under cmp to its front, in no particular order,
// and returns them (cs[:k]); cs stays a permutation of its input. A bounded max-heap: a
// hub's long tail costs one comparison per edge.
func topK(cs []cand, k int, cmp func(a, b cand) int) []cand {
	h := cs[:k]
	// Max-heap on cmp: h[0] is the worst kept candidate.
	down := func(i int) {
		for {
			l, worst := 2*i+1, i
			if l < k && cmp(h[l], h[worst]) > 0 {
				worst = l
			}
			if r := l + 1; r < k && cmp(h[r], h[worst]) > 0 {
				worst = r
			}
			if worst == i {
				return
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for j := k; j < len(cs); j++ {
		if cmp(cs[j], h[0]) < 0 {
			cs[j], h[0] = h[0], cs[j] // swap, so cs stays a permutation of its input
			down(0)
		}
	}
	return h
}
