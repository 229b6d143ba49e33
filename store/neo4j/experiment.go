package neo4j

import (
	"context"
	"errors"
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

	tallyTurns = `MATCH (d:Decision {ns: $ns, experiment: $id}) WHERE d.at < $before
		RETURN d.variant AS v, count(*) AS turns, count(DISTINCT d.conv) AS convs`
	tallyTurnDays = `MATCH (d:Decision {ns: $ns, experiment: $id}) WHERE d.at < $before
		RETURN d.variant AS v, d.at / $day AS day, count(*) AS n,
			sum(CASE WHEN coalesce(d.surfaced, 0) = 0 THEN 1 ELSE 0 END) AS empty`
	tallyLatencies = `MATCH (d:Decision {ns: $ns, experiment: $id}) WHERE d.at < $before
		RETURN d.variant AS v, coalesce(d.latency, 0.0) AS ms`
	tallySurfacings = `MATCH (s:Surfacing {ns: $ns, experiment: $id})
		WHERE s.at < $before AND s.mode IN ['ambient', 'resurface']
		WITH s.variant AS v, s.at / $day AS day, s.outcome AS o, s.outcome_at <= $before AS known
		RETURN v, day, count(*) AS n,
			sum(CASE WHEN o = 'used' AND known THEN 1 ELSE 0 END) AS used,
			sum(CASE WHEN o = 'helpful' AND known THEN 1 ELSE 0 END) AS helpful,
			sum(CASE WHEN o = 'ignored' AND known THEN 1 ELSE 0 END) AS ignored,
			sum(CASE WHEN o = 'dismissed' AND known THEN 1 ELSE 0 END) AS dismissed`
)

// CreateExperiment stores a new experiment under the namespace's update lock.
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
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	var out *models.Experiment
	err := s.read(ctx, "get experiment", func(tx neo4j.ManagedTransaction) error {
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
	err := s.read(ctx, "find experiments", func(tx neo4j.ManagedTransaction) error {
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

const dayNanos = int64(24 * time.Hour)

// TallyExperiment counts an experiment's turns and surfacings per variant and UTC day in
// Cypher aggregations; only the turns' latencies come back one by one.
func (s *Store) TallyExperiment(ctx context.Context, ns, id string, asOf time.Time) ([]*models.VariantTally, error) {
	e, err := s.GetExperiment(ctx, ns, id)
	if err != nil {
		return nil, err
	}
	if err := models.CheckStoredTime("as_of", asOf); err != nil {
		return nil, err
	}
	out := make([]*models.VariantTally, len(e.Variants))
	byName := map[string]*models.VariantTally{}
	days := map[string]map[int64]*models.DayTally{}
	for i, v := range e.Variants {
		out[i] = &models.VariantTally{Variant: v.Name}
		byName[v.Name] = out[i]
		days[v.Name] = map[int64]*models.DayTally{}
	}
	day := func(v string, d int64) *models.DayTally {
		if days[v][d] == nil {
			days[v][d] = &models.DayTally{Day: time.Unix(0, d*dayNanos).UTC()}
		}
		return days[v][d]
	}
	params := map[string]any{"ns": ns, "id": id, "before": filterTime(asOf), "day": dayNanos}
	err = s.read(ctx, "tally experiment", func(tx neo4j.ManagedTransaction) error {
		for _, t := range out { // a retried transaction starts over
			*t = models.VariantTally{Variant: t.Variant}
		}
		for v := range days {
			days[v] = map[int64]*models.DayTally{}
		}
		recs, err := collect(ctx, tx, tallyTurns, params)
		if err != nil {
			return err
		}
		for _, r := range recs {
			p := asProps(r.AsMap())
			if t := byName[p.str("v")]; t != nil {
				t.Turns, t.Conversations = p.int("turns"), p.int("convs")
			}
		}
		if recs, err = collect(ctx, tx, tallyTurnDays, params); err != nil {
			return err
		}
		for _, r := range recs {
			p := asProps(r.AsMap())
			if v := p.str("v"); byName[v] != nil {
				d := day(v, p.i64("day"))
				d.Turns, d.EmptyTurns = p.int("n"), p.int("empty")
				byName[v].EmptyTurns += d.EmptyTurns
			}
		}
		if recs, err = collect(ctx, tx, tallyLatencies, params); err != nil {
			return err
		}
		for _, r := range recs {
			p := asProps(r.AsMap())
			if t := byName[p.str("v")]; t != nil {
				t.LatenciesMS = append(t.LatenciesMS, p.f64("ms"))
			}
		}
		if recs, err = collect(ctx, tx, tallySurfacings, params); err != nil {
			return err
		}
		for _, r := range recs {
			p := asProps(r.AsMap())
			v := p.str("v")
			t := byName[v]
			if t == nil {
				continue
			}
			dt := day(v, p.i64("day"))
			dt.Surfaced, dt.Used, dt.Helpful, dt.Ignored, dt.Dismissed = p.int("n"), p.int("used"), p.int("helpful"), p.int("ignored"), p.int("dismissed")
			t.Surfaced += dt.Surfaced
			t.Used += dt.Used
			t.Helpful += dt.Helpful
			t.Ignored += dt.Ignored
			t.Dismissed += dt.Dismissed
		}
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
