package sqlite

import (
	"context"
	"errors"

	"github.com/salience-ai/salience/models"
)

// The experiment counters (migration 0016): this file only adds what models.Tallies
// returns for each write and reads the counters back; what counts, on which day, is decided
// in models/tally.go. The write paths call it inside their transaction:
//   - insertSurfacings → tallySurfacings (a turn's surfacings);
//   - Tx.PutSurfacing → tallyOutcomeBefore, then tallyOutcome (an outcome decided or replaced);
//   - Tx.PutDecision → tallyDecision (a turn, and its conversation's first turn).

const (
	addTallyCounts = `INSERT INTO experiment_counts (ns, experiment_id, variant, day, known,
		turns, empty_turns, conversations, surfaced, used, helpful, ignored, dismissed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (ns, experiment_id, variant, day, known) DO UPDATE SET
		turns = turns + excluded.turns, empty_turns = empty_turns + excluded.empty_turns,
		conversations = conversations + excluded.conversations, surfaced = surfaced + excluded.surfaced,
		used = used + excluded.used, helpful = helpful + excluded.helpful,
		ignored = ignored + excluded.ignored, dismissed = dismissed + excluded.dismissed`
	addTallyLatencies = `INSERT INTO experiment_latencies (ns, experiment_id, variant, day, tenths, n) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (ns, experiment_id, variant, day, tenths) DO UPDATE SET n = n + excluded.n`
	selectTallyCounts = `SELECT variant, day, known, turns, empty_turns, conversations, surfaced, used, helpful, ignored, dismissed
		FROM experiment_counts WHERE ns = ? AND experiment_id = ?`
	selectTallyLatencies = `SELECT variant, day, tenths, n FROM experiment_latencies WHERE ns = ? AND experiment_id = ?`
	// What the tally reads of a stored surfacing and decision.
	selectTallySurfacing = `SELECT experiment_id, variant, mode, at, outcome, outcome_at FROM surfacings WHERE ns = ? AND id = ?`
	selectTallyDecision  = `SELECT experiment_id, variant, at, latency_ms, surfaced FROM decisions WHERE ns = ? AND turn_id = ?`
	selectFirstTurn      = `SELECT variant, first_at FROM experiment_conversations WHERE ns = ? AND experiment_id = ? AND conversation_id = ?`
	upsertFirstTurn      = `INSERT INTO experiment_conversations (ns, experiment_id, conversation_id, variant, first_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (ns, experiment_id, conversation_id) DO UPDATE SET variant = excluded.variant, first_at = excluded.first_at`
)

// addTallies adds t to the counters.
func addTallies(ctx context.Context, tx *wtx, t *models.Tallies) error {
	for c, n := range t.Counts {
		if _, err := tx.ExecContext(ctx, addTallyCounts, c.Namespace, c.Experiment, c.Variant, c.Day, c.Known,
			n.Turns, n.EmptyTurns, n.Conversations, n.Surfaced, n.Used, n.Helpful, n.Ignored, n.Dismissed); err != nil {
			return wrap(err, "count experiment")
		}
	}
	for c, n := range t.Latencies {
		if _, err := tx.ExecContext(ctx, addTallyLatencies, c.Namespace, c.Experiment, c.Variant, c.Day, c.Tenths, n); err != nil {
			return wrap(err, "count experiment latencies")
		}
	}
	return nil
}

// tallySurfacings counts newly recorded surfacings (and the outcomes they come with).
func tallySurfacings(ctx context.Context, tx *wtx, ss []*models.Surfacing) error {
	var t models.Tallies
	for _, sf := range ss {
		t.Surfacing(nil, sf)
	}
	return addTallies(ctx, tx, &t)
}

