package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// The benchmark corpus mimics analysed chat turns: 100,000 documents of 5–17 terms (mean 11)
// drawn from a Zipf-distributed vocabulary of 30,000 terms, queried with 3–6 terms from the
// same distribution. The Zipf parameters (s = 1.1, v = 10) reproduce the document
// frequencies of nlp.Terms over the LoCoMo turns: the commonest term ("thank") is in ~19 %
// of turns, the tenth in ~9 %, and mean length is 11.3 terms.
const (
	benchDocs  = 100_000
	benchVocab = 30_000
	benchDims  = 384
)

// The "common" variant is deliberately harsher — v = 2 and 5–25 terms put the commonest
// term in ~60 % of documents — like the "queries with common words" column of docs/design.md#embedded-store.
func benchCorpus(common bool) (ids []string, docs [][]string, queries [][]string) {
	r := rand.New(rand.NewPCG(7, 7))
	v, minLen, spread := 10.0, 5, 13
	if common {
		v, spread = 2, 21
	}
	z := rand.NewZipf(r, 1.1, v, benchVocab-1)
	vocab := make([]string, benchVocab)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%d", i)
	}
	ids = make([]string, benchDocs)
	docs = make([][]string, benchDocs)
	for i := range docs {
		ids[i] = fmt.Sprintf("01J%023d", i)
		d := make([]string, minLen+r.IntN(spread))
		for j := range d {
			d[j] = vocab[z.Uint64()]
		}
		docs[i] = d
	}
	queries = make([][]string, 1000)
	for i := range queries {
		q := make([]string, 3+r.IntN(4))
		for j := range q {
			q[j] = vocab[z.Uint64()]
		}
		queries[i] = q
	}
	return ids, docs, queries
}

// reportPercentiles runs op b.N times and reports p50 and p95 latency beside the mean.
func reportPercentiles(b *testing.B, op func(i int)) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		op(i)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
	}
}

func BenchmarkBM25Search100k(b *testing.B) {
	for _, common := range []bool{false, true} {
		name := map[bool]string{false: "chat", true: "common"}[common]
		b.Run(name, func(b *testing.B) {
			ids, docs, queries := benchCorpus(common)
			x := NewBM25()
			for i, d := range docs {
				x.Add(ids[i], d)
			}
			reportPercentiles(b, func(i int) { x.Search(queries[i%len(queries)], 20) })
		})
	}
}

// BenchmarkBM25Phrases100k measures recall's phrase check from the index: 30 documents at
// random (a recall's best direct matches) against a query's pairs.
func BenchmarkBM25Phrases100k(b *testing.B) {
	ids, docs, queries := benchCorpus(false)
	x := NewBM25()
	for i, d := range docs {
		x.Add(ids[i], d)
	}
	r := rand.New(rand.NewPCG(1, 1))
	pick := make([][]string, 1000)
	pairs := make([][][2]string, len(pick))
	for i := range pick {
		for range 30 {
			pick[i] = append(pick[i], ids[r.IntN(len(ids))])
		}
		q := queries[i%len(queries)]
		for j := 0; j+1 < len(q); j++ {
			pairs[i] = append(pairs[i], [2]string{q[j], q[j+1]})
		}
	}
	reportPercentiles(b, func(i int) { x.Phrases(pairs[i%len(pick)], pick[i%len(pick)]) })
}

func BenchmarkBM25Build100k(b *testing.B) {
	ids, docs, _ := benchCorpus(false)
	for b.Loop() {
		x := NewBM25()
		for i, d := range docs {
			x.Add(ids[i], d)
		}
	}
}

func benchVectors(n int) (ids []string, vecs [][]float32, queries [][]float32) {
	r := rand.New(rand.NewPCG(9, 9))
	ids = make([]string, n)
	vecs = make([][]float32, n)
	for i := range vecs {
		ids[i] = fmt.Sprintf("01J%023d", i)
		vecs[i] = randUnit(r, benchDims)
	}
	queries = make([][]float32, 100)
	for i := range queries {
		queries[i] = randUnit(r, benchDims)
	}
	return ids, vecs, queries
}

