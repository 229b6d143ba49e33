package graph

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/salience-ai/salience/models"
)

// HealthStats describes the shape of a namespace's graph for operators: is it one hairball,
// a scatter of islands, or topic clusters with some bridges (what associative recall
// wants)?
type HealthStats struct {
	Nodes int `json:"nodes"` // nodes touched by at least one counted edge
	Edges int `json:"edges"` // distinct undirected node pairs joined by a counted edge
	// AvgDegree is 2·Edges/Nodes.
	AvgDegree float64 `json:"avg_degree"`
	// Clustering is the average local clustering coefficient (Watts–Strogatz), unweighted:
	// for each node the share of its neighbour pairs that are themselves joined, nodes
	// with fewer than two neighbours counting 0.
	Clustering float64 `json:"clustering"`
	// Communities is the number of communities Louvain finds (louvain.go: resolution 1,
	// fixed seed so a report is reproducible; gonum's community.Modularize is the
	// reference its tests compare against).
	Communities int `json:"communities"`
	// Modularity is the weighted modularity Q of that partition, in [-0.5, 1): near 0 for
	// no structure, 0.3–0.7 for clear clusters.
	Modularity float64 `json:"modularity"`
}

// louvainSeed fixes Louvain's random node order, so the same graph always gets the same
// communities.
const louvainSeed = 1

// Health computes HealthStats over edges. Edges are undirected here; self-loops and edges
// whose weight is not a positive number are not counted; parallel edges between two nodes
// (several types, or both directions) count as one edge whose weight is their sum.
func Health(edges []*models.Edge) HealthStats {
	type pair struct{ a, b int64 }
	ids := map[string]int64{}
	var names []string
	for _, e := range edges {
		if !countable(e) {
			continue
		}
		for _, id := range [2]string{e.From, e.To} {
			if _, ok := ids[id]; !ok {
				ids[id] = 0
				names = append(names, id)
			}
		}
	}
	if len(names) == 0 {
		return HealthStats{}
	}
	slices.Sort(names) // node numbers by id order, so results do not depend on edge order
	for i, n := range names {
		ids[n] = int64(i)
	}
	weights := map[pair]float64{}
	for _, e := range edges {
		if !countable(e) {
			continue
		}
		a, b := ids[e.From], ids[e.To]
		if a > b {
			a, b = b, a
		}
		weights[pair{a, b}] += e.Weight
	}

	n := len(names)
	pairs := make([]pair, 0, len(weights))
	for p := range weights {
		pairs = append(pairs, p)
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	adj := make([][]int64, n)
	a, b, w := make([]int, len(pairs)), make([]int, len(pairs)), make([]float64, len(pairs))
	for i, p := range pairs {
		adj[p.a] = append(adj[p.a], p.b)
		adj[p.b] = append(adj[p.b], p.a)
		a[i], b[i], w[i] = int(p.a), int(p.b), weights[p]
	}
	g := newCSR(n, a, b, w)

	st := HealthStats{
		Nodes:      n,
		Edges:      len(pairs),
		AvgDegree:  2 * float64(len(pairs)) / float64(n),
		Clustering: avgClustering(adj),
	}
	comms := louvain(g, rand.New(rand.NewPCG(louvainSeed, louvainSeed)))
	for _, c := range comms {
		st.Communities = max(st.Communities, c+1)
	}
	st.Modularity = modularity(g, comms)
	return st
}

func countable(e *models.Edge) bool {
	return e != nil && e.From != e.To && e.Weight > 0 && !math.IsInf(e.Weight, 1)
}

// avgClustering returns the average local clustering coefficient of a simple undirected
// graph given as adjacency lists. Triangles are counted with the degree-ordered "forward"
// algorithm (Schank & Wagner 2005), O(m^1.5), so a hub concept with thousands of memories
// does not make it quadratic.
func avgClustering(adj [][]int64) float64 {
	n := len(adj)
	// rank orders nodes by degree, then number; each edge points from lower to higher rank.
	rank := make([]int, n)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(len(adj[x]), len(adj[y])), cmp.Compare(x, y))
	})
	for r, v := range order {
		rank[v] = r
	}
	out := make([][]int, n)
	for u := range adj {
		for _, v := range adj[u] {
			if rank[u] < rank[int(v)] {
				out[u] = append(out[u], int(v))
			}
		}
	}
	tri := make([]int, n)
	mark := make([]int, n) // mark[w] == u+1: w is an out-neighbour of u
	for u := range out {
		for _, w := range out[u] {
			mark[w] = u + 1
		}
		for _, v := range out[u] {
			for _, w := range out[v] {
				if mark[w] == u+1 {
					tri[u]++
					tri[v]++
					tri[w]++
				}
			}
		}
	}
	var sum float64
	for u := range adj {
		if k := len(adj[u]); k >= 2 {
			sum += 2 * float64(tri[u]) / float64(k*(k-1))
		}
	}
	return sum / float64(n)
}
