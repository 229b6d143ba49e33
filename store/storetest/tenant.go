package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

// tenantWords is the vocabulary of the tenant tests: both namespaces draw from it, so the
// crowd changes every statistic an index-wide BM25 would use (document frequencies, the
// number of documents, their average length).
var tenantWords = strings.Fields("kayak zither river paint harmonica garden music trip friend book camera " +
	"mountain recipe violin puzzle lantern meadow")

// tenantMemory is memory i of namespace: a few words of tenantWords, skewed towards the
// first, and an 8-dimensional embedding, all from the seeded rng.
func tenantMemory(rng *rand.Rand, namespace string, i int) *models.Memory {
	n := 2 + rng.IntN(8)
	words := make([]string, n)
	for j := range words {
		words[j] = tenantWords[int(float64(len(tenantWords))*rng.Float64()*rng.Float64())]
	}
	m := mem(namespace, fmt.Sprintf("%s-%05d", namespace, i), strings.Join(words, " "), at(i%1000))
	m.Embedding = make([]float32, 8)
	for j := range m.Embedding {
		m.Embedding[j] = float32(rng.NormFloat64())
	}
	return m
}

var tenantQueries = []string{"kayak river", "harmonica garden music", "lantern meadow violin puzzle", "book"}

// tenantHits is what the tenant's searches return: every query's text hits, then the vector
// hits of a few of its own embeddings.
func tenantHits(t *testing.T, s models.Store, namespace string, vecs [][]float32) [][]models.Hit {
	t.Helper()
	var out [][]models.Hit
	for _, q := range tenantQueries {
		hits, err := s.SearchText(ctx, namespace, q, 10)
		mustNil(t, err)
		if len(hits) == 0 {
			t.Fatalf("SearchText(%q): no hits", q)
		}
		out = append(out, hits)
	}
	for _, v := range vecs {
		hits, err := s.SearchVector(ctx, namespace, v, 10)
		mustNil(t, err)
		if len(hits) == 0 {
			t.Fatal("SearchVector: no hits")
		}
		out = append(out, hits)
	}
	return out
}

// testTenantScores: a namespace's text and vector scores are its own. They are identical,
// to the bit, before and after another namespace of 10,000 memories over the same words
// arrives; and a namespace that lost a memory scores as one that never held it.
func testTenantScores(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	rng := rand.New(rand.NewPCG(43, 1))
	var ws []*models.MemoryWrite
	var vecs [][]float32
	for i := range 40 {
		m := tenantMemory(rng, ns, i)
		ws = append(ws, write(m))
		if i%10 == 0 {
			vecs = append(vecs, m.Embedding)
		}
	}
	mustCreate(t, s, ws...)
	alone := tenantHits(t, s, ns, vecs)

	const crowd = 10000
	for i := 0; i < crowd; i += 1000 {
		batch := make([]*models.MemoryWrite, 0, 1000)
		for j := i; j < i+1000; j++ {
			batch = append(batch, write(tenantMemory(rng, "suite-crowd", j)))
		}
		mustCreate(t, s, batch...)
	}
	assertEqual(t, "scores beside a crowd", tenantHits(t, s, ns, vecs), alone)

	// The same memories but the first, written afresh, and the first deleted from ns.
	fresh := make([]*models.MemoryWrite, 0, len(ws)-1)
	for _, w := range ws[1:] {
		m := *w.Memory
		m.Namespace = "suite-fresh"
		fresh = append(fresh, write(&m))
	}
	mustCreate(t, s, fresh...)
	mustNil(t, s.DeleteMemory(ctx, ns, ws[0].Memory.ID))
	assertEqual(t, "scores after a delete", tenantHits(t, s, ns, vecs[1:]), tenantHits(t, s, "suite-fresh", vecs[1:]))
}
