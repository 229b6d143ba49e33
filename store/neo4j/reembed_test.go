package neo4j

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// testReembed: every unit (unchunked memories and chunks, not a chunked parent) of the
// namespace gets the embedder's vector of its content, normalized, in id order and batches;
// the namespace's size becomes the new one at once, so an old-size write is refused; the
// vector search answers with the new vectors; another namespace is untouched; bad vectors
// stop it with an error.
func testReembed(t *testing.T, s *Store) {
	wipe(t, s)
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
	if err := s.CreateMemories(ctx, writes); err != nil {
		t.Fatal(err)
	}

	var sent []string
	var steps [][2]int
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		sent = append(sent, texts...)
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = []float32{float32(len(t)), 0, 1} // 3 dims now
		}
		return out, nil
	}
	n, err := s.Reembed(ctx, "ns", 3, 2, embed, func(done, total int) { steps = append(steps, [2]int{done, total}) })
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
	if got, err := s.VectorDims(ctx); err != nil || got["ns"] != 3 || got["other"] != 2 {
		t.Errorf("VectorDims after = %v, %v; want ns 3, other untouched 2", got, err)
	}
	m, err := s.GetMemory(ctx, "ns", "m2") // "beta": (4, 0, 1), normalized
	r := float32(math.Sqrt(17))
	if err != nil || len(m.Embedding) != 3 || abs32(m.Embedding[0]-4/r) > 1e-6 || m.Embedding[1] != 0 || abs32(m.Embedding[2]-1/r) > 1e-6 {
		t.Errorf("m2 embedding %v, %v; want (4, 0, 1)/√17", m.Embedding, err)
	}
	if c, err := s.GetMemory(ctx, "ns", "m4c0"); err != nil || len(c.Embedding) != 3 {
		t.Errorf("chunk embedding %v, %v; want 3 dims", c.Embedding, err)
	}
	if o, err := s.GetMemory(ctx, "other", "o1"); err != nil || !slices.Equal(o.Embedding, []float32{1, 0}) {
		t.Errorf("other namespace's vector %v, %v; want untouched", o.Embedding, err)
	}
	// The vector search answers with the new vectors: against (1, 0, 0) the longest text,
	// "long text" (9, 0, 1), is nearest and the shortest, "beta" (4, 0, 1), farthest.
	hits, err := s.SearchVector(ctx, "ns", []float32{1, 0, 0}, 10)
	if err != nil || len(hits) != 4 || hits[0].ID != "m4c0" || hits[3].ID != "m2" {
		t.Errorf("SearchVector after reembed: %v, %v; want m4c0 first and m2 last of 4", hits, err)
	}
	// A writer still on the old embedder is refused.
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("ns", "late", 1, 0)}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("an old-size write after reembed: %v, want EINVALID", err)
	}

	boom := errors.New("boom")
	if _, err := s.Reembed(ctx, "ns", 3, 2, func(context.Context, []string) ([][]float32, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("a failing embedder: %v, want it returned", err)
	}
	wrong := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0}
		}
		return out, nil
	}
	if n, err := s.Reembed(ctx, "ns", 3, 2, wrong, nil); err == nil || n != 0 {
		t.Errorf("vectors of the wrong size: %d, %v; want an error before any write", n, err)
	}
	if _, err := s.Reembed(ctx, "", 3, 2, embed, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("no namespace: %v, want EINVALID", err)
	}
	if _, err := s.Reembed(ctx, "ns", 0, 2, embed, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("dims 0: %v, want EINVALID", err)
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
