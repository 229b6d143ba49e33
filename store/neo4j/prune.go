package neo4j

import (
	"context"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// pruneBatch is how many nodes one PruneHistory transaction looks at.
var pruneBatch = 1000 // a variable: tests walk many windows with a small one

// The turn history's labels PruneHistory walks, in order, with their queries (tables of
// constants: TestCypherIsConstant). A window is the next pruneBatch nodes of a namespace
// after $after along the label's time index, with every node that ties with the last; it
// returns each node's key and what the rule (models.SurfacingAge and the others) weighs,
// and the delete takes the keys the rule chose.
var (
	pruneLabels     = []string{"Surfacing", "Event", "Decision", "Conversation"}
	pruneNamespaces = map[string]string{
		"Surfacing":    `MATCH (n:Surfacing) RETURN DISTINCT n.ns AS ns`,
		"Event":        `MATCH (n:Event) RETURN DISTINCT n.ns AS ns`,
		"Decision":     `MATCH (n:Decision) RETURN DISTINCT n.ns AS ns`,
		"Conversation": `MATCH (n:Conversation) RETURN DISTINCT n.ns AS ns`,
	}
	pruneWindow = map[string]string{
		"Surfacing": `MATCH (n:Surfacing {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + pruneWindowHead + `
			MATCH (n:Surfacing {ns: $ns}) WHERE n.at > $after AND n.at <= last AND n.at < $cut
			RETURN seen, last, n.id AS key, n.at AS at, coalesce(n.outcome, '') AS outcome,
				coalesce(n.outcome_at, ` + noTimeCypher + `) AS outcome_at, coalesce(n.experiment, '') AS experiment,
				EXISTS { MATCH (d:Decision {ns: $ns, turn: n.turn}) WHERE d.rewarded = false } AS awaits`,
		"Event": `MATCH (n:Event {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + pruneWindowHead + `
			MATCH (n:Event {ns: $ns}) WHERE n.at > $after AND n.at <= last AND n.at < $cut
			RETURN seen, last, n.id AS key, n.at AS at, coalesce(n.seq, $top) >= $top AS latest`,
		"Decision": `MATCH (n:Decision {ns: $ns}) WHERE n.at > $after AND n.at < $cut` + pruneWindowHead + `
			MATCH (n:Decision {ns: $ns}) WHERE n.at > $after AND n.at <= last AND n.at < $cut
			RETURN seen, last, n.turn AS key, n.at AS at, coalesce(n.rewarded, false) AS rewarded,
				coalesce(n.experiment, '') AS experiment`,
		// A conversation's time is its last update; the walk starts above the unset time.
		"Conversation": `MATCH (n:Conversation {ns: $ns}) WHERE n.updated > $after AND n.updated < $cut
			WITH n.updated AS at` + pruneWindowTail + `
			MATCH (n:Conversation {ns: $ns}) WHERE n.updated > $after AND n.updated <= last AND n.updated < $cut
			RETURN seen, last, n.id AS key, n.updated AS at`,
	}
	pruneDelete = map[string]string{
		"Surfacing":    `UNWIND $keys AS key MATCH (n:Surfacing {ns: $ns, id: key})` + pruneDeleteTail,
		"Event":        `UNWIND $keys AS key MATCH (n:Event {ns: $ns, id: key})` + pruneDeleteTail,
		"Decision":     `UNWIND $keys AS key MATCH (n:Decision {ns: $ns, turn: key})` + pruneDeleteTail,
		"Conversation": `UNWIND $keys AS key MATCH (n:Conversation {ns: $ns, id: key})` + pruneDeleteTail,
		"JobRun":       `UNWIND $keys AS key MATCH (n:JobRun {id: key})` + pruneDeleteTail,
	}
)

const (
	pruneWindowHead = ` WITH n.at AS at` + pruneWindowTail
	pruneWindowTail = ` ORDER BY at LIMIT $batch
		WITH collect(at) AS ats WITH size(ats) AS seen, ats[-1] AS last WHERE seen > 0`
	pruneDeleteTail = ` DETACH DELETE n RETURN count(*) AS n`
	pruneTopEvent   = `MATCH (n:Event {ns: $ns}) WHERE n.seq IS NOT NULL RETURN n.seq AS seq ORDER BY seq DESC LIMIT 1`
	pruneJobRuns    = `MATCH (r:JobRun) WITH r.job AS job, max(r.start) AS newest
		MATCH (n:JobRun {job: job}) WHERE n.start < $cut
		RETURN n.id AS key, n.start AS start, n.start >= newest AS latest`
)

// pruneGoes reads a window's record of label (the columns after seen, last) and says
// whether the rule lets the node go before cut.
func pruneGoes(label string, r *neo4j.Record, cut time.Time) bool {
	v := r.Values
	at := decTime(asInt64(v[3]))
	switch label {
	case "Surfacing":
		return models.SurfacingAge{At: at, Outcome: models.EventType(asString(v[4])), OutcomeAt: decTime(asInt64(v[5])),
			Experiment: asString(v[6]), TurnAwaitsReward: asBool(v[7])}.Prunable(cut)
	case "Event":
		return models.EventAge{At: at, Latest: asBool(v[4])}.Prunable(cut)
	case "Decision":
		return models.DecisionAge{At: at, Rewarded: asBool(v[4]), Experiment: asString(v[5])}.Prunable(cut)
	case "Conversation":
		return models.ConversationAge{UpdatedAt: at}.Prunable(cut)
	}
	return false
}

// asInt64, asString and asBool read a record's value, the zero value when absent.
func asInt64(v any) int64   { n, _ := v.(int64); return n }
func asString(v any) string { s, _ := v.(string); return s }
func asBool(v any) bool     { b, _ := v.(bool); return b }

// PruneHistory deletes the turn history older than each namespace's cutoff (pc.For), a
// window of pruneBatch nodes a transaction: it reads the window's nodes with what the rule
// weighs (models.SurfacingAge and the others' Prunable), asks the rule, and deletes the
// nodes it chose. Each label is walked per namespace along its time index from the oldest,
// so each node is read once a call.
func (s *Store) PruneHistory(ctx context.Context, pc models.PruneCut) (models.Pruned, error) {
	var p models.Pruned
	if err := pc.Check(); err != nil {
		return p, err
	}
	counts := []*int{&p.Surfacings, &p.Events, &p.Decisions, &p.Conversations}
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
			n, err := s.pruneWalk(ctx, label, ns, before)
			*counts[i] += n
			if err != nil {
				return p, err
			}
		}
	}
	if pc.Before.IsZero() {
		return p, nil
	}
	err := s.write(ctx, "prune job runs", func(tx neo4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, pruneJobRuns, map[string]any{"cut": filterTime(pc.Before)})
		if err != nil {
			return err
		}
		var keys []any
		for _, r := range recs {
			if (models.JobRunAge{Start: decTime(asInt64(r.Values[1])), Latest: asBool(r.Values[2])}).Prunable(pc.Before) {
				keys = append(keys, r.Values[0])
			}
		}
		p.JobRuns, err = pruneDeleteKeys(ctx, tx, "JobRun", map[string]any{"keys": keys})
		return err
	})
	return p, err
}

