package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

// fakeGraph is a store's Neighbors over a fixed edge list; it records every call.
type fakeGraph struct {
	edges []*models.Edge
	calls [][]string
	err   error
}

func (f *fakeGraph) next(_ context.Context, ids []string) ([]*models.Edge, error) {
	f.calls = append(f.calls, slices.Clone(ids))
	if f.err != nil {
		return nil, f.err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []*models.Edge
	for _, e := range f.edges {
		if want[e.From] || want[e.To] {
			out = append(out, e)
		}
	}
	return out, nil
}

// edges parses "A-B:0.5 B-C:0.25" (type mentions) and "A-B:0.5:temporal".
func edges(spec string) []*models.Edge {
	var out []*models.Edge
	for _, f := range strings.Fields(spec) {
		parts := strings.Split(f, ":")
		ends := strings.Split(parts[0], "-")
		var w float64
		fmt.Sscan(parts[1], &w)
		typ := models.EdgeMentions
		if len(parts) > 2 {
			typ = models.EdgeType(parts[2])
		}
		out = append(out, &models.Edge{From: ends[0], To: ends[1], Type: typ, Weight: w})
	}
	return out
}

func fmtActivation(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s:%.6g ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edges string
		seeds map[string]float64
		opts  SpreadOptions
		want  map[string]float64
		calls []string // the ids of each next call, comma-joined
	}{
		{
			// A→B .5, A→C .5, A→B→D .2 + A→C→D .3, and at hop 3 A→B→D→C .12, A→C→D→B .12.
			name:  "paths sum",
			edges: "A-B:0.5 B-D:0.4 A-C:0.5 C-D:0.6",
			seeds: map[string]float64{"A": 1},
			want:  map[string]float64{"B": 0.62, "C": 0.62, "D": 0.5},
			calls: []string{"A", "B,C", "D"},
		},
		{
			name:  "strength is the seed times the product of weights, up to MaxHops",
			edges: "A-B:0.8 B-C:0.5 C-D:0.5 D-E:1",
			seeds: map[string]float64{"A": 0.5},
			want:  map[string]float64{"B": 0.4, "C": 0.2, "D": 0.1},
		},
		{
			name:  "hop limit",
			edges: "A-B:1 B-C:1 C-D:1",
			seeds: map[string]float64{"A": 1},
			opts:  SpreadOptions{MaxHops: 2},
			want:  map[string]float64{"B": 1, "C": 1},
			calls: []string{"A", "B"},
		},
		{
			name:  "a path below MinStrength is dropped with its extensions",
			edges: "A-B:0.1 B-C:0.1 C-D:1 A-E:0.5 E-F:0.2",
			seeds: map[string]float64{"A": 1},
			opts:  SpreadOptions{MinStrength: 0.05},
			want:  map[string]float64{"B": 0.1, "E": 0.5, "F": 0.1},
		},
		{
			name:  "default MinStrength 0.01",
			edges: "A-B:0.1 B-C:0.09 C-D:1",
			seeds: map[string]float64{"A": 1},
			want:  map[string]float64{"B": 0.1},
		},
		{
			// B1's two strongest edges are C1 (1) and the one back to A (.9): C2 is cut.
			name:  "fan-out keeps each node's strongest edges",
			edges: "A-B1:0.9 A-B2:0.8 A-B3:0.7 A-B4:0.6 B1-C1:1 B1-C2:0.5",
			seeds: map[string]float64{"A": 1},
			opts:  SpreadOptions{MaxFanout: 2},
			want:  map[string]float64{"B1": 0.9, "B2": 0.8, "C1": 0.9},
		},
		{
			// A→B, A→C, A→B→C, A→C→B; the 3-hop paths would return to A.
			name:  "simple paths only, seeds not returned",
			edges: "A-B:1 B-C:1 C-A:1",
			seeds: map[string]float64{"A": 1},
			want:  map[string]float64{"B": 2, "C": 2},
		},
		{
			// From A: X .5, A→B→X .5. From B: X .25, B→A→X .25.
			name:  "paths through another seed count",
			edges: "A-X:0.5 B-X:0.5 A-B:1",
			seeds: map[string]float64{"A": 1, "B": 0.5},
			opts:  SpreadOptions{MaxHops: 2},
			want:  map[string]float64{"X": 1.5},
		},
		{
			name:  "type weights; a factor of 0 disables a type",
			edges: "A-B:1:temporal A-C:1:concept A-D:0.5:mentions",
			seeds: map[string]float64{"A": 1},
			opts: SpreadOptions{TypeWeight: map[models.EdgeType]float64{
				models.EdgeTemporal: 0.5, models.EdgeConcept: 0,
			}},
			want: map[string]float64{"B": 0.5, "D": 0.5},
		},
		{
			name:  "parallel edges are two paths; the same edge twice is one; self-loops and zero weights ignored",
			edges: "A-B:0.5:mentions A-B:0.3:co_retrieved B-A:0.5:mentions A-A:1 A-C:0",
			seeds: map[string]float64{"A": 1},
			opts:  SpreadOptions{MaxHops: 1},
			want:  map[string]float64{"B": 1.3},
		},
		{
			name:  "a seed weaker than MinStrength spreads nothing",
			edges: "A-B:1",
			seeds: map[string]float64{"A": 0.001},
			want:  map[string]float64{},
			calls: []string{},
		},
		{
			name:  "no seeds",
			edges: "A-B:1",
			seeds: nil,
			want:  map[string]float64{},
			calls: []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &fakeGraph{edges: edges(tc.edges)}
			got, err := Spread(context.Background(), tc.seeds, g.next, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Spread = %s, want %s", fmtActivation(got), fmtActivation(tc.want))
			}
			for id, w := range tc.want {
				if a, ok := got[id]; !ok || math.Abs(a-w) > 1e-12 {
					t.Fatalf("Spread = %s, want %s", fmtActivation(got), fmtActivation(tc.want))
				}
			}
			if tc.calls != nil {
				var calls []string
				for _, c := range g.calls {
					calls = append(calls, strings.Join(c, ","))
				}
				if strings.Join(calls, " | ") != strings.Join(tc.calls, " | ") {
					t.Errorf("next calls %q, want %q", calls, tc.calls)
				}
			}
		})
	}
}

