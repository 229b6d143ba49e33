package neo4j

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// pruneBatch is how many nodes one PruneHistory transaction looks at.
var pruneBatch = 1000 // a variable: tests walk many windows with a small one

// pruneKind is one label of the turn history: how to find the next window of a namespace's
// old nodes along its (ns, at) index, and which of a window's nodes may go.
type pruneKind struct {
	label string
	// keep is the Cypher condition on n that keeps a node of the window; $cut and $top
	// (the namespace's latest event sequence number) are in scope.
	keep string
	// where narrows the window itself (an indexed property), or "".
	where string
}

var pruneKinds = []pruneKind{
	{label: "Surfacing", keep: `coalesce(n.outcome, '') = '' OR n.outcome_at >= $cut OR coalesce(n.experiment, '') <> ''`},
	{label: "Event", keep: `coalesce(n.seq, $top) >= $top`},
	{label: "Decision", keep: `coalesce(n.experiment, '') <> ''`, where: ` AND n.rewarded = true`},
}

// PruneHistory deletes the turn history older than before (models.Pruned says which nodes).
// Surfacings, events and decisions are walked per namespace along their (ns, at) indexes
// from the oldest, a window of pruneBatch a transaction, so the nodes that must stay are
// read once a call.
func (s *Store) PruneHistory(ctx context.Context, before time.Time) (models.Pruned, error) {
	var p models.Pruned
	if before.IsZero() {
		return p, models.Invalid("before", "before is missing")
	}
	cut := filterTime(before)
	counts := []*int{&p.Surfacings, &p.Events, &p.Decisions}
	for i, k := range pruneKinds {
		var nss []string
		err := s.read(ctx, "prune "+k.label, func(tx neo4j.ManagedTransaction) error {
			recs, err := collect(ctx, tx, `MATCH (n:`+k.label+`) RETURN DISTINCT n.ns AS ns`, nil)
			nss = nss[:0]
			for _, r := range recs {
				if ns, ok := r.Values[0].(string); ok {
					nss = append(nss, ns)
				}
			}
			return err
		})
		if err != nil {
			return p, err
		}
		window := `MATCH (n:` + k.label + ` {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + k.where + `
			WITH n.at AS at ORDER BY at LIMIT $batch
			WITH collect(at) AS ats RETURN size(ats) AS seen, ats[-1] AS last`
		del := `MATCH (n:` + k.label + ` {ns: $ns}) WHERE n.at > $after AND n.at <= $last AND n.at < $cut` + k.where + `
			AND NOT (` + k.keep + `) DETACH DELETE n RETURN count(*) AS n`
		for _, ns := range nss {
			params := map[string]any{"ns": ns, "cut": cut, "after": int64(noTime), "batch": int64(pruneBatch), "top": int64(0)}
			if k.label == "Event" {
				err := s.read(ctx, "prune events", func(tx neo4j.ManagedTransaction) error {
					recs, err := collect(ctx, tx, `MATCH (n:Event {ns: $ns}) WHERE n.seq IS NOT NULL
						RETURN n.seq AS seq ORDER BY seq DESC LIMIT 1`, params)
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
				err := s.write(ctx, "prune "+k.label, func(tx neo4j.ManagedTransaction) error {
					recs, err := collect(ctx, tx, window, params)
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
					if recs, err = collect(ctx, tx, del, params); err != nil {
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
	for {
		var n int64
		err := s.write(ctx, "prune conversations", func(tx neo4j.ManagedTransaction) error {
			recs, err := collect(ctx, tx, `MATCH (n:Conversation) WHERE n.updated < $cut AND n.updated <> `+noTimeCypher+`
				WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`, map[string]any{"cut": cut, "batch": int64(pruneBatch)})
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
	err := s.write(ctx, "prune job runs", func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, `MATCH (r:JobRun) WITH r.job AS job, max(r.start) AS newest
			MATCH (n:JobRun {job: job}) WHERE n.start < $cut AND n.start < newest
			DETACH DELETE n RETURN count(*) AS n`, map[string]any{"cut": cut})
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
