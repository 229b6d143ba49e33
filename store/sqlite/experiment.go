package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	if err := errors.Join(checkTime("created_at", e.CreatedAt), checkTime("stopped_at", e.StoppedAt)); err != nil {
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
	if err := validateID(id, "id"); err != nil {
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
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := validateID(id, "id"); err != nil {
		return nil, err
	}
	if at.IsZero() {
		return nil, models.Invalid("stopped_at", "the stop time is required")
	}
	if err := checkTime("stopped_at", at); err != nil {
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

// TallyExperiment counts an experiment's turns and surfacings per variant and UTC day in
// SQL, over the partial indexes of migration 0007; only the turns' latencies come back row
// by row, since percentiles need them all.
func (s *Store) TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*models.VariantTally, error) {
	e, err := s.GetExperiment(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	if err := checkTime("as_of", asOf); err != nil {
		return nil, err
	}
	before := filterTime(asOf)
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
	// A variant no longer in the experiment's record cannot be: variants never change. Rows
	// of an unknown name are skipped rather than trusted.
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
	args := []any{ns, id, before}
	err = q("tally experiment turns", `SELECT variant, COUNT(*), COUNT(DISTINCT conversation_id) FROM decisions
		WHERE ns = ? AND experiment_id = ? AND at < ? GROUP BY variant`, args, func(rows *sql.Rows) error {
		var v string
		var turns, convs int
		if err := rows.Scan(&v, &turns, &convs); err != nil {
			return err
		}
		if t := byName[v]; t != nil {
			t.Turns, t.Conversations = turns, convs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("tally experiment days", `SELECT variant, at / ?, COUNT(*) FROM decisions
		WHERE ns = ? AND experiment_id = ? AND at < ? GROUP BY 1, 2`, append([]any{dayNanos}, args...), func(rows *sql.Rows) error {
		var v string
		var d int64
		var n int
		if err := rows.Scan(&v, &d, &n); err != nil {
			return err
		}
		if byName[v] != nil {
			day(v, d).Turns = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = q("tally experiment latencies", `SELECT variant, latency_ms FROM decisions
		WHERE ns = ? AND experiment_id = ? AND at < ?`, args, func(rows *sql.Rows) error {
		var v string
		var ms float64
		if err := rows.Scan(&v, &ms); err != nil {
			return err
		}
		if t := byName[v]; t != nil {
			t.LatenciesMS = append(t.LatenciesMS, ms)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// An outcome counts once decided by asOf: a report's event time, or (implicit ignores,
	// outcome_at 0) the surfacing's own time, which is before asOf already.
	err = q("tally experiment surfacings", `SELECT variant, at / ?, COUNT(*),
		SUM(outcome = 'used' AND outcome_at <= ?), SUM(outcome = 'helpful' AND outcome_at <= ?),
		SUM(outcome = 'ignored' AND outcome_at <= ?), SUM(outcome = 'dismissed' AND outcome_at <= ?)
		FROM surfacings WHERE ns = ? AND experiment_id = ? AND at < ? AND mode IN ('ambient', 'resurface')
		GROUP BY 1, 2`, append([]any{dayNanos, before, before, before, before}, args...), func(rows *sql.Rows) error {
		var v string
		var d int64
		var n, used, helpful, ignored, dismissed int
		if err := rows.Scan(&v, &d, &n, &used, &helpful, &ignored, &dismissed); err != nil {
			return err
		}
		t := byName[v]
		if t == nil {
			return nil
		}
		dt := day(v, d)
		dt.Surfaced, dt.Used, dt.Helpful, dt.Ignored, dt.Dismissed = n, used, helpful, ignored, dismissed
		t.Surfaced += n
		t.Used += used
		t.Helpful += helpful
		t.Ignored += ignored
		t.Dismissed += dismissed
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		for _, d := range days[t.Variant] {
			t.Days = append(t.Days, *d)
		}
		models.SortDays(t.Days)
	}
	return out, nil
}