func TestSpreadErrors(t *testing.T) {
	boom := errors.New("store down")
	g := &fakeGraph{edges: edges("A-B:1"), err: boom}
	if _, err := Spread(context.Background(), map[string]float64{"A": 1}, g.next, SpreadOptions{}); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the store's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g = &fakeGraph{edges: edges("A-B:1")}
	if _, err := Spread(ctx, map[string]float64{"A": 1}, g.next, SpreadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(g.calls) != 0 {
		t.Errorf("%d calls after cancel, want 0", len(g.calls))
	}
}

func TestDistances(t *testing.T) {
	const spec = "A-B:1 B-C:0.1 C-D:1 A-E:1 F-G:1"
	for _, tc := range []struct {
		from    []string
		maxHops int
		want    string
		calls   int
	}{
		{[]string{"A"}, 2, "A:0 B:1 C:2 E:1", 2},
		{[]string{"A"}, 3, "A:0 B:1 C:2 D:3 E:1", 3},
		{[]string{"A", "D", "A"}, 3, "A:0 B:1 C:1 D:0 E:1", 2}, // hop 2 reaches nothing new
		{[]string{"A"}, 0, "A:0", 0},
		{[]string{"F"}, 3, "F:0 G:1", 2},
		{nil, 3, "", 0},
	} {
		g := &fakeGraph{edges: edges(spec)}
		got, err := Distances(context.Background(), tc.from, g.next, tc.maxHops)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for id, d := range got {
			parts = append(parts, fmt.Sprintf("%s:%d", id, d))
		}
		slices.Sort(parts)
		if s := strings.Join(parts, " "); s != tc.want {
			t.Errorf("Distances(%v, %d) = %s, want %s", tc.from, tc.maxHops, s, tc.want)
		}
		if len(g.calls) != tc.calls {
			t.Errorf("Distances(%v, %d) made %d calls, want %d", tc.from, tc.maxHops, len(g.calls), tc.calls)
		}
	}
	boom := errors.New("store down")
	g := &fakeGraph{err: boom}
	if _, err := Distances(context.Background(), []string{"A"}, g.next, 2); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the store's error", err)
	}
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edges string
		want  HealthStats
	}{
		{
			// Clustering: a, b 1; c has neighbours a, b, d with one link of three pairs: 1/3;
			// d 0 → 7/12. Louvain stops at {a,b} {c,d}: Q = 2(1/4 − (4/8)²) = 0, no better
			// than one community (also 0), and it only moves for a strict gain.
			name:  "triangle and pendant",
			edges: "a-b:1 b-c:1 c-a:1 c-d:1",
			want:  HealthStats{Nodes: 4, Edges: 4, AvgDegree: 2, Clustering: 7.0 / 12, Communities: 2, Modularity: 0},
		},
		{
			// Each triangle: 3 of m = 7 edges inside, degree sum 7: Q = 2(3/7 − (7/14)²) = 5/14.
			// Clustering: four nodes 1, the two bridge ends 1/3 → 14/18.
			name:  "two triangles and a bridge",
			edges: "a-b:1 b-c:1 c-a:1 d-e:1 e-f:1 f-d:1 c-d:1",
			want:  HealthStats{Nodes: 6, Edges: 7, AvgDegree: 14.0 / 6, Clustering: 14.0 / 18, Communities: 2, Modularity: 5.0 / 14},
		},
		{
			// Weighted modularity: m = 6.1, each side 3 inside, degree sum 6.1:
			// Q = 2(3/6.1 − 1/4).
			name:  "two triangles and a weak bridge",
			edges: "a-b:1 b-c:1 c-a:1 d-e:1 e-f:1 f-d:1 c-d:0.1",
			want:  HealthStats{Nodes: 6, Edges: 7, AvgDegree: 14.0 / 6, Clustering: 14.0 / 18, Communities: 2, Modularity: 2 * (3/6.1 - 0.25)},
		},
		{
			// Parallel edges merge (weight 2), the self-loop and zero weight are not counted.
			name:  "parallel edges, self-loop, zero weight",
			edges: "a-b:1:mentions b-a:1:co_retrieved a-a:1 c-d:0",
			want:  HealthStats{Nodes: 2, Edges: 1, AvgDegree: 1, Clustering: 0, Communities: 1, Modularity: 0},
		},
		{
			// Two separate edges: two communities, Q = 2(1/2 − (2/4)²) = 1/2.
			name:  "two islands",
			edges: "a-b:1 c-d:1",
			want:  HealthStats{Nodes: 4, Edges: 2, AvgDegree: 1, Clustering: 0, Communities: 2, Modularity: 0.5},
		},
		{name: "empty", edges: "", want: HealthStats{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Health(edges(tc.edges))
			w := tc.want
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
			if got.Nodes != w.Nodes || got.Edges != w.Edges || got.Communities != w.Communities ||
				!near(got.AvgDegree, w.AvgDegree) || !near(got.Clustering, w.Clustering) || !near(got.Modularity, w.Modularity) {
				t.Errorf("Health =\n %+v\nwant\n %+v", got, w)
			}
		})
	}
}

