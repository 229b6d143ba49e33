package neo4j

import (
	"context"

	"github.com/salience-ai/salience/models"
)

// The threshold bandit's decisions are (:Decision {ns, turn}) nodes; its posteriors are
// :State values, which the transaction reads under a write lock.

func decisionProps(d *models.Decision) map[string]any {
	return map[string]any{
		"ns": d.Namespace, "turn": d.TurnID, "conv": d.ConversationID, "type": d.ConvType, "variant": d.Variant,
		"experiment": d.Experiment, "latency": d.LatencyMS, "policy": d.Policy, "arm": int64(d.Arm), "threshold": d.Threshold, "prob": d.Prob, "surfaced": int64(d.Surfaced),
		"at": encTime(d.At), "rewarded": d.Rewarded, "reward": d.Reward, "rewarded_at": encTime(d.RewardedAt),
		"concepts": encStrings(d.Concepts),
	}
}

func decDecision(v any) (*models.Decision, error) {
	p := asProps(v)
	d := &models.Decision{
		Namespace: p.str("ns"), TurnID: p.str("turn"), ConversationID: p.str("conv"), ConvType: p.str("type"),
		Variant: p.str("variant"), Experiment: p.str("experiment"), LatencyMS: p.f64("latency"), Policy: p.str("policy"), Arm: p.int("arm"), Threshold: p.f64("threshold"),
		Prob: p.f64("prob"), Surfaced: p.int("surfaced"), At: p.time("at"), Rewarded: p.bool("rewarded"),
		Reward: p.f64("reward"), RewardedAt: p.time("rewarded_at"), Concepts: p.strs("concepts"),
	}
	return d, p.err
}

const (
	findDecisions = `MATCH (d:Decision {ns: $ns})
		WHERE ($pending = false OR d.rewarded = false) AND ($before IS NULL OR d.at < $before)
		RETURN d {.*} AS d ORDER BY d.at, d.turn LIMIT $limit`
	findDecisionsDesc = `MATCH (d:Decision {ns: $ns})
		WHERE ($pending = false OR d.rewarded = false) AND ($before IS NULL OR d.at < $before)
		RETURN d {.*} AS d ORDER BY d.at DESC, d.turn DESC LIMIT $limit`
	txGetDecision = `MATCH (d:Decision {ns: $ns, turn: $turn}) RETURN d {.*} AS d`
	txPutDecision = `MERGE (d:Decision {ns: $ns, turn: $turn}) SET d += $p`
)

// findDecisionsBy are the listings oldest first and newest first (constants: the Cypher
// checker wants no query built at run time).
var findDecisionsBy = [2]string{findDecisions, findDecisionsDesc}

// FindDecisions lists a namespace's threshold decisions, oldest first (newest with f.Desc).
func (s *Store) FindDecisions(ctx context.Context, f models.DecisionFilter) ([]*models.Decision, error) {
	limit, err := f.Check()
	if err != nil {
		return nil, err
	}
	var out []*models.Decision
	err = s.read(ctx, "find decisions", func(tx runner) error {
		order := 0
		if f.Desc {
			order = 1
		}
		recs, err := collect(ctx, tx, findDecisionsBy[order], map[string]any{"ns": f.Namespace, "pending": f.Pending,
			"before": optTime(f.Before), "limit": int64(limit)})
		if err != nil {
			return err
		}
		out = make([]*models.Decision, 0, len(recs))
		for _, r := range recs {
			d, err := decDecision(r.Values[0])
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

func (t *storeTx) GetDecision(ns, turnID string) (*models.Decision, error) {
	if err := t.lock(ns); err != nil {
		return nil, t.wrap(err, "get decision")
	}
	if err := models.ValidateStoredID(turnID, "turn_id"); err != nil {
		return nil, err
	}
	recs, err := collect(t.ctx, t.tx, txGetDecision, map[string]any{"ns": ns, "turn": turnID})
	if err != nil {
		return nil, t.wrap(err, "get decision")
	}
	if len(recs) == 0 {
		return nil, notFound("decision of turn %s not found", turnID)
	}
	return decDecision(recs[0].Values[0])
}

func (t *storeTx) PutDecision(d *models.Decision) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredDecision(d); err != nil {
		return err
	}
	if err := t.lock(d.Namespace); err != nil {
		return t.wrap(err, "put decision")
	}
	return t.wrap(exec(t.ctx, t.tx, txPutDecision, map[string]any{"ns": d.Namespace, "turn": d.TurnID, "p": decisionProps(d)}), "put decision")
}
