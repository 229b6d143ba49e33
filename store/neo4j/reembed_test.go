package neo4j

import (
	"context"
	"errors"
	"testing"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// testReembed: what both stores promise (storetest.CheckReembed), then Neo4j's own: the
// vector search answers with the new vectors at once; the namespace took the new size, so
// a writer still on the old embedder is refused; failing and wrong-size embedders stop it
// with an error before any write; bad arguments are EINVALID.
func testReembed(t *testing.T, s *Store) {
	wipe(t, s)
	ctx := context.Background()
	storetest.CheckReembed(t, s, s.Reembed)
	hits, err := s.SearchVector(ctx, "ns", []float32{1, 0, 0}, 10)
	if err != nil || len(hits) != 4 || hits[0].ID != "m4c0" || hits[3].ID != "m2" {
		t.Errorf("SearchVector after reembed: %v, %v; want m4c0 first and m2 last of 4", hits, err)
	}
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0, 0}
		}
		return out, nil
	}
	// A writer still on the old embedder is refused.
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("ns", "late", 1, 0)}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("an old-size write after reembed: %v, want EINVALID", err)
	}

	e3 := models.EmbedderIdentity{Name: "e3", Dims: 3}
	boom := errors.New("boom")
	if _, err := s.Reembed(ctx, "ns", e3, 2, func(context.Context, []string) ([][]float32, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Errorf("a failing embedder: %v, want it returned", err)
	}
	wrong := func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0}
		}
		return out, nil
	}
	if n, err := s.Reembed(ctx, "ns", e3, 2, wrong, nil); err == nil || n != 0 {
		t.Errorf("vectors of the wrong size: %d, %v; want an error before any write", n, err)
	}
	if _, err := s.Reembed(ctx, "", e3, 2, embed, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("no namespace: %v, want EINVALID", err)
	}
	if _, err := s.Reembed(ctx, "ns", models.EmbedderIdentity{Name: "e0"}, 2, embed, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("dims 0: %v, want EINVALID", err)
	}
	if _, err := s.Reembed(ctx, "ns", models.EmbedderIdentity{Dims: 3}, 2, embed, nil); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("no embedder name: %v, want EINVALID", err)
	}
}
