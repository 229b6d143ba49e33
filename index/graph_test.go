package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func edge(from, to string, typ models.EdgeType, w float64) *models.Edge {
	return &models.Edge{Namespace: "ns", From: from, To: to, Type: typ, Weight: w}
}

func edgeKeys(es []*models.Edge) []models.EdgeKey {
	out := make([]models.EdgeKey, len(es))
	for i, e := range es {
		out[i] = e.Key()
	}
	return out
}

func TestGraphNeighbors(t *testing.T) {
	g := NewGraph()
	g.Put(edge("m2", "c:cat", models.EdgeMentions, 0.3))
	g.Put(edge("m1", "c:cat", models.EdgeMentions, 0.3))
	g.Put(edge("m1", "m2", models.EdgeTemporal, 0.5))
	g.Put(edge("c:cat", "c:dog", models.EdgeRelation, 0.4))
	g.Put(edge("m1", "m1", models.EdgeCoRetrieved, 0.1)) // a self loop is one edge
	if g.Len() != 5 || g.Nodes() != 4 {
		t.Fatalf("Len, Nodes = %d, %d, want 5, 4", g.Len(), g.Nodes())
	}

	got := edgeKeys(g.Neighbors([]string{"m1", "c:cat", "m1"}))
	want := []models.EdgeKey{
		// m1's edges sorted by key, then c:cat's not yet returned.
		{From: "m1", To: "c:cat", Type: models.EdgeMentions},
		{From: "m1", To: "m1", Type: models.EdgeCoRetrieved},
		{From: "m1", To: "m2", Type: models.EdgeTemporal},
		{From: "c:cat", To: "c:dog", Type: models.EdgeRelation},
		{From: "m2", To: "c:cat", Type: models.EdgeMentions},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Neighbors =\n%v\nwant\n%v", got, want)
	}
	if got := g.Neighbors([]string{"nobody"}); got != nil {
		t.Fatalf("Neighbors(nobody) = %v", got)
	}

	// Put replaces properties in place; returned edges are copies.
	g.Put(edge("m1", "m2", models.EdgeTemporal, 0.9))
	es := g.Neighbors([]string{"m2"})
	if len(es) != 2 || es[0].Key() != (models.EdgeKey{From: "m1", To: "m2", Type: models.EdgeTemporal}) || es[0].Weight != 0.9 {
		t.Fatalf("Neighbors(m2) = %+v", es)
	}
	es[0].Weight = 0
	if e, _ := g.Get(es[0].Key()); e.Weight != 0.9 {
		t.Fatalf("caller mutated the index: weight %v", e.Weight)
	}
	if g.Len() != 5 {
		t.Fatalf("Len = %d after replace", g.Len())
	}
}

func TestGraphRemove(t *testing.T) {
	g := NewGraph()
	g.Put(edge("m1", "c:cat", models.EdgeMentions, 0.3))
	g.Put(edge("m2", "c:cat", models.EdgeMentions, 0.3))
	g.Put(edge("m1", "m2", models.EdgeTemporal, 0.5))
	g.Put(edge("m1", "m1", models.EdgeCoRetrieved, 0.1))

	if !g.Remove(models.EdgeKey{From: "m2", To: "c:cat", Type: models.EdgeMentions}) {
		t.Fatal("Remove of an existing edge reported false")
	}
	if g.Remove(models.EdgeKey{From: "m2", To: "c:cat", Type: models.EdgeMentions}) {
		t.Fatal("second Remove reported true")
	}
	keys := g.RemoveNode("m1")
	want := []models.EdgeKey{
		{From: "m1", To: "c:cat", Type: models.EdgeMentions},
		{From: "m1", To: "m1", Type: models.EdgeCoRetrieved},
		{From: "m1", To: "m2", Type: models.EdgeTemporal},
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("RemoveNode = %v, want %v", keys, want)
	}
	if g.Len() != 0 || g.Nodes() != 0 {
		t.Fatalf("Len, Nodes = %d, %d after removing everything", g.Len(), g.Nodes())
	}
	if got := g.Neighbors([]string{"m1", "m2", "c:cat"}); got != nil {
		t.Fatalf("Neighbors = %v", got)
	}
	if got := g.RemoveNode("m1"); len(got) != 0 {
		t.Fatalf("RemoveNode twice = %v", got)
	}
}