// TestHealthOrderIndependent: the same edges in any order give the same report (Louvain
// is seeded and nodes are numbered by id), up to rounding.
func TestHealthOrderIndependent(t *testing.T) {
	es := randomGraph(rand.New(rand.NewPCG(7, 7)), 300, 60, 4)
	want := Health(es)
	rng := rand.New(rand.NewPCG(8, 8))
	for range 3 {
		shuffled := slices.Clone(es)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := Health(shuffled)
		// Parallel edges' weights are summed in input order: the last bits of Q may differ.
		q := got.Modularity
		got.Modularity = want.Modularity
		if got != want || math.Abs(q-want.Modularity) > 1e-12 {
			got.Modularity = q
			t.Fatalf("Health of shuffled edges = %+v, want %+v", got, want)
		}
	}
	if want.Communities < 2 || want.Modularity <= 0 {
		t.Errorf("random memory–concept graph: %+v, want some community structure", want)
	}
}

// randomGraph builds a memory–concept graph: each of memories mentions per concepts drawn
// from concepts with a skew (low numbers are hubs), weights in [0.3, 1), and consecutive
// memories are linked by temporal edges.
func randomGraph(rng *rand.Rand, memories, concepts, per int) []*models.Edge {
	var es []*models.Edge
	for m := range memories {
		mid := fmt.Sprintf("m%05d", m)
		for range per {
			c := int(float64(concepts) * math.Pow(rng.Float64(), 2))
			es = append(es, &models.Edge{From: mid, To: models.ConceptPrefix + fmt.Sprint(c), Type: models.EdgeMentions, Weight: 0.3 + 0.7*rng.Float64()})
		}
		if m > 0 {
			es = append(es, &models.Edge{From: fmt.Sprintf("m%05d", m-1), To: mid, Type: models.EdgeTemporal, Weight: 0.5})
		}
	}
	return es
}

