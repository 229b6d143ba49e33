package storetest

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// ReembedStore is what CheckReembed needs of a store besides models.Store.
type ReembedStore interface {
	models.Store
	Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error)
}

// ReembedFunc is a store's Reembed (sqlite.Store.Reembed, neo4j.Store.Reembed).
type ReembedFunc func(ctx context.Context, ns string, to models.EmbedderIdentity, batch int, embed models.EmbedFunc, progress func(done, total int)) (int, error)

// CheckReembed writes namespace "ns" (three memories of 2-dimension vectors and a chunked
// one whose chunk alone is embedded) and "other", re-embeds "ns" at 3 dimensions two units
// at a time through reembed, and checks what both stores promise: every unit is embedded
// once, in id order, in batches, with progress after each; the namespace's size and
// embedder are the new ones and the other's are untouched; the vectors are stored normalized; the chunked parent
// gets none. The embedder maps a text to (its length, 0, 1), so against (1, 0, 0) the
// longest text, "long text" (unit m4c0), is nearest and the shortest, "beta" (m2), farthest.
// The store must be empty and writable; the caller checks what is its own (search, refusals).
func CheckReembed(t *testing.T, s ReembedStore, reembed ReembedFunc) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var writes []*models.MemoryWrite
	for i, c := range []string{"alpha", "beta", "gamma"} {
		writes = append(writes, &models.MemoryWrite{Memory: &models.Memory{
			ID: "m" + string(rune('1'+i)), Namespace: "ns", Kind: models.KindTurn, Content: c, CreatedAt: at, Embedding: []float32{1, 0}}})
	}
	parent := &models.Memory{ID: "m4", Namespace: "ns", Kind: models.KindDocument, Content: "long text", CreatedAt: at, ChunkCount: 1}
	chunk := &models.Memory{ID: "m4c0", Namespace: "ns", Kind: models.KindDocument, Content: "long text", CreatedAt: at, ParentID: "m4", Embedding: []float32{0, 1}}
	writes = append(writes, &models.MemoryWrite{Memory: parent, Chunks: []*models.Memory{chunk}},
		&models.MemoryWrite{Memory: &models.Memory{ID: "o1", Namespace: "other", Kind: models.KindTurn, Content: "x", CreatedAt: at, Embedding: []float32{1, 0}}})
	for _, w := range writes {
		w.Embedder = "old-2"
	}
	if err := s.CreateMemories(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Embedders(ctx); err != nil || got["ns"].Dims != 2 || got["other"].Dims != 2 || len(got) != 2 {
		t.Fatalf("Embedders = %v, %v; want ns and other at 2 dimensions", got, err)
	}

	var sent []string
	var steps [][2]int
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		sent = append(sent, texts...)
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = []float32{float32(len(t)), 0, 1}
		}
		return out, nil
	}
	to := models.EmbedderIdentity{Name: "new-3", Dims: 3}
	n, err := reembed(ctx, "ns", to, 2, embed, func(done, total int) { steps = append(steps, [2]int{done, total}) })
	if err != nil || n != 4 {
		t.Fatalf("Reembed = %d, %v; want 4 units", n, err)
	}
	// Ordered by id, two at a time: m1 m2 | m3 m4c0.
	if want := []string{"alpha", "beta", "gamma", "long text"}; !slices.Equal(sent, want) {
		t.Errorf("embedded %q, want %q", sent, want)
	}
	if want := [][2]int{{2, 4}, {4, 4}}; !slices.Equal(steps, want) {
		t.Errorf("progress %v, want %v", steps, want)
	}
	old := models.EmbedderIdentity{Name: "old-2", Dims: 2}
	if got, err := s.Embedders(ctx); err != nil || got["ns"] != to || got["other"] != old {
		t.Errorf("Embedders after = %v, %v; want ns %v, other untouched %v", got, err, to, old)
	}
	// The namespace now refuses the old embedder's vectors.
	late := &models.MemoryWrite{Embedder: "old-2", Memory: &models.Memory{ID: "m5", Namespace: "ns", Kind: models.KindTurn, Content: "later", CreatedAt: at, Embedding: []float32{1, 0}}}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{late}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("a write of the old embedder after Reembed: %v, want EINVALID", err)
	}
	m, err := s.GetMemory(ctx, "ns", "m2") // "beta": (4, 0, 1), normalized
	r := float32(math.Sqrt(17))
	if err != nil || len(m.Embedding) != 3 || abs32(m.Embedding[0]-4/r) > 1e-6 || m.Embedding[1] != 0 || abs32(m.Embedding[2]-1/r) > 1e-6 {
		t.Errorf("m2 embedding %v, %v; want (4, 0, 1)/√17", m.Embedding, err)
	}
	if c, err := s.GetMemory(ctx, "ns", "m4c0"); err != nil || len(c.Embedding) != 3 {
		t.Errorf("chunk embedding %v, %v; want 3 dims", c.Embedding, err)
	}
	if p, err := s.GetMemory(ctx, "ns", "m4"); err != nil || len(p.Embedding) != 0 {
		t.Errorf("the chunked parent's vector %v, %v; want none", p.Embedding, err)
	}
	if o, err := s.GetMemory(ctx, "other", "o1"); err != nil || !slices.Equal(o.Embedding, []float32{1, 0}) {
		t.Errorf("other namespace's vector %v, %v; want untouched", o.Embedding, err)
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
