package neo4j

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// Experiments are (:Experiment {ns, id}) nodes with their variants as one JSON property.
// Community edition has no partial unique constraint, so "one running experiment per
// namespace" is kept by creating under the namespace's update lock.

func experimentProps(e *models.Experiment) map[string]any {
	return map[string]any{
		"ns": e.Namespace, "id": e.ID, "name": e.Name, "description": e.Description, "status": e.Status,
		"variants": encJSON(e.Variants, false), "created_at": encTime(e.CreatedAt), "created_by": e.CreatedBy,
		"stopped_at": encTime(e.StoppedAt), "primary_metric": e.PrimaryMetric,
	}
}

func decExperiment(v any) (*models.Experiment, error) {
	p := asProps(v)
	e := &models.Experiment{
		Namespace: p.str("ns"), ID: p.str("id"), Name: p.str("name"), Description: p.str("description"),
		Status: p.str("status"), CreatedAt: p.time("created_at"), CreatedBy: p.str("created_by"),
		StoppedAt: p.time("stopped_at"), PrimaryMetric: p.str("primary_metric"),
	}
	p.json("variants", &e.Variants)
	return e, p.err
}

const (
	createExperimentCheck = `OPTIONAL MATCH (same:Experiment {ns: $ns, id: $id})
		OPTIONAL MATCH (run:Experiment {ns: $ns, status: 'running'})
		RETURN count(same) AS same, count(run) AS running`
	createExperiment = `CREATE (e:Experiment) SET e = $p`
	getExperiment    = `MATCH (e:Experiment {ns: $ns, id: $id}) RETURN e {.*} AS e`
	findExperiments  = `MATCH (e:Experiment {ns: $ns}) RETURN e {.*} AS e ORDER BY e.created_at DESC, e.id DESC`
	stopExperiment   = `MATCH (e:Experiment {ns: $ns, id: $id}) WHERE e.status = 'running'
		SET e.status = 'stopped', e.stopped_at = $at`

	// A tally reads the experiment's turns and surfacings as they are and folds them
	// through the rule of models/tally.go, as SQLite folds each write into its counters:
	// no count is decided in Cypher.
	tallyDecisions = `MATCH (d:Decision {ns: $ns, experiment: $id})
		RETURN d.conv AS conv, d.variant AS v, d.at AS at, d.latency AS ms, d.surfaced AS surfaced`
	tallySurfacings = `MATCH (s:Surfacing {ns: $ns, experiment: $id})
		RETURN s.variant AS v, s.mode AS mode, s.at AS at, s.outcome AS outcome, s.outcome_at AS outcome_at`
)

// CreateExperiment stores a new experiment under the namespace's update lock.
func (s *Store) CreateExperiment(ctx context.Context, e *models.Experiment) error {
	if err := models.ValidateStoredExperiment(e); err != nil {
		return err
	}
	return s.write(ctx, "create experiment", func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, lockNamespace, map[string]any{"ns": e.Namespace}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, createExperimentCheck, map[string]any{"ns": e.Namespace, "id": e.ID})
		if err != nil {
			return err
		}
		same, _ := recs[0].Values[0].(int64)
		running, _ := recs[0].Values[1].(int64)
		if same > 0 || (running > 0 && e.Status == models.ExperimentRunning) {
			return models.Errorf(models.ECONFLICT, "experiment %s exists, or namespace %s already runs an experiment (stop it first)", e.ID, e.Namespace)
		}
		return exec(ctx, tx, createExperiment, map[string]any{"p": experimentProps(e)})
	})
}

// GetExperiment returns one experiment.
func (s *Store) GetExperiment(ctx context.Context, ns, id string) (*models.Experiment, error) {
	if err := models.ValidateKey(ns, id, "id"); err != nil {
		return nil, err
	}
	var out *models.Experiment
	err := s.read(ctx, "get experiment", func(tx runner) error {
		recs, err := collect(ctx, tx, getExperiment, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return notFound("experiment %s not found", id)
		}
		out, err = decExperiment(recs[0].Values[0])
		return err
	})
	return out, err
}

// FindExperiments lists a namespace's experiments, newest first.
func (s *Store) FindExperiments(ctx context.Context, ns string) ([]*models.Experiment, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	var out []*models.Experiment
	err := s.read(ctx, "find experiments", func(tx runner) error {
		recs, err := collect(ctx, tx, findExperiments, map[string]any{"ns": ns})
		if err != nil {
			return err
		}
		out = make([]*models.Experiment, 0, len(recs))
		for _, r := range recs {
			e, err := decExperiment(r.Values[0])
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// StopExperiment marks a running experiment stopped.
func (s *Store) StopExperiment(ctx context.Context, ns, id string, at time.Time) (*models.Experiment, error) {
	if err := models.ValidateStopExperiment(ns, id, at); err != nil {
		return nil, err
	}
	var out *models.Experiment
	err := s.write(ctx, "stop experiment", func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, stopExperiment, map[string]any{"ns": ns, "id": id, "at": encTime(at)}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, getExperiment, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return notFound("experiment %s not found", id)
		}
		out, err = decExperiment(recs[0].Values[0])
		return err
	})
	return out, err
}

// TallyExperiment folds the experiment's turns and surfacings through the tally rule
// (models.Tallies) and reports it as of asOf.
func (s *Store) TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*models.VariantTally, error) {
	e, err := s.GetExperiment(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	if err := models.CheckStoredTime("as_of", asOf); err != nil {
		return nil, err
	}
	var t models.Tallies
	params := map[string]any{"ns": ns, "id": id}
	err = s.read(ctx, "tally experiment", func(tx runner) error {
		t = models.Tallies{} // a retried transaction starts over
		recs, err := collect(ctx, tx, tallyDecisions, params)
		if err != nil {
			return err
		}
		firsts := map[string]models.FirstTurn{} // by conversation
		for _, r := range recs {
			p := asProps(r.AsMap())
			d := &models.Decision{Namespace: ns, Experiment: id, ConversationID: p.str("conv"), Variant: p.str("v"),
				At: p.time("at"), LatencyMS: p.f64("ms"), Surfaced: p.int("surfaced")}
			if p.err != nil {
				return p.err
			}
			t.Decision(nil, d)
			if first, changed := t.Conversation(d, firsts[d.ConversationID]); changed {
				firsts[d.ConversationID] = first
			}
		}
		if recs, err = collect(ctx, tx, tallySurfacings, params); err != nil {
			return err
		}
		for _, r := range recs {
			p := asProps(r.AsMap())
			sf := &models.Surfacing{Namespace: ns, Experiment: id, Variant: p.str("v"), Mode: models.Mode(p.str("mode")),
				At: p.time("at"), Outcome: models.EventType(p.str("outcome")), OutcomeAt: p.time("outcome_at")}
			if p.err != nil {
				return p.err
			}
			t.Surfacing(nil, sf)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t.Report(e.VariantNames(), asOf), nil
}
