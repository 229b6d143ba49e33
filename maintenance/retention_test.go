package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/settings"
)

// TestPruneHistory: the job deletes what is older than its run's time minus the retention,
// does nothing without a retention, and leaves what the history taught in place.
func TestPruneHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.add(t, "a", mem("shown first"), mem("shown second"), mem("shown last"))
	shown := t0.Add(time.Hour)
	for i, c := range []string{"shown first", "shown second", "shown last"} {
		sf := &models.Surfacing{ID: "s" + string(rune('1'+i)), Namespace: "a", ConversationID: "c1", TurnID: "t" + string(rune('1'+i)),
			MemoryID: ids[c], Mode: models.ModeAmbient, At: shown.Add(time.Duration(i) * time.Minute)}
		if err := e.st.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Nobody reports: implicit-ignore decides all three, logging an event each.
	ign := maintenance.New(e.st, maintenance.Options{})
	run := newRun(t0)
	if n, err := ign.ImplicitIgnore(run.at(shown.Add(time.Hour), 0), run); err != nil || n != 3 {
		t.Fatalf("implicit-ignore: %d, %v", n, err)
	}
	taught := e.memory(t, "a", ids["shown first"])

	if n, err := ign.PruneHistory(ctx, newRun(shown.Add(1000*time.Hour))); err != nil || n != 0 {
		t.Fatalf("without a retention: pruned %d, %v; want nothing", n, err)
	}
	s := maintenance.New(e.st, maintenance.Options{Retention: 24 * time.Hour})
	if n, err := s.PruneHistory(ctx, newRun(shown.Add(24*time.Hour))); err != nil || n != 0 {
		t.Fatalf("a day after the outcomes' hour: pruned %d, %v; want nothing", n, err)
	}
	n, err := s.PruneHistory(ctx, newRun(shown.Add(26*time.Hour)))
	// Two surfacings (the newest stays in SQLite) and two events (each namespace's latest stays).
	if err != nil || n != 4 {
		t.Fatalf("after the retention: pruned %d, %v; want 4", n, err)
	}
	if _, err := e.st.GetSurfacing(ctx, "a", "s1"); models.ErrorCode(err) != models.ENOTFOUND {
		t.Errorf("s1 after pruning: %v, want not found", err)
	}
	if _, err := e.st.GetSurfacing(ctx, "a", "s3"); err != nil {
		t.Errorf("the newest surfacing: %v", err)
	}
	if m := e.memory(t, "a", ids["shown first"]); m.Confidence != taught.Confidence || m.SurfaceCount != taught.SurfaceCount ||
		m.Schedule != taught.Schedule || m.RecentDismissals != taught.RecentDismissals {
		t.Errorf("the memory changed with its history: %+v, was %+v", m, taught)
	}
	if err := maintenance.CheckRetention(23 * time.Hour); err == nil {
		t.Error("a retention under a day was accepted")
	}
	for _, d := range []time.Duration{0, 24 * time.Hour, 90 * 24 * time.Hour} {
		if err := maintenance.CheckRetention(d); err != nil {
			t.Errorf("retention %v: %v", d, err)
		}
	}
}

// TestPruneHistoryPerNamespace: a namespace's history_retention_days sets its own retention,
// with or without a server retention; a namespace without one follows the server's.
func TestPruneHistoryPerNamespace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	shown := t0.Add(time.Hour)
	for _, ns := range []string{"short", "long", "plain"} {
		ids := e.add(t, ns, mem("one in "+ns), mem("two in "+ns))
		for i, c := range []string{"one in " + ns, "two in " + ns} {
			sf := &models.Surfacing{ID: "s" + string(rune('1'+i)), Namespace: ns, ConversationID: "c1", TurnID: "t" + string(rune('1'+i)),
				MemoryID: ids[c], Mode: models.ModeAmbient, At: shown, Outcome: models.EventUsed, OutcomeAt: shown}
			if err := e.st.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A later turn elsewhere holds the store's newest surfacing (SQLite keeps that one).
	id := e.add(t, "later", mem("a later memory"))["a later memory"]
	if err := e.st.RecordSurfacings(ctx, []*models.Surfacing{{ID: "s9", Namespace: "later", ConversationID: "c", TurnID: "t9",
		MemoryID: id, Mode: models.ModeAmbient, At: shown.Add(1000 * time.Hour)}}, nil); err != nil {
		t.Fatal(err)
	}
	sets := settings.New(e.st, settings.Options{TTL: -1})
	for ns, days := range map[string]float64{"short": 2, "long": 30} {
		if _, err := sets.Update(ctx, ns, "test", func(cur *models.Settings) (*models.Settings, error) {
			cur.HistoryRetentionDays = days
			return cur, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	left := func(ns string) int {
		ss, err := e.st.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return len(ss)
	}
	// No server retention: only short's history goes, three days on.
	s := maintenance.New(e.st, maintenance.Options{Settings: sets})
	if n, err := s.PruneHistory(ctx, newRun(shown.Add(72*time.Hour))); err != nil || n != 2 {
		t.Fatalf("three days on: pruned %d, %v; want short's two surfacings", n, err)
	}
	if l := [3]int{left("short"), left("long"), left("plain")}; l != [3]int{0, 2, 2} {
		t.Fatalf("surfacings left (short, long, plain) = %v, want [0 2 2]", l)
	}
	// A server retention of 10 days: plain goes after 10 days, long keeps its 30.
	s = maintenance.New(e.st, maintenance.Options{Settings: sets, Retention: 10 * 24 * time.Hour})
	if _, err := s.PruneHistory(ctx, newRun(shown.Add(11*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if l := [3]int{left("short"), left("long"), left("plain")}; l != [3]int{0, 2, 0} {
		t.Fatalf("after 11 days with a server retention of 10: surfacings left = %v, want [0 2 0]", l)
	}
	if _, err := s.PruneHistory(ctx, newRun(shown.Add(31*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if l := left("long"); l != 0 {
		t.Fatalf("long after 31 days: %d surfacings left, want 0", l)
	}
}
