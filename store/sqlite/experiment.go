package sqlite

import (
	"context"
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
	if err := models.ValidateStoredExperiment(e); err != nil {
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
	if err := models.ValidateKey(ns, id, "id"); err != nil {
		return nil, err
	}
	e, err := scanExperiment(s.rdb.QueryRowContext(ctx, selectExperiment, ns, id))
	if errors.Is(err, errNoRows) {
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
		if errors.Is(err, errNoRows) {
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

// TallyExperiment reads the experiment's counters, which the write paths keep
// (experiment_tally.go), and reports them as the rule says (models.Tallies.Report): a
// report reads a few thousand counters, never the experiment's rows.
func (s *Store) TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*models.VariantTally, error) {
	e, err := s.GetExperiment(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	if err := models.CheckStoredTime("as_of", asOf); err != nil {
		return nil, err
	}
	t, err := s.readTallies(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	return t.Report(e.VariantNames(), asOf), nil
}