// tallyOutcomeBefore reads what the tally knows of the stored surfacing sf is about to
// replace: nil when sf is in no experiment (a surfacing's experiment is fixed when it is
// recorded, so the stored one is in none either) or no row has its id.
func tallyOutcomeBefore(ctx context.Context, tx *wtx, sf *models.Surfacing) (*models.Surfacing, error) {
	if sf.Experiment == "" {
		return nil, nil
	}
	old := models.Surfacing{Namespace: sf.Namespace, ID: sf.ID}
	var mode, outcome string
	var at, outcomeAt int64
	err := tx.QueryRowContext(ctx, selectTallySurfacing, sf.Namespace, sf.ID).Scan(&old.Experiment, &old.Variant, &mode, &at, &outcome, &outcomeAt)
	if errors.Is(err, errNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap(err, "put surfacing")
	}
	old.Mode, old.At, old.Outcome, old.OutcomeAt = models.Mode(mode), decTime(at), models.EventType(outcome), decTime(outcomeAt)
	return &old, nil
}

// tallyOutcome moves the counts from old (tallyOutcomeBefore's) to sf, once sf is written.
func tallyOutcome(ctx context.Context, tx *wtx, old, sf *models.Surfacing) error {
	if old == nil && sf.Experiment == "" {
		return nil
	}
	var t models.Tallies
	t.Surfacing(old, sf)
	return addTallies(ctx, tx, &t)
}

// tallyDecision counts the decision d is about to become: a new turn, or the change from
// the stored one (nothing, for a reward), and its conversation's first turn. Call it
// before writing d, in the same transaction.
func tallyDecision(ctx context.Context, tx *wtx, d *models.Decision) error {
	if d.Experiment == "" { // a turn's experiment is fixed when it is decided
		return nil
	}
	var t models.Tallies
	old := &models.Decision{Namespace: d.Namespace, TurnID: d.TurnID, ConversationID: d.ConversationID}
	var at int64
	err := tx.QueryRowContext(ctx, selectTallyDecision, d.Namespace, d.TurnID).Scan(&old.Experiment, &old.Variant, &at, &old.LatencyMS, &old.Surfaced)
	switch {
	case errors.Is(err, errNoRows):
		old = nil
	case err != nil:
		return wrap(err, "put decision")
	default:
		old.At = decTime(at)
	}
	t.Decision(old, d)

	var first models.FirstTurn
	err = tx.QueryRowContext(ctx, selectFirstTurn, d.Namespace, d.Experiment, d.ConversationID).Scan(&first.Variant, &at)
	if err == nil {
		first.At = decTime(at)
	} else if !errors.Is(err, errNoRows) {
		return wrap(err, "put decision")
	}
	if next, changed := t.Conversation(d, first); changed {
		if _, err := tx.ExecContext(ctx, upsertFirstTurn, d.Namespace, d.Experiment, d.ConversationID, next.Variant, encTime(next.At)); err != nil {
			return wrap(err, "put decision")
		}
	}
	return addTallies(ctx, tx, &t)
}

// readTallies reads an experiment's counters, both tables from one snapshot.
func (s *Store) readTallies(ctx context.Context, ns, id string) (*models.Tallies, error) {
	var t models.Tallies
	err := s.rdb.snapshot(ctx, func(c *conn) error {
		for r, err := range rowsOf(c.query(ctx, selectTallyCounts, ns, id)) {
			cell := models.TallyCell{Namespace: ns, Experiment: id}
			var n models.TallyCounts
			if err == nil {
				err = r.Scan(&cell.Variant, &cell.Day, &cell.Known, &n.Turns, &n.EmptyTurns, &n.Conversations, &n.Surfaced,
					&n.Used, &n.Helpful, &n.Ignored, &n.Dismissed)
			}
			if err != nil {
				return err
			}
			t.AddCounts(cell, n)
		}
		for r, err := range rowsOf(c.query(ctx, selectTallyLatencies, ns, id)) {
			cell := models.LatencyCell{Namespace: ns, Experiment: id}
			var n int
			if err == nil {
				err = r.Scan(&cell.Variant, &cell.Day, &cell.Tenths, &n)
			}
			if err != nil {
				return err
			}
			t.AddLatencies(cell, n)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(err, "tally experiment")
	}
	return &t, nil
}