// BenchmarkSpread: 10,000 memories, 1,000 concepts, 5 mentions each, five concept seeds —
// the associative candidate stage of one recall, with an in-memory neighbour lookup.
func BenchmarkSpread(b *testing.B) {
	es := randomGraph(rand.New(rand.NewPCG(1, 2)), 10000, 1000, 5)
	byNode := map[string][]*models.Edge{}
	for _, e := range es {
		byNode[e.From] = append(byNode[e.From], e)
		byNode[e.To] = append(byNode[e.To], e)
	}
	next := func(_ context.Context, ids []string) ([]*models.Edge, error) {
		var out []*models.Edge
		for _, id := range ids {
			out = append(out, byNode[id]...)
		}
		return out, nil
	}
	seeds := map[string]float64{"c:10": 1, "c:50": 0.8, "c:200": 0.6, "c:400": 0.5, "c:900": 0.4}
	ctx := context.Background()
	b.ReportAllocs()
	var reached int
	for b.Loop() {
		act, err := Spread(ctx, seeds, next, SpreadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		reached = len(act)
	}
	b.ReportMetric(float64(reached), "nodes")
}

func BenchmarkHealth(b *testing.B) {
	es := randomGraph(rand.New(rand.NewPCG(1, 2)), 10000, 1000, 5)
	b.ReportAllocs()
	for b.Loop() {
		Health(es)
	}
}

// TestTopKMatchesSort: the fan-out selection keeps exactly what a full sort would.
func TestTopKMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		var es []*models.Edge
		cs := make([]cand, n)
		for i := range n {
			// Few distinct weights and names, so ties exercise the tie-breaks.
			es = append(es, &models.Edge{From: "x", To: fmt.Sprint(rng.IntN(40)), Type: models.EdgeMentions, Weight: float64(rng.IntN(10)) / 10})
			cs[i] = cand{edge: int32(i), out: rng.IntN(2) == 0, weight: es[i].Weight}
		}
		cmpc := func(a, b cand) int { return compareCands(es, a, b) }
		k := 1 + rng.IntN(n)
		want := slices.Clone(cs)
		slices.SortFunc(want, cmpc)
		want = want[:k]
		got := topK(slices.Clone(cs), k, cmpc)
		slices.SortFunc(got, cmpc)
		for i := range want {
			if cmpc(got[i], want[i]) != 0 || got[i].weight != want[i].weight {
				t.Fatalf("trial %d (n %d, k %d): element %d = %+v, want %+v", trial, n, k, i, got[i], want[i])
			}
		}
	}
}

