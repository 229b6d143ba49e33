package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// TestPruneKeepsNewestSurfacing: when every surfacing is old enough to go, the newest
// stays, so the next one stored takes a rowid above the fold's watermark and is counted on
// its memory — also once the store is reopened and the counters are read from SQLite.
func TestPruneKeepsNewestSurfacing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindFact,
		Content: "the kettle is broken", CreatedAt: t0, Importance: 0.5, Confidence: models.DefaultConfidence}}}); err != nil {
		t.Fatal(err)
	}
	record := func(id string, at time.Time) {
		t.Helper()
		sf := &models.Surfacing{ID: id, Namespace: "ns", ConversationID: "c1", TurnID: "turn-" + id, MemoryID: "m1",
			Mode: models.ModeAmbient, Rank: 1, At: at}
		if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(ctx, func(tx models.Tx) error {
			sf.Outcome, sf.OutcomeAt = models.EventIgnored, at.Add(time.Minute)
			return tx.PutSurfacing(sf)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range []string{"s1", "s2", "s3"} {
		record(id, t0.Add(time.Duration(i)*time.Hour))
	}
	p, err := s.PruneHistory(ctx, t0.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if p.Surfacings != 2 {
		t.Fatalf("pruned %d surfacings, want 2 (the newest stays)", p.Surfacings)
	}
	if _, err := s.GetSurfacing(ctx, "ns", "s3"); err != nil {
		t.Fatalf("the newest surfacing: %v", err)
	}
	record("s4", t0.Add(72*time.Hour))
	count := func(s *Store, what string) {
		t.Helper()
		m, err := s.GetMemory(ctx, "ns", "m1")
		if err != nil {
			t.Fatal(err)
		}
		if m.SurfaceCount != 4 || !m.LastSurfaced.Equal(t0.Add(72*time.Hour)) {
			t.Fatalf("%s: surface count %d, last %v; want 4, %v", what, m.SurfaceCount, m.LastSurfaced, t0.Add(72*time.Hour))
		}
	}
	count(s, "open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openAt(t, path)
	if err := r.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	count(r, "reopened")
}

// TestPruneSmallBatches runs the suite's pruning test with windows of two rows, so that
// every cursor moves through several windows, ties of time between them included.
func TestPruneSmallBatches(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 2
	storetest.PruneHistory(t, func(t *testing.T) models.Store { return openReady(t) })
}
