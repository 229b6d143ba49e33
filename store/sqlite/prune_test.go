package sqlite

import (
	"fmt"
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
	createKettle(t, s, t0)
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
	p, err := s.PruneHistory(ctx, models.PruneCut{Before: t0.Add(48 * time.Hour)})
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

// TestPruneWhileTurnsArrive: pruning runs beside recorded turns and engagement updates in
// small windows; it deletes every old row that may go, none of the new ones, and the
// writers see no error.
func TestPruneWhileTurnsArrive(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 16
	s := openReady(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	createKettle(t, s, t0)
	turn := func(i int, at time.Time) error {
		id := fmt.Sprintf("s%04d", i)
		sf := &models.Surfacing{ID: id, Namespace: "ns", ConversationID: fmt.Sprintf("c%d", i%7), TurnID: "turn-" + id,
			MemoryID: "m1", Mode: models.ModeAmbient, Rank: 1, At: at}
		state := &models.ConversationState{Namespace: "ns", ConversationID: sf.ConversationID, Turns: 1, UpdatedAt: at}
		if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, state); err != nil {
			return err
		}
		return s.Update(ctx, func(tx models.Tx) error {
			sf.Outcome, sf.OutcomeAt = models.EventUsed, at
			if err := tx.PutSurfacing(sf); err != nil {
				return err
			}
			return tx.InsertEvent(&models.Event{ID: "e-" + id, Namespace: "ns", SurfacingID: id, Type: models.EventUsed, At: at})
		})
	}
	const old, fresh = 400, 200
	for i := range old {
		if err := turn(i, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	cut := t0.Add(24 * time.Hour)
	errs := make(chan error, 1)
	go func() {
		for i := range fresh {
			if err := turn(old+i, cut.Add(time.Duration(i)*time.Second)); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	p, err := s.PruneHistory(ctx, models.PruneCut{Before: cut})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("a turn beside the pruning: %v", err)
	}
	// A second call takes what the first met in the journal or after it: the newest row,
	// kept while it was the newest, is old only if no fresh turn had been stored yet.
	p2, err := s.PruneHistory(ctx, models.PruneCut{Before: cut})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Surfacings + p2.Surfacings; got != old {
		t.Errorf("pruned %d + %d surfacings, want all %d old ones", p.Surfacings, p2.Surfacings, old)
	}
	if got := p.Events + p2.Events; got != old {
		t.Errorf("pruned %d + %d events, want all %d old ones", p.Events, p2.Events, old)
	}
	ss, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns", Limit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != fresh || ss[0].At.Before(cut) {
		t.Fatalf("%d surfacings left, the oldest at %v; want the %d fresh ones", len(ss), ss[0].At, fresh)
	}
	evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: "ns", BySeq: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != fresh || evs[0].Seq != old+1 || evs[len(evs)-1].Seq != old+fresh {
		t.Fatalf("events left: %d, seq %d to %d; want %d, %d to %d", len(evs), evs[0].Seq, evs[len(evs)-1].Seq, fresh, old+1, old+fresh)
	}
	m, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if m.SurfaceCount != old+fresh {
		t.Errorf("surface count %d, want %d", m.SurfaceCount, old+fresh)
	}
	// Every conversation had a fresh turn: its state is the fresh one, pruned or not before.
	for i := range 7 {
		c, err := s.GetConversation(ctx, "ns", fmt.Sprintf("c%d", i))
		if err != nil || c.UpdatedAt.Before(cut) {
			t.Errorf("conversation c%d: %+v, %v; want its fresh state", i, c, err)
		}
	}
}

// createKettle stores the memory "m1" of namespace "ns" the pruning tests surface.
func createKettle(t *testing.T, s *Store, at time.Time) {
	t.Helper()
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindFact,
		Content: "the kettle is broken", CreatedAt: at, Importance: 0.5, Confidence: models.DefaultConfidence}}}); err != nil {
		t.Fatal(err)
	}
}