// pruneWalk deletes what may go of namespace ns's nodes of label before cut, a window a
// transaction, and returns how many went.
func (s *Store) pruneWalk(ctx context.Context, label, ns string, cut time.Time) (int, error) {
	params := map[string]any{"ns": ns, "cut": filterTime(cut), "after": int64(noTime), "batch": int64(pruneBatch), "top": int64(0)}
	if label == "Event" {
		err := s.read(ctx, "prune events", func(tx runner) error {
			recs, err := collect(ctx, tx, pruneTopEvent, params)
			if err == nil && len(recs) == 1 {
				params["top"] = asInt64(recs[0].Values[0])
			}
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	total := 0
	for done := false; !done; {
		var n int
		var last any
		err := s.write(ctx, "prune "+label, func(tx neo4j.ManagedTransaction) error {
			recs, err := collect(ctx, tx, pruneWindow[label], params)
			if err != nil || len(recs) == 0 {
				done, n = true, 0
				return err
			}
			// The window holds seen nodes and every one tying with the last: fewer than a
			// batch before the ties, and it ran to the cut.
			done = asInt64(recs[0].Values[0]) < int64(pruneBatch)
			last = recs[0].Values[1]
			var keys []any
			for _, r := range recs {
				if pruneGoes(label, r, cut) {
					keys = append(keys, r.Values[2])
				}
			}
			n, err = pruneDeleteKeys(ctx, tx, label, map[string]any{"ns": ns, "keys": keys})
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		params["after"] = last
	}
	return total, nil
}

// pruneDeleteKeys deletes label's nodes of params["keys"], if any, and returns how many went.
func pruneDeleteKeys(ctx context.Context, tx runner, label string, params map[string]any) (int, error) {
	if keys, _ := params["keys"].([]any); len(keys) == 0 {
		return 0, nil
	}
	recs, err := collect(ctx, tx, pruneDelete[label], params)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	return int(asInt64(recs[0].Values[0])), nil
}

// pruneNamespacesOf lists the namespaces with nodes of label (a key of pruneNamespaces).
func (s *Store) pruneNamespacesOf(ctx context.Context, label string) ([]string, error) {
	var nss []string
	err := s.read(ctx, "prune "+label, func(tx runner) error {
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
