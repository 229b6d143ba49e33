package neo4j

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/nlp"
)

// TestBM25MatchesIndex: the Neo4j store's BM25 (bm25.go) scores as the embedded store's
// (index.BM25) does, hit for hit, Norm included, given every unit as a candidate: the rule
// is written twice, in Go both times, and this keeps them together.
func TestBM25MatchesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"kayak", "zither", "place", "people", "harmonica", "river", "paint", "dog", "music", "trip", "friend", "book"}
	x := index.NewBM25()
	var cands []textCandidate
	var c termCounts
	for i := range 300 {
		n := 1 + rng.IntN(12)
		var doc []string
		for range n {
			doc = append(doc, words[int(math.Floor(float64(len(words))*rng.Float64()*rng.Float64()))])
		}
		terms := nlp.Terms(fmt.Sprint(doc))
		id := fmt.Sprintf("u%03d", i)
		x.Add(id, terms)
		cands = append(cands, textCandidate{id: id, terms: terms})
		c.add(terms)
	}
	for _, query := range []string{"kayak zither", "place people place", "harmonica dog book unseen", "trip"} {
		terms := nlp.Terms(query)
		q := newTextQuery(terms)
		st := textStats{units: int64(c.units), tlen: int64(c.tlen)}
		for _, term := range q.terms {
			st.df = append(st.df, int64(c.df[term]))
		}
		got, want := q.score(st, cands, 10), x.Search(terms, 10)
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, want %d", query, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-6*want[i].Score ||
				math.Abs(got[i].Norm-want[i].Norm) > 1e-9 {
				t.Fatalf("%q hit %d: got %+v, want %+v", query, i, got[i], want[i])
			}
		}
	}
}
