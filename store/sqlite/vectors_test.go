package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// TestReembed: what both stores promise (storetest.CheckReembed), then the embedded
// store's own: the rebuilt index searches the new vectors, and a serving store refuses.
func TestReembed(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	storetest.CheckReembed(t, s, s.Reembed)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchVector(ctx, "ns", []float32{1, 0, 0}, 10)
	if err != nil || len(hits) != 4 || hits[0].ID != "m4c0" || hits[3].ID != "m2" {
		t.Errorf("SearchVector after reembed: %v, %v; want m4c0 first and m2 last of 4", hits, err)
	}
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		return make([][]float32, len(texts)), nil
	}
	if _, err := s.Reembed(ctx, "ns", models.EmbedderIdentity{Name: "e3", Dims: 3}, 2, embed, nil); models.ErrorCode(err) != models.ECONFLICT {
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
		embed models.EmbedFunc
		want  string
	}{
		{func(context.Context, []string) ([][]float32, error) { return [][]float32{{1, 2}}, nil }, "a 2-dimension vector for m1, want 3"},
		{func(context.Context, []string) ([][]float32, error) { return nil, nil }, "0 vectors for 1 texts"},
		{func(context.Context, []string) ([][]float32, error) { return nil, errors.New("rate limited") }, "rate limited"},
	} {
		if _, err := s.Reembed(ctx, "ns", models.EmbedderIdentity{Name: "e3", Dims: 3}, 10, tc.embed, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	// Nothing changed.
	if got, _ := s.Embedders(ctx); got["ns"].Dims != 2 {
		t.Errorf("dims %v after failed runs, want 2", got)
	}
}