// TestGraphLoadMatchesPut loads edges out of key order, with a duplicate key, and checks the
// graph answers exactly like one built with Put.
func TestGraphLoadMatchesPut(t *testing.T) {
	mk := func() []*models.Edge {
		return []*models.Edge{
			edge("m2", "c:cat", models.EdgeMentions, 0.3),
			edge("m1", "m2", models.EdgeTemporal, 0.5),
			edge("m1", "c:cat", models.EdgeMentions, 0.3),
			edge("c:cat", "c:dog", models.EdgeRelation, 0.4),
			edge("m1", "m1", models.EdgeCoRetrieved, 0.1),
			edge("m2", "c:cat", models.EdgeMentions, 0.7), // same key as the first: last wins
		}
	}
	put, load := NewGraph(), NewGraph()
	for _, e := range mk() {
		put.Put(e)
	}
	load.Load(mk())
	if put.Len() != 5 || load.Len() != 5 || load.Nodes() != put.Nodes() {
		t.Fatalf("Len %d/%d, Nodes %d/%d", put.Len(), load.Len(), put.Nodes(), load.Nodes())
	}
	for _, ids := range [][]string{{"c:cat"}, {"m1", "m2"}, {"m2", "c:dog", "m1"}} {
		a, b := put.Neighbors(ids), load.Neighbors(ids)
		if len(a) != len(b) {
			t.Fatalf("Neighbors(%v): %d vs %d edges", ids, len(a), len(b))
		}
		for i := range a {
			if *a[i] != *b[i] {
				t.Fatalf("Neighbors(%v)[%d]: Put gives %+v, Load %+v", ids, i, *a[i], *b[i])
			}
		}
	}
	// A loaded graph keeps working incrementally.
	load.Put(edge("c:ant", "m1", models.EdgeMentions, 0.2))
	if got := edgeKeys(load.Neighbors([]string{"m1"})); got[0] != (models.EdgeKey{From: "c:ant", To: "m1", Type: models.EdgeMentions}) {
		t.Fatalf("after Put, Neighbors(m1) = %v", got)
	}
}

// TestGraphLoadLargeMatchesPut: a load big enough to span several of the loader's chunks
// and to sort its lists on several goroutines — shuffled, with duplicate keys — answers
// Neighbors and Strongest exactly like a graph built with Put.
func TestGraphLoadLargeMatchesPut(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var edges []*models.Edge
	for i := range loadChunk + loadChunk/2 {
		from, to := fmt.Sprintf("m%d", rng.IntN(20_000)), fmt.Sprintf("c:%d", rng.IntN(3_000))
		if i%3 == 0 {
			to = fmt.Sprintf("m%d", rng.IntN(20_000))
		}
		edges = append(edges, edge(from, to, models.EdgeMentions, float64(rng.IntN(8))/8))
	}
	for i := range 200 { // the same keys again, with other weights: the last one given wins
		e := *edges[rng.IntN(len(edges))]
		e.Weight = float64(i%8) / 8
		edges = append(edges, &e)
	}
	put, load := NewGraph(), NewGraph()
	for _, e := range edges {
		put.Put(e)
	}
	load.Load(edges)
	if put.Len() != load.Len() || put.Nodes() != load.Nodes() || load.Len() >= len(edges) {
		t.Fatalf("Len %d/%d (of %d given), Nodes %d/%d", put.Len(), load.Len(), len(edges), put.Nodes(), load.Nodes())
	}
	for i := 0; i < 20_000; i += 97 {
		ids := []string{fmt.Sprintf("m%d", i), fmt.Sprintf("c:%d", i%3_000)}
		for name, pair := range map[string][2][]*models.Edge{
			"Neighbors": {put.Neighbors(ids), load.Neighbors(ids)},
			"Strongest": {put.Strongest(ids, 5, nil), load.Strongest(ids, 5, nil)},
		} {
			a, b := pair[0], pair[1]
			if len(a) != len(b) {
				t.Fatalf("%s(%v): %d vs %d edges", name, ids, len(a), len(b))
			}
			for k := range a {
				if *a[k] != *b[k] {
					t.Fatalf("%s(%v)[%d]: Put gives %+v, Load %+v", name, ids, k, *a[k], *b[k])
				}
			}
		}
	}
}

// TestGraphKeepsLargeCounts: a co-occurrence count beyond the compact slot's 32 bits reads
// back whole, written by Put or by a load, and a later small count replaces it.
func TestGraphKeepsLargeCounts(t *testing.T) {
	for _, co := range []int{1 << 40, -(1 << 35), math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt32} {
		e := edge("m1", "c:cat", models.EdgeMentions, 0.5)
		e.CoOccurrences = co
		put, load := NewGraph(), NewGraph()
		put.Put(e)
		load.Load([]*models.Edge{e})
		for name, g := range map[string]*Graph{"Put": put, "Load": load} {
			got, ok := g.Get(e.Key())
			if !ok || got.CoOccurrences != co {
				t.Fatalf("%s: co-occurrences %d, want %d", name, got.CoOccurrences, co)
			}
		}
		e.CoOccurrences = 3
		put.Put(e)
		if got, _ := put.Get(e.Key()); got.CoOccurrences != 3 {
			t.Fatalf("after a small count: %d, want 3", got.CoOccurrences)
		}
	}
}

