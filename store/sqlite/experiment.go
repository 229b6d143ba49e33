package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/salience-ai/salience/models"
)

// experimentRows holds experiments; the variants are one JSON document.
var experimentRows = newTable("experiments", []string{"ns", "id"},
	textCol("ns", func(e *models.Experiment) *string { return &e.Namespace }),
	textCol("id", func(e *models.Experiment) *string { return &e.ID }),
	textCol("name", func(e *models.Experiment) *string { return &e.Name }),
	textCol("description", func(e *models.Experiment) *string { return &e.Description }),
	textCol("status", func(e *models.Experiment) *string { return &e.Status }),
	jsonCol("variants", func(e *models.Experiment) *[]models.Variant { return &e.Variants },
		func(v []models.Variant) bool { return false }),
	timeCol("created_at", func(e *models.Experiment) *time.Time { return &e.CreatedAt }),
	textCol("created_by", func(e *models.Experiment) *string { return &e.CreatedBy }),
	timeCol("stopped_at", func(e *models.Experiment) *time.Time { return &e.StoppedAt }),
	textCol("primary_metric", func(e *models.Experiment) *string { return &e.PrimaryMetric }),
)

var (
	insertExperiment = experimentRows.insert("")
	selectExperiment = experimentRows.sel + ` WHERE ns = ? AND id = ?`
	scanExperiment   = scanRow(experimentRows)
)

// CreateExperiment stores a new experiment; the primary key and the one-running index make
// a duplicate id or a second running experiment ECONFLICT.
func (s *Store) CreateExperiment(ctx context.Context, e *models.Experiment) error {
	if e == nil {
		return models.Invalid("experiment", "experiment is missing")
	}
	if err := e.Validate(); err != nil {
		return err
	}
	if err := errors.Join(models.CheckStoredTime("created_at", e.CreatedAt), models.CheckStoredTime("stopped_at", e.StoppedAt)); err != nil {
		return err
	}
	return s.write(ctx, "create experiment", func(tx *wtx) (func(), error) {
		_, err := tx.ExecContext(ctx, insertExperiment.sql, insertExperiment.bind(e)...)
		if isConstraintUnique(err) {
			return nil, models.Errorf(models.ECONFLICT, "experiment %s exists, or namespace %s already runs an experiment (stop it first)", e.ID, e.Namespace)
		}
		return nil, err
	})
}