func BenchmarkVectorsSearch100k(b *testing.B) {
	ids, vecs, queries := benchVectors(benchDocs)
	v := NewVectors(benchDims)
	for i, vec := range vecs {
		if err := v.Add(ids[i], vec); err != nil {
			b.Fatal(err)
		}
	}
	reportPercentiles(b, func(i int) { v.Search(queries[i%len(queries)], 20) })
}

func BenchmarkVectorsBuild100k(b *testing.B) {
	ids, vecs, _ := benchVectors(benchDocs)
	for b.Loop() {
		v := NewVectors(benchDims)
		for i, vec := range vecs {
			if err := v.Add(ids[i], vec); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkGraphLoad1M: a store's rebuild of a million edges streamed through a Loader —
// 100,000 memories, each with ten edges to concepts and memories — in key order, as the
// sqlite store hands them over, and shuffled.
func BenchmarkGraphLoad1M(b *testing.B) {
	const memories, per = 100_000, 10
	r := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	edges := make([]models.Edge, 0, memories*per)
	for m := range memories {
		for k := range per {
			to := fmt.Sprintf("concept:c%d", r.IntN(20_000))
			if k%3 == 0 {
				to = fmt.Sprintf("m%07d", r.IntN(memories))
			}
			edges = append(edges, models.Edge{Namespace: "ns", From: fmt.Sprintf("m%07d", m), To: to,
				Type: models.EdgeMentions, Weight: float64(1+r.IntN(8)) / 8, CoOccurrences: 1, LastCoOccurred: at})
		}
	}
	keyOrder := func(a, b models.Edge) int { return a.Key().Compare(b.Key()) }
	slices.SortFunc(edges, keyOrder)
	edges = slices.CompactFunc(edges, func(a, b models.Edge) bool { return keyOrder(a, b) == 0 })
	shuffled := slices.Clone(edges)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, bc := range []struct {
		name  string
		edges []models.Edge
	}{{"keyorder", edges}, {"shuffled", shuffled}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g := NewGraph()
				l := g.BeginLoad(0)
				for i := range bc.edges {
					l.Add(&bc.edges[i])
				}
				l.Finish()
			}
		})
	}
}

// BenchmarkGraphStrongest: what a recall asks of a 100,000-memory graph (ten edges a memory:
// mentions of Zipf-distributed concepts, and a temporal edge to the next memory), with
// different nodes each call, as recalls do: the 64 strongest edges of five concepts (the
// first wave), and the 8 strongest temporal or co-retrieved edges of 64 memories (lending).
func BenchmarkGraphStrongest(b *testing.B) {
	const memories, per = 100_000, 10
	r := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.1, 10, 20_000-1)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var edges []models.Edge
	mem := func(i int) string { return fmt.Sprintf("m%07d", i) }
	for m := range memories {
		for k := range per {
			to, typ := fmt.Sprintf("c:%d", zipf.Uint64()), models.EdgeMentions
			if k == 0 {
				to, typ = mem((m+1)%memories), models.EdgeTemporal
			}
			edges = append(edges, models.Edge{Namespace: "ns", From: mem(m), To: to, Type: typ,
				Weight: float64(1+r.IntN(8)) / 8, CoOccurrences: 1, LastCoOccurred: at})
		}
	}
	g := NewGraph()
	l := g.BeginLoad(len(edges))
	for i := range edges {
		l.Add(&edges[i])
	}
	l.Finish()
	lend := map[models.EdgeType]bool{models.EdgeTemporal: true, models.EdgeCoRetrieved: true}
	calls := func(n int, id func() string) [][]string {
		out := make([][]string, 1024)
		for c := range out {
			for range n {
				out[c] = append(out[c], id())
			}
		}
		return out
	}
	concepts := calls(5, func() string { return fmt.Sprintf("c:%d", zipf.Uint64()) })
	matches := calls(64, func() string { return mem(r.IntN(memories)) })
	b.Run("concepts", func(b *testing.B) {
		i := 0
		for b.Loop() {
			g.Strongest(concepts[i%len(concepts)], 64, nil)
			i++
		}
	})
	b.Run("lend", func(b *testing.B) {
		i := 0
		for b.Loop() {
			g.Strongest(matches[i%len(matches)], 8, lend)
			i++
		}
	})
}