// TestGraphStrongestFollowsWeights checks the heavy lists against a naive selection through
// creations, weight changes, removals and a bulk load.
func TestGraphStrongestFollowsWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	g := NewGraph()
	all := map[models.EdgeKey]*models.Edge{}
	nodes := []string{"c:a", "c:b", "m1", "m2", "m3", "m4"}
	types := []models.EdgeType{models.EdgeMentions, models.EdgeTemporal}
	for step := 0; step < 2000; step++ {
		from, to := nodes[rng.IntN(len(nodes))], nodes[rng.IntN(len(nodes))]
		k := models.EdgeKey{From: from, To: to, Type: types[rng.IntN(2)]}
		if rng.IntN(5) == 0 {
			g.Remove(k)
			delete(all, k)
		} else {
			e := &models.Edge{From: k.From, To: k.To, Type: k.Type, Weight: float64(rng.IntN(5)) / 4}
			g.Put(e)
			c := *e
			all[k] = &c
		}
		id := nodes[rng.IntN(len(nodes))]
		per := 1 + rng.IntN(4)
		var want []*models.Edge
		for _, e := range all {
			if e.From == id || e.To == id {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, models.CompareStrongest)
		if len(want) > per {
			want = want[:per]
		}
		got := g.Strongest([]string{id}, per, nil)
		if len(got) != len(want) {
			t.Fatalf("step %d: Strongest(%s, %d) has %d edges, want %d", step, id, per, len(got), len(want))
		}
		for i := range got {
			if got[i].Key() != want[i].Key() || got[i].Weight != want[i].Weight {
				t.Fatalf("step %d: Strongest(%s, %d)[%d] = %+v, want %+v", step, id, per, i, *got[i], *want[i])
			}
		}
	}
	// Only one type, and an edge touching two asked nodes once.
	g = NewGraph()
	g.Load([]*models.Edge{
		{From: "m1", To: "m2", Type: models.EdgeTemporal, Weight: 0.5},
		{From: "m1", To: "c:a", Type: models.EdgeMentions, Weight: 0.9},
	})
	got := g.Strongest([]string{"m1", "m2"}, 5, map[models.EdgeType]bool{models.EdgeTemporal: true})
	if len(got) != 1 || got[0].To != "m2" {
		t.Fatalf("temporal-only strongest = %+v", got)
	}
}

