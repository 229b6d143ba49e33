package sqlite

import (
	"context"
	"errors"

	"github.com/salience-ai/salience/models"
)

// FindDecisions lists a namespace's threshold decisions, oldest first (newest with f.Desc).
func (s *Store) FindDecisions(ctx context.Context, f models.DecisionFilter) ([]*models.Decision, error) {
	limit, err := f.Check()
	if err != nil {
		return nil, err
	}
	q, args := decisionRows.sel+` WHERE ns = ?`, []any{f.Namespace}
	if f.Pending {
		q += ` AND rewarded = 0`
	}
	if !f.Before.IsZero() {
		q, args = q+` AND at < ?`, append(args, filterTime(f.Before))
	}
	order := ` ORDER BY at, turn_id LIMIT ?`
	if f.Desc {
		order = ` ORDER BY at DESC, turn_id DESC LIMIT ?`
	}
	q, args = q+order, append(args, limit)
	return queryAll(ctx, s.rdb, "find decisions", q, args, scanDecision)
}

func (t *storeTx) GetDecision(ns, turnID string) (*models.Decision, error) {
	if t.done {
		return nil, errTxDone
	}
	if err := models.ValidateKey(ns, turnID, "turn_id"); err != nil {
		return nil, err
	}
	d, err := scanDecision(t.tx.QueryRowContext(t.ctx, selectDecision, ns, turnID))
	if errors.Is(err, errNoRows) {
		return nil, notFound("decision of turn %s not found", turnID)
	}
	return d, wrap(err, "get decision")
}

func (t *storeTx) PutDecision(d *models.Decision) error {
	if t.done {
		return errTxDone
	}
	if err := models.ValidateStoredDecision(d); err != nil {
		return err
	}
	if err := tallyDecision(t.ctx, t.tx, d); err != nil { // the experiment counters (experiment_tally.go)
		return err
	}
	_, err := t.tx.ExecContext(t.ctx, upsertDecision.sql, upsertDecision.bind(d)...)
	return wrap(err, "put decision")
}
