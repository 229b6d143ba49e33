package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// A database written before experiments counted empty turns (migration 0015) opens with the
// empty turns of past days counted from its decisions, and its experiments read with no
// primary metric (the report takes the default).
func TestExperimentMetricsMigrationCountsPastEmptyTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	day1 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	e := &models.Experiment{ID: "x", Namespace: "n", Name: "quiet", Status: models.ExperimentRunning, CreatedAt: day1,
		Variants: []models.Variant{{Name: "control", Share: 0.5}, {Name: "quiet", Share: 0.5}}}
	if err := s.CreateExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	for i, surfaced := range []int{0, 2, 0, 1} {
		d := &models.Decision{Namespace: "n", TurnID: "t" + string(rune('a'+i)), ConversationID: "c", ConvType: models.ConvOther,
			Variant: "control", Experiment: "x", Policy: "bandit", Prob: 1, Surfaced: surfaced, At: day1.Add(time.Duration(i) * time.Minute)}
		if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The database as the release before 0015 left it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER experiment_empty_turn`, `ALTER TABLE experiment_days DROP COLUMN empty_turns`,
		`ALTER TABLE experiments DROP COLUMN primary_metric`, `DELETE FROM migrations WHERE name = 'migrations/0015_experiment_metrics.sql'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetExperiment(ctx, "n", "x")
	if err != nil || got.PrimaryMetric != "" {
		t.Fatalf("experiment %+v, %v; want it read with no primary metric", got, err)
	}
	tally, err := s.TallyExperiment(ctx, "n", "x", day1.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if c := tally[0]; c.Turns != 4 || c.EmptyTurns != 2 || len(c.Days) != 1 || c.Days[0].EmptyTurns != 2 {
		t.Errorf("control tally %+v, want 4 turns of which 2 empty, on one day", *c)
	}
}
