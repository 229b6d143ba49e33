package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// A database written by an earlier release — before experiments counted empty turns (0015),
// or while triggers kept the counts (before 0016) — opens with the tallies this code counts
// for the same turns and surfacings: the counts kept so far carry over, outcomes move to the
// day they were decided, and the experiment reads with no primary metric (the default).
func TestExperimentCountsMigrate(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	s, err := Open(fresh, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	e := &models.Experiment{ID: "x", Namespace: "n", Name: "x", Status: models.ExperimentRunning, CreatedAt: start,
		Variants: []models.Variant{{Name: "a", Share: 0.5}, {Name: "b", Share: 0.5}}}
	if err := s.CreateExperiment(ctx, e); err != nil {
		t.Fatal(err)
	}
	writeExperimentTraffic(t, s, start, 7)
	asOfs := []time.Time{start.Add(-time.Hour), start.Add(24 * time.Hour), start.Add(36 * time.Hour), start.Add(72 * time.Hour), start.Add(10 * 24 * time.Hour)}
	want := make([][]*models.VariantTally, len(asOfs))
	for i, asOf := range asOfs {
		if want[i], err = s.TallyExperiment(ctx, "n", "x", asOf); err != nil {
			t.Fatal(err)
		}
	}
	if want[len(want)-1][0].Turns == 0 || want[len(want)-1][0].Used == 0 {
		t.Fatalf("nothing counted: %+v", *want[len(want)-1][0])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for _, last := range []string{"0014_source_role.sql", "0015_experiment_metrics.sql"} {
		t.Run(last, func(t *testing.T) {
			path := filepath.Join(dir, "before-"+last+".db")
			copyIntoOldSchema(t, fresh, path, last)
			old, err := Open(path, Options{Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			got, err := old.GetExperiment(ctx, "n", "x")
			if err != nil || got.PrimaryMetric != "" {
				t.Fatalf("experiment %+v, %v; want it read with no primary metric", got, err)
			}
			for i, asOf := range asOfs {
				tally, err := old.TallyExperiment(ctx, "n", "x", asOf)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range append(tally, want[i]...) {
					slices.Sort(v.LatenciesMS)
				}
				if !reflect.DeepEqual(tally, want[i]) {
					t.Errorf("as of %s:\n got %s\nwant %s", asOf, fmtTallies(tally), fmtTallies(want[i]))
				}
			}
		})
	}
}

func fmtTallies(ts []*models.VariantTally) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%+v ", *t)
	}
	return b.String()
}

// writeExperimentTraffic records random turns of experiment x of namespace n over four days
// from start: fractional latencies, empty turns, ambient, resurface and search surfacings,
// outcomes decided with them, later the same day or days later (some replacing an implicit
// ignore), conversations whose first turn is recorded after a later one.
func writeExperimentTraffic(t *testing.T, s *Store, start time.Time, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	outcomes := []models.EventType{models.EventUsed, models.EventHelpful, models.EventIgnored, models.EventDismissed}
	for i := range 300 {
		v := []string{"a", "b"}[rng.IntN(2)]
		at := start.Add(time.Duration(rng.IntN(4*86400)) * time.Second)
		turn, conv := fmt.Sprintf("t%d", i), fmt.Sprintf("%s-c%d", v, rng.IntN(40))
		shown := rng.IntN(3)
		d := &models.Decision{Namespace: "n", TurnID: turn, ConversationID: conv, Variant: v, Experiment: "x", Policy: "bandit",
			Prob: 1, LatencyMS: rng.Float64() * 40, Surfaced: shown, At: at}
		if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutDecision(d) }); err != nil {
			t.Fatal(err)
		}
		for k := range shown {
			sf := &models.Surfacing{ID: fmt.Sprintf("%s-%d", turn, k), Namespace: "n", ConversationID: conv, TurnID: turn, MemoryID: "m",
				Mode: []models.Mode{models.ModeAmbient, models.ModeResurface, models.ModeSearch}[rng.IntN(3)], Variant: v, Experiment: "x", At: at}
			if rng.IntN(4) == 0 {
				sf.Outcome = models.EventIgnored // implicit: no time of its own
			}
			if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) > 0 {
				sf.Outcome, sf.OutcomeAt = outcomes[rng.IntN(4)], at.Add(time.Duration(rng.IntN(3*86400))*time.Second)
				if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutSurfacing(sf) }); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// copyIntoOldSchema makes at path a database with the migrations up to last applied, as the
// release that ended with last left it, and copies into it the experiments, decisions and
// surfacings of the database at from: inserted there, they are counted by the triggers of
// that schema.
func copyIntoOldSchema(t *testing.T, from, path, last string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the attached database is the connection's
	if _, err := db.Exec(`CREATE TABLE migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, name := range names {
		if name > "migrations/"+last {
			break
		}
		body, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.Exec(`INSERT INTO migrations (name, applied_at) VALUES (?, 0)`, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`ATTACH DATABASE ? AS src`, from); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"experiments", "decisions", "surfacings"} {
		var cols []string
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?, 'main')`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		rows.Close()
		list := strings.Join(cols, ", ")
		if _, err := db.Exec(`INSERT INTO main.` + table + ` (` + list + `) SELECT ` + list + ` FROM src.` + table); err != nil {
			t.Fatalf("copy %s: %v", table, err)
		}
	}
	if _, err := db.Exec(`DETACH DATABASE src`); err != nil {
		t.Fatal(err)
	}
}
