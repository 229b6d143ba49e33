package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestReembed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var writes []*models.MemoryWrite
	for i, c := range []string{"alpha", "beta", "gamma"} {
		writes = append(writes, &models.MemoryWrite{Memory: &models.Memory{
			ID: "m" + string(rune('1'+i)), Namespace: "ns", Kind: models.KindTurn, Content: c, CreatedAt: at, Embedding: []float32{1, 0}}})
	}
	// A chunked memory: the chunk is embedded, its parent is not.
	parent := &models.Memory{ID: "m4", Namespace: "ns", Kind: models.KindDocument, Content: "long text", CreatedAt: at, ChunkCount: 1}
	chunk := &models.Memory{ID: "m4c0", Namespace: "ns", Kind: models.KindDocument, Content: "long text", CreatedAt: at, ParentID: "m4", Embedding: []float32{0, 1}}
	writes = append(writes, &models.MemoryWrite{Memory: parent, Chunks: []*models.Memory{chunk}},
		&models.MemoryWrite{Memory: &models.Memory{ID: "o1", Namespace: "other", Kind: models.KindTurn, Content: "x", CreatedAt: at, Embedding: []float32{1, 0}}})
	if err := s.CreateMemories(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if got, err := s.VectorDims(ctx); err != nil || got["ns"] != 2 || got["other"] != 2 || len(got) != 2 {
		t.Fatalf("VectorDims = %v, %v; want ns and other at 2", got, err)
	}

	var sent []string
	var steps [][2]int
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		sent = append(sent, texts...)
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = []float32{float32(len(t)), 0, 0} // 3 dims now
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
	if got, _ := s.VectorDims(ctx); got["ns"] != 3 || got["other"] != 2 {
		t.Errorf("VectorDims after = %v, want ns 3, other untouched 2", got)
	}
	m, err := s.GetMemory(ctx, "ns", "m2")
	if err != nil || !slices.Equal(m.Embedding, []float32{1, 0, 0}) { // (4,0,0) normalized
		t.Errorf("m2 embedding %v, %v", m.Embedding, err)
	}
	if p, _ := s.GetMemory(ctx, "ns", "m4"); len(p.Embedding) != 0 {
		t.Errorf("the chunked parent got a vector: %v", p.Embedding)
	}

	// The new vectors are what the rebuilt index searches.
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchVector(ctx, "ns", []float32{1, 0, 0}, 10)
	if err != nil || len(hits) != 4 {
		t.Errorf("SearchVector after reembed: %v, %v; want 4 hits", hits, err)
	}
	// A serving store refuses.
	if _, err := s.Reembed(ctx, "ns", 3, 2, embed, nil); models.ErrorCode(err) != models.ECONFLICT {
		t.Errorf("Reembed on a ready store: %v, want ECONFLICT", err)
	}
}

func TestReembedBadVectors(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindTurn, Content: "a", CreatedAt: at, Embedding: []float32{1, 0}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		embed EmbedFunc
		want  string
	}{
		{func(context.Context, []string) ([][]float32, error) { return [][]float32{{1, 2}}, nil }, "a 2-dimension vector for m1, want 3"},
		{func(context.Context, []string) ([][]float32, error) { return nil, nil }, "0 vectors for 1 texts"},
		{func(context.Context, []string) ([][]float32, error) { return nil, errors.New("rate limited") }, "rate limited"},
	} {
		if _, err := s.Reembed(ctx, "ns", 3, 10, tc.embed, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	// Nothing changed.
	if got, _ := s.VectorDims(ctx); got["ns"] != 2 {
		t.Errorf("dims %v after failed runs, want 2", got)
	}
}