// spreadReference is Spread written the obvious way: depth-first over every simple path,
// on adjacency lists built from all edges at once.
func spreadReference(all []*models.Edge, seeds map[string]float64, opts SpreadOptions) map[string]float64 {
	opts = opts.withDefaults()
	type nb struct {
		other  string
		weight float64
		typ    models.EdgeType
		out    bool
	}
	adj := map[string][]nb{}
	for _, e := range all {
		w := opts.effective(e)
		if e.From == e.To || !(w > 0) {
			continue
		}
		adj[e.From] = append(adj[e.From], nb{e.To, w, e.Type, true})
		adj[e.To] = append(adj[e.To], nb{e.From, w, e.Type, false})
	}
	for id, l := range adj {
		slices.SortFunc(l, func(a, b nb) int {
			if c := cmp.Compare(b.weight, a.weight); c != 0 {
				return c
			}
			if c := cmp.Compare(a.other, b.other); c != 0 {
				return c
			}
			if c := cmp.Compare(a.typ, b.typ); c != 0 {
				return c
			}
			if a.out == b.out {
				return 0
			}
			if a.out {
				return -1
			}
			return 1
		})
		l = slices.Compact(l)
		if len(l) > opts.MaxFanout {
			l = l[:opts.MaxFanout]
		}
		adj[id] = l
	}
	act := map[string]float64{}
	var walk func(path []string, s float64)
	walk = func(path []string, s float64) {
		if len(path) > opts.MaxHops {
			return
		}
		for _, n := range adj[path[len(path)-1]] {
			ns := s * n.weight
			if ns < opts.MinStrength || slices.Contains(path, n.other) {
				continue
			}
			if _, seed := seeds[n.other]; !seed {
				act[n.other] += ns
			}
			walk(append(path, n.other), ns)
		}
	}
	for id, s := range seeds {
		if s >= opts.MinStrength {
			walk([]string{id}, s)
		}
	}
	return act
}

// TestSpreadMatchesReference compares Spread with the brute-force reference on random
// graphs with hubs, parallel edges, duplicates and every option.
func TestSpreadMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	types := []models.EdgeType{models.EdgeMentions, models.EdgeTemporal, models.EdgeConcept}
	for trial := range 300 {
		nodes := 2 + rng.IntN(25)
		var es []*models.Edge
		for range rng.IntN(4 * nodes) {
			// Squaring skews towards low numbers: node 0 and 1 become hubs.
			a := int(float64(nodes) * math.Pow(rng.Float64(), 2))
			b := rng.IntN(nodes)
			e := &models.Edge{From: fmt.Sprint("n", a), To: fmt.Sprint("n", b), Type: types[rng.IntN(len(types))], Weight: float64(1+rng.IntN(10)) / 10}
			es = append(es, e)
			if rng.IntN(10) == 0 { // the store returns it twice
				es = append(es, e)
			}
		}
		seeds := map[string]float64{}
		for range 1 + rng.IntN(3) {
			seeds[fmt.Sprint("n", rng.IntN(nodes))] = float64(1+rng.IntN(10)) / 10
		}
		opts := SpreadOptions{
			MaxHops:     rng.IntN(5),
			MaxFanout:   rng.IntN(6),
			MinStrength: []float64{0, 0.05, 0.2}[rng.IntN(3)],
		}
		if rng.IntN(2) == 0 {
			opts.TypeWeight = map[models.EdgeType]float64{models.EdgeTemporal: 0.5, models.EdgeConcept: 0}
		}
		// Parallel edges of one key with different weights cannot come from a store.
		seen := map[models.EdgeKey]float64{}
		uniq := es[:0]
		for _, e := range es {
			if w, ok := seen[e.Key()]; ok && w != e.Weight {
				continue
			}
			seen[e.Key()] = e.Weight
			uniq = append(uniq, e)
		}
		es = uniq

		g := &fakeGraph{edges: es}
		got, err := Spread(context.Background(), seeds, g.next, opts)
		if err != nil {
			t.Fatal(err)
		}
		want := spreadReference(es, seeds, opts)
		if len(got) != len(want) {
			t.Fatalf("trial %d %+v seeds %v:\n got %s\nwant %s", trial, opts, seeds, fmtActivation(got), fmtActivation(want))
		}
		for id, w := range want {
			if math.Abs(got[id]-w) > 1e-9 {
				t.Fatalf("trial %d %+v seeds %v:\n got %s\nwant %s", trial, opts, seeds, fmtActivation(got), fmtActivation(want))
			}
		}
		if len(g.calls) > max(opts.withDefaults().MaxHops, 0) {
			t.Fatalf("trial %d: %d next calls for %d hops", trial, len(g.calls), opts.withDefaults().MaxHops)
		}
	}
}