// TestGraphCompactRoundTrip: the compact graph reads every edge back exactly as it was put
// — predicates, facts, another namespace, times with a location or a monotonic reading,
// the Unix epoch itself — through random puts, removals, node removals and a reload, against
// a map of the edges put.
func TestGraphCompactRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	nodes := []string{"c:a", "c:b", "m1", "m2", "m3", "m4", "m5"}
	types := []models.EdgeType{models.EdgeMentions, models.EdgeTemporal, models.EdgeRelation}
	times := []time.Time{{}, time.Unix(0, 0).UTC(), time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC),
		time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600)), time.Now()}
	g := NewGraph()
	all := map[models.EdgeKey]models.Edge{}
	check := func(step int, g *Graph) {
		t.Helper()
		if g.Len() != len(all) {
			t.Fatalf("step %d: Len %d, want %d", step, g.Len(), len(all))
		}
		touched := map[string]bool{}
		for k, want := range all {
			touched[k.From], touched[k.To] = true, true
			got, ok := g.Get(k)
			if !ok || !reflect.DeepEqual(*got, want) {
				t.Fatalf("step %d: Get(%v) = %+v, %v; want %+v", step, k, got, ok, want)
			}
		}
		if g.Nodes() != len(touched) {
			t.Fatalf("step %d: Nodes %d, want %d", step, g.Nodes(), len(touched))
		}
		id := nodes[rng.IntN(len(nodes))]
		var want []models.Edge
		for _, e := range all {
			if e.From == id || e.To == id {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, func(a, b models.Edge) int { return a.Key().Compare(b.Key()) })
		got := g.Neighbors([]string{id})
		if len(got) != len(want) {
			t.Fatalf("step %d: Neighbors(%s) has %d edges, want %d", step, id, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(*got[i], want[i]) {
				t.Fatalf("step %d: Neighbors(%s)[%d] = %+v, want %+v", step, id, i, *got[i], want[i])
			}
		}
	}
	for step := range 3000 {
		k := models.EdgeKey{From: nodes[rng.IntN(len(nodes))], To: nodes[rng.IntN(len(nodes))], Type: types[rng.IntN(len(types))]}
		switch rng.IntN(10) {
		case 0:
			g.Remove(k)
			delete(all, k)
		case 1:
			g.RemoveNode(k.From)
			for kk := range all {
				if kk.From == k.From || kk.To == k.From {
					delete(all, kk)
				}
			}
		default:
			e := models.Edge{Namespace: "ns", From: k.From, To: k.To, Type: k.Type, Weight: float64(rng.IntN(4)) / 4,
				CoOccurrences: rng.IntN(3), LastCoOccurred: times[rng.IntN(len(times))], LastDecayed: times[rng.IntN(len(times))]}
			if rng.IntN(4) == 0 {
				e.Predicate, e.Fact = "likes", "m9"
			}
			if rng.IntN(6) == 0 {
				e.Namespace = "other"
			}
			c := e
			g.Put(&c)
			c.Weight = -1 // the graph keeps its own copy
			all[k] = e
		}
		check(step, g)
	}
	// A reload of the same edges answers the same.
	var es []*models.Edge
	for _, e := range all {
		c := e
		es = append(es, &c)
	}
	rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	re := NewGraph()
	re.Load(es)
	check(-1, re)
}

// TestGraphLoadMatchesPutRandom: a bulk load of random edges — out of key order, repeated
// keys, equal weights, names whose first-seen order is not their string order — gives every
// node the same neighbours and the same strongest edges, in the same order, as Put one by one.
// So does a load of the same graph's edges in key order, as a store's scan hands them over,
// which Finish takes as they come.
func TestGraphLoadMatchesPutRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var nodes []string
	for i := range 60 {
		nodes = append(nodes, fmt.Sprintf("n%d", (i*37)%60)) // not in string order
	}
	types := []models.EdgeType{models.EdgeTemporal, models.EdgeMentions, models.EdgeCoRetrieved}
	var es []*models.Edge
	for range 3000 {
		es = append(es, &models.Edge{From: nodes[rng.IntN(60)], To: nodes[rng.IntN(60)], Type: types[rng.IntN(3)],
			Weight: float64(rng.IntN(4)) / 4})
	}
	putAll := func(es []*models.Edge) *Graph {
		g := NewGraph()
		for _, e := range es {
			c := *e
			g.Put(&c)
		}
		return g
	}
	inOrder := putAll(es).Neighbors(nodes) // every edge once
	slices.SortFunc(inOrder, func(a, b *models.Edge) int { return a.Key().Compare(b.Key()) })
	again := *inOrder[100] // a key given twice in a row, the second time heavier
	again.Weight += 2
	twice := slices.Concat(inOrder[:101], []*models.Edge{&again}, inOrder[101:])
	for _, tc := range []struct {
		name   string
		edges  []*models.Edge
		sorted bool
	}{{"shuffled", es, false}, {"key order", inOrder, true}, {"key order, a key twice", twice, false}} {
		put, load := putAll(tc.edges), NewGraph()
		l := load.BeginLoad(len(tc.edges))
		for _, e := range tc.edges {
			l.Add(e)
		}
		if l.sorted != tc.sorted {
			t.Fatalf("%s: loader takes the edges as sorted: %v", tc.name, l.sorted)
		}
		l.Finish()
		if put.Len() != load.Len() {
			t.Fatalf("%s: Len: Put %d, Load %d", tc.name, put.Len(), load.Len())
		}
		for _, id := range nodes {
			for _, pair := range [][2][]*models.Edge{
				{put.Neighbors([]string{id}), load.Neighbors([]string{id})},
				{put.Strongest([]string{id}, 7, nil), load.Strongest([]string{id}, 7, nil)},
				{put.Strongest([]string{id}, 1000, nil), load.Strongest([]string{id}, 1000, nil)},
			} {
				a, b := pair[0], pair[1]
				if len(a) != len(b) {
					t.Fatalf("%s: %s: Put gives %d edges, Load %d", tc.name, id, len(a), len(b))
				}
				for i := range a {
					if *a[i] != *b[i] {
						t.Fatalf("%s: %s [%d]: Put gives %+v, Load %+v", tc.name, id, i, *a[i], *b[i])
					}
				}
			}
		}
	}
}
