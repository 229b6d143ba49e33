package neo4j

import (
	"context"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// pruneBatch is how many nodes one PruneHistory transaction looks at.
var pruneBatch = 1000 // a variable: tests walk many windows with a small one

// The turn history's labels PruneHistory walks, in order, with their queries (tables of
// constants: TestCypherIsConstant). A window is the next pruneBatch nodes of a namespace
// after $after along the (ns, at) index; the delete takes the window's nodes that may go.
// Surfacings stay while awaiting their outcome, decided after $cut, an experiment's, or of a
// turn whose decision awaits its reward;
// events while they are the namespace's latest ($top); decisions while not rewarded or an
// experiment's.
var (
	pruneLabels     = []string{"Surfacing", "Event", "Decision"}
	pruneNamespaces = map[string]string{
		"Surfacing":    `MATCH (n:Surfacing) RETURN DISTINCT n.ns AS ns`,
		"Event":        `MATCH (n:Event) RETURN DISTINCT n.ns AS ns`,
		"Decision":     `MATCH (n:Decision) RETURN DISTINCT n.ns AS ns`,
		"Conversation": `MATCH (n:Conversation) RETURN DISTINCT n.ns AS ns`,
	}
	pruneWindow = map[string]string{
		"Surfacing": `MATCH (n:Surfacing {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + pruneWindowTail,
		"Event":     `MATCH (n:Event {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + pruneWindowTail,
		"Decision":  `MATCH (n:Decision {ns: $ns}) WHERE n.at > $after AND n.at < $cut AND n.rewarded = true` + pruneWindowTail,
	}
	pruneDelete = map[string]string{
		"Surfacing": `MATCH (n:Surfacing {ns: $ns}) WHERE n.at > $after AND n.at <= $last AND n.at < $cut
			AND coalesce(n.outcome, '') <> '' AND n.outcome_at < $cut AND coalesce(n.experiment, '') = ''
			AND NOT EXISTS { MATCH (d:Decision {ns: $ns, turn: n.turn}) WHERE d.rewarded = false }` + pruneDeleteTail,
		"Event": `MATCH (n:Event {ns: $ns}) WHERE n.at > $after AND n.at <= $last AND n.at < $cut
			AND coalesce(n.seq, $top) < $top` + pruneDeleteTail,
		"Decision": `MATCH (n:Decision {ns: $ns}) WHERE n.at > $after AND n.at <= $last AND n.at < $cut
			AND n.rewarded = true AND coalesce(n.experiment, '') = ''` + pruneDeleteTail,
	}
)

const (
	pruneWindowTail = ` WITH n.at AS at ORDER BY at LIMIT $batch
		WITH collect(at) AS ats RETURN size(ats) AS seen, ats[-1] AS last`
	pruneDeleteTail = ` DETACH DELETE n RETURN count(*) AS n`
	pruneTopEvent   = `MATCH (n:Event {ns: $ns}) WHERE n.seq IS NOT NULL RETURN n.seq AS seq ORDER BY seq DESC LIMIT 1`
	pruneConvs      = `MATCH (n:Conversation {ns: $ns}) WHERE n.updated < $cut AND n.updated <> ` + noTimeCypher + `
		WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`
	pruneJobRuns = `MATCH (r:JobRun) WITH r.job AS job, max(r.start) AS newest
		MATCH (n:JobRun {job: job}) WHERE n.start < $cut AND n.start < newest
		DETACH DELETE n RETURN count(*) AS n`
)

// PruneHistory deletes the turn history older than each namespace's cutoff (pc.For;
// models.Pruned says which nodes). Surfacings, events and decisions are walked per
// namespace along their (ns, at) indexes from the oldest, a window of pruneBatch a
// transaction, so the nodes that must stay are read once a call.
func (s *Store) PruneHistory(ctx context.Context, pc models.PruneCut) (models.Pruned, error) {
	var p models.Pruned
	if pc.None() {
		return p, models.Invalid("before", "the cut deletes nothing: no cutoff is set")
	}
	counts := []*int{&p.Surfacings, &p.Events, &p.Decisions}
	for i, label := range pruneLabels {
		nss, err := s.pruneNamespacesOf(ctx, label)
		if err != nil {
			return p, err
		}
		for _, ns := range nss {
			before := pc.For(ns)
			if before.IsZero() {
				continue
			}
			params := map[string]any{"ns": ns, "cut": filterTime(before), "after": int64(noTime), "batch": int64(pruneBatch), "top": int64(0)}
			if label == "Event" {
				err := s.read(ctx, "prune events", func(tx neo4j.ManagedTransaction) error {
					recs, err := collect(ctx, tx, pruneTopEvent, params)
					if err == nil && len(recs) == 1 {
						params["top"], _ = recs[0].Values[0].(int64)
					}
					return err
				})
				if err != nil {
					return p, err
				}
			}
			for done := false; !done; {
				var n int64
				err := s.write(ctx, "prune "+label, func(tx neo4j.ManagedTransaction) error {
					recs, err := collect(ctx, tx, pruneWindow[label], params)
					if err != nil {
						return err
					}
					seen, _ := recs[0].Values[0].(int64)
					if seen == 0 {
						done, n = true, 0
						return nil
					}
					done = seen < int64(pruneBatch)
					params["last"] = recs[0].Values[1]
					if recs, err = collect(ctx, tx, pruneDelete[label], params); err != nil {
						return err
					}
					n, _ = recs[0].Values[0].(int64)
					return nil
				})
				if err != nil {
					return p, err
				}
				*counts[i] += int(n)
				if !done {
					params["after"] = params["last"]
				}
			}
		}
	}
	nss, err := s.pruneNamespacesOf(ctx, "Conversation")
	if err != nil {
		return p, err
	}
	for _, ns := range nss {
		before := pc.For(ns)
		if before.IsZero() {
			continue
		}
		params := map[string]any{"ns": ns, "cut": filterTime(before), "batch": int64(pruneBatch)}
		for {
			var n int64
			err := s.write(ctx, "prune conversations", func(tx neo4j.ManagedTransaction) error {
				recs, err := collect(ctx, tx, pruneConvs, params)
				if err == nil {
					n, _ = recs[0].Values[0].(int64)
				}
				return err
			})
			if err != nil {
				return p, err
			}
			p.Conversations += int(n)
			if n < int64(pruneBatch) {
				break
			}
		}
	}
	if pc.Before.IsZero() {
		return p, nil
	}
	err = s.write(ctx, "prune job runs", func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, pruneJobRuns, map[string]any{"cut": filterTime(pc.Before)})
		if err == nil {
			var n int64
			if len(recs) == 1 {
				n, _ = recs[0].Values[0].(int64)
			}
			p.JobRuns = int(n)
		}
		return err
	})
	return p, err
}

// pruneNamespacesOf lists the namespaces with nodes of label (a key of pruneNamespaces).
func (s *Store) pruneNamespacesOf(ctx context.Context, label string) ([]string, error) {
	var nss []string
	err := s.read(ctx, "prune "+label, func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, pruneNamespaces[label], nil)
		nss = nss[:0]
		for _, r := range recs {
			if ns, ok := r.Values[0].(string); ok {
				nss = append(nss, ns)
			}
		}
		return err
	})
	return nss, err
}