// GetExperiment returns one experiment.
func (s *Store) GetExperiment(ctx context.Context, ns, id string) (*models.Experiment, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	e, err := scanExperiment(s.rdb.QueryRowContext(ctx, selectExperiment, ns, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("experiment %s not found", id)
	}
	return e, wrap(err, "get experiment")
}

// FindExperiments lists a namespace's experiments, newest first.
func (s *Store) FindExperiments(ctx context.Context, ns string) ([]*models.Experiment, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	return queryAll(ctx, s.rdb, "find experiments", experimentRows.sel+` WHERE ns = ? ORDER BY created_at DESC, id DESC`, []any{ns}, scanExperiment)
}

// StopExperiment marks a running experiment stopped.
func (s *Store) StopExperiment(ctx context.Context, ns, id string, at time.Time) (*models.Experiment, error) {
	if err := models.ValidateStopExperiment(ns, id, at); err != nil {
		return nil, err
	}
	var out *models.Experiment
	err := s.write(ctx, "stop experiment", func(tx *wtx) (func(), error) {
		e, err := scanExperiment(tx.QueryRowContext(ctx, selectExperiment, ns, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound("experiment %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		if e.Status == models.ExperimentRunning {
			e.Status, e.StoppedAt = models.ExperimentStopped, at
			if _, err := tx.ExecContext(ctx, `UPDATE experiments SET status = ?, stopped_at = ? WHERE ns = ? AND id = ?`,
				e.Status, encTime(at), ns, id); err != nil {
				return nil, err
			}
		}
		out = e
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dayNanos is one day in the unit of the time columns: integer division buckets a time
// into its UTC day.
const dayNanos = int64(24 * time.Hour)

// TallyExperiment counts an experiment's turns and surfacings per variant and UTC day. The
// days before asOf's day come from the running counts the triggers of migration 0007 keep
// (their outcomes as known now); asOf's own day is counted from the rows, exactly as of
// asOf. So a report costs a scan of one day, not of the experiment's life.
func (s *Store) TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*models.VariantTally, error) {
	e, err := s.GetExperiment(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	if err := models.CheckStoredTime("as_of", asOf); err != nil {
		return nil, err
	}
	if err := s.settleRead(ctx); err != nil { // the counts of journaled turns
		return nil, err
	}
	before := filterTime(asOf)
	today := floorDiv(before, dayNanos) // asOf's unix day
	out := make([]*models.VariantTally, len(e.Variants))
	byName := make(map[string]*models.VariantTally, len(e.Variants))
	days := make(map[string]map[int64]*models.DayTally, len(e.Variants))
	for i, v := range e.Variants {
		out[i] = &models.VariantTally{Variant: v.Name}
		byName[v.Name] = out[i]
		days[v.Name] = map[int64]*models.DayTally{}
	}
	day := func(variant string, d int64) *models.DayTally {
		m := days[variant]
		if m[d] == nil {
			m[d] = &models.DayTally{Day: time.Unix(0, d*dayNanos).UTC()}
		}
		return m[d]
	}
	// Rows of a variant the experiment does not have cannot be (variants never change); they
	// are skipped rather than trusted.
	q := func(what, query string, args []any, each func(rows *sql.Rows) error) error {
		rows, err := s.rdb.QueryContext(ctx, query, args...)
		if err != nil {
			return wrap(err, what)
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				return wrap(err, what)
			}
		}
		return wrap(rows.Err(), what)
	}
	// The days before today, from the counts.
	err = q("tally experiment days", `SELECT variant, day, turns, empty_turns, surfaced, used, helpful, ignored, dismissed
		FROM experiment_days WHERE ns = ? AND experiment_id = ? AND day < ?`, []any{ns, id, today}, func(rows *sql.Rows) error {
		var v string
		var d int64
		var dt models.DayTally
		if err := rows.Scan(&v, &d, &dt.Turns, &dt.EmptyTurns, &dt.Surfaced, &dt.Used, &dt.Helpful, &dt.Ignored, &dt.Dismissed); err != nil {
			return err
		}
		if byName[v] != nil {
			dt.Day = day(v, d).Day
			*day(v, d) = dt
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("tally experiment latencies", `SELECT variant, tenths, SUM(n) FROM experiment_latencies
		WHERE ns = ? AND experiment_id = ? AND day < ? GROUP BY variant, tenths`, []any{ns, id, today}, func(rows *sql.Rows) error {
		var v string
		var tenths int64
		var n int
		if err := rows.Scan(&v, &tenths, &n); err != nil {
			return err
		}
		if t := byName[v]; t != nil {
			for range n {
				t.LatenciesMS = append(t.LatenciesMS, float64(tenths)/10)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("tally experiment conversations", `SELECT variant, COUNT(*) FROM experiment_conversations
		WHERE ns = ? AND experiment_id = ? AND first_at < ? GROUP BY variant`, []any{ns, id, before}, func(rows *sql.Rows) error {
		var v string
		var n int
		if err := rows.Scan(&v, &n); err != nil {
			return err
		}
		if t := byName[v]; t != nil {
			t.Conversations = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Today, from the rows, as of asOf. Every query repeats experiment_id != '': with the id
	// a bound parameter, SQLite cannot otherwise tell that the partial indexes apply.
	args := []any{ns, id, today * dayNanos, before}
	err = q("tally experiment turns", `SELECT variant, latency_ms, surfaced = 0 FROM decisions INDEXED BY decisions_experiment
		WHERE ns = ? AND experiment_id = ? AND experiment_id != '' AND at >= ? AND at < ?`, args, func(rows *sql.Rows) error {
		var v string
		var ms float64
		var empty bool
		if err := rows.Scan(&v, &ms, &empty); err != nil {
			return err
		}
		if t := byName[v]; t != nil {
			d := day(v, today)
			d.Turns++
			if empty {
				d.EmptyTurns++
			}
			// As the counts keep them: to a tenth of a millisecond.
			t.LatenciesMS = append(t.LatenciesMS, math.Round(ms*10)/10)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// An outcome counts once decided by asOf: a report's event time, or (implicit ignores,
	// outcome_at unset: noTime, below every time) the surfacing's own time, which is before
	// asOf already.
	err = q("tally experiment surfacings", `SELECT variant, COUNT(*),
		SUM(outcome = 'used' AND outcome_at <= ?), SUM(outcome = 'helpful' AND outcome_at <= ?),
		SUM(outcome = 'ignored' AND outcome_at <= ?), SUM(outcome = 'dismissed' AND outcome_at <= ?)
		FROM surfacings INDEXED BY surfacings_experiment
		WHERE ns = ? AND experiment_id = ? AND experiment_id != '' AND at >= ? AND at < ? AND mode IN ('ambient', 'resurface')
		GROUP BY variant`, append([]any{before, before, before, before}, args...), func(rows *sql.Rows) error {
		var v string
		var n, used, helpful, ignored, dismissed int
		if err := rows.Scan(&v, &n, &used, &helpful, &ignored, &dismissed); err != nil {
			return err
		}
		if byName[v] != nil {
			dt := day(v, today)
			dt.Surfaced, dt.Used, dt.Helpful, dt.Ignored, dt.Dismissed = n, used, helpful, ignored, dismissed
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		for _, d := range days[t.Variant] {
			if *d == (models.DayTally{Day: d.Day}) {
				continue // a day with nothing counted by asOf
			}
			t.Days = append(t.Days, *d)
			t.Turns += d.Turns
			t.EmptyTurns += d.EmptyTurns
			t.Surfaced += d.Surfaced
			t.Used += d.Used
			t.Helpful += d.Helpful
			t.Ignored += d.Ignored
			t.Dismissed += d.Dismissed
		}
		models.SortDays(t.Days)
	}
	return out, nil
}

// floorDiv is a / b rounded down (Go's / truncates towards zero: days before 1970).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
