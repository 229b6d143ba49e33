package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"
)

// randomCSR is a graph of n nodes with about m random weighted edges (no loops, no
// parallels), and the same graph for gonum.
func randomCSR(rng *rand.Rand, n, m int) (*csr, *simple.WeightedUndirectedGraph) {
	type pair struct{ a, b int }
	seen := map[pair]bool{}
	var a, b []int
	var w []float64
	gg := simple.NewWeightedUndirectedGraph(0, 0)
	for i := range n {
		gg.AddNode(simple.Node(i))
	}
	for range m {
		x, y := rng.IntN(n), rng.IntN(n)
		if x == y {
			continue
		}
		x, y = min(x, y), max(x, y)
		if seen[pair{x, y}] {
			continue
		}
		seen[pair{x, y}] = true
		wt := 0.1 + rng.Float64()
		a, b, w = append(a, x), append(b, y), append(w, wt)
		gg.SetWeightedEdge(simple.WeightedEdge{F: simple.Node(x), T: simple.Node(y), W: wt})
	}
	return newCSR(n, a, b, w), gg
}

func gonumPartition(g graph.Graph, comm []int) [][]graph.Node {
	k := 0
	for _, c := range comm {
		k = max(k, c+1)
	}
	out := make([][]graph.Node, k)
	for i, c := range comm {
		out[c] = append(out[c], simple.Node(i))
	}
	return out
}

// TestModularityMatchesGonum: our Q of a partition equals gonum's community.Q of it.
func TestModularityMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range [][2]int{{10, 20}, {200, 800}, {1000, 2500}} {
		g, gg := randomCSR(rng, size[0], size[1])
		comm := make([]int, g.n())
		for i := range comm {
			comm[i] = rng.IntN(5)
		}
		renumber(comm)
		got, want := modularity(g, comm), community.Q(gg, gonumPartition(gg, comm), 1)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("n=%d: modularity = %.12f, gonum Q = %.12f", size[0], got, want)
		}
	}
}

// TestLouvainAgainstGonum: on random graphs our Louvain's partition is as good as gonum's
// Modularize (Louvain is a heuristic: within 0.02 of Q, either way).
func TestLouvainAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range [][2]int{{50, 120}, {300, 900}, {2000, 6000}} {
		g, gg := randomCSR(rng, size[0], size[1])
		comm := louvain(g, rand.New(rand.NewPCG(1, 1)))
		ours := modularity(g, comm)
		ref := community.Q(gg, community.Modularize(gg, 1, rand.NewPCG(1, 1)).Communities(), 1)
		if ours < ref-0.02 {
			t.Errorf("n=%d: Louvain Q = %.4f, gonum's %.4f", size[0], ours, ref)
		}
		t.Logf("n=%d m=%d: Q %.4f (gonum %.4f)", size[0], size[1], ours, ref)
	}
}

// TestLouvainPlanted: four dense groups joined by a few weak edges are found exactly.
func TestLouvainPlanted(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const groups, per = 4, 25
	var a, b []int
	var w []float64
	for x := range groups * per {
		for y := x + 1; y < groups*per; y++ {
			same := x/per == y/per
			if (same && rng.Float64() < 0.5) || (!same && rng.Float64() < 0.01) {
				a, b = append(a, x), append(b, y)
				w = append(w, map[bool]float64{true: 1, false: 0.2}[same])
			}
		}
	}
	comm := louvain(newCSR(groups*per, a, b, w), rand.New(rand.NewPCG(1, 1)))
	for x := range comm {
		if comm[x] != comm[x/per*per] {
			t.Fatalf("node %d in community %d, its group's first node in %d", x, comm[x], comm[x/per*per])
		}
		if x%per == 0 && x > 0 && comm[x] == comm[x-per] {
			t.Fatalf("groups %d and %d merged", x/per-1, x/per)
		}
	}
}
