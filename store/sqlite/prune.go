package sqlite

import (
	"context"
	"time"

	"github.com/salience-ai/salience/models"
)

// pruneBatch is how many rows one PruneHistory transaction looks at: small enough that a
// recorded turn or an engagement report waits a few milliseconds at most behind it.
var pruneBatch = 500 // a variable: tests walk many windows with a small one

// PruneHistory deletes the turn history older than each namespace's cutoff (pc.For), a
// window a transaction: it reads the window's rows with what the rule weighs, asks the
// rule (models.SurfacingAge and the others' Prunable), and deletes the rows it chose.
// Surfacings, events and decisions are walked per namespace along their time indexes, from
// the oldest, conversations by id (an index on their update time would cost every turn an
// entry), with a cursor, so each row is read once a call. Two more conditions are this
// store's own mechanics, not the rule:
//   - surfacings are folded into their memories' counters (surfaced.go) before any is
//     deleted, so the counters keep them;
//   - the newest surfacing stays whatever its age: a new row's rowid follows the largest,
//     and the fold's watermark is a rowid.
func (s *Store) PruneHistory(ctx context.Context, pc models.PruneCut) (models.Pruned, error) {
	var p models.Pruned
	if err := pc.Check(); err != nil {
		return p, err
	}
	// The counters first take in every stored surfacing (surfaced.go).
	if err := s.settle(ctx); err != nil {
		return p, err
	}
	for _, k := range pruneKinds {
		nss, err := s.pruneNamespaces(ctx, k.table)
		if err != nil {
			return p, err
		}
		for _, ns := range nss {
			if before := pc.For(ns); !before.IsZero() {
				n, err := s.pruneWalk(ctx, k, ns, before)
				*k.count(&p) += n
				if err != nil {
					return p, err
				}
			}
		}
	}
	if pc.Before.IsZero() {
		return p, nil
	}
	var err error
	p.JobRuns, err = s.pruneJobRuns(ctx, pc.Before)
	return p, err
}

// pruneKind is how PruneHistory walks one table of the turn history.
type pruneKind struct {
	table string
	count func(*models.Pruned) *int
	// window reads namespace ?1's next rows before the cut ?2 after the cursor (?3, ?4)
	// along the table's time index (ns, at, key), at most ?5 of them, in that order.
	window string
	// row scans one: its time and key (the cursor's), and whether it may go before cut.
	row func(r scanner, cut time.Time) (at int64, key string, goes bool, err error)
	// del deletes namespace ?2's rows whose key is in the JSON array ?1.
	del string
}

var pruneKinds = []pruneKind{{
	table: "surfacings",
	count: func(p *models.Pruned) *int { return &p.Surfacings },
	window: `SELECT at, id, outcome, outcome_at, experiment_id,
		EXISTS (SELECT 1 FROM decisions d WHERE d.ns = s.ns AND d.turn_id = s.turn_id AND d.rewarded = 0),
		s.rowid = (SELECT max(rowid) FROM surfacings)
		FROM surfacings s WHERE ns = ?1 AND at < ?2 AND (at, id) > (?3, ?4) ORDER BY at, id LIMIT ?5`,
	row: func(r scanner, cut time.Time) (int64, string, bool, error) {
		var at, outcomeAt int64
		var id, outcome, experiment string
		var awaits, newest bool
		err := r.Scan(&at, &id, &outcome, &outcomeAt, &experiment, &awaits, &newest)
		age := models.SurfacingAge{At: decTime(at), Outcome: models.EventType(outcome), OutcomeAt: decTime(outcomeAt),
			Experiment: experiment, TurnAwaitsReward: awaits}
		// The store's own condition, apart from the rule: the newest row stays (PruneHistory).
		return at, id, age.Prunable(cut) && !newest, err
	},
	del: `DELETE FROM surfacings WHERE ns = ?2 AND id IN (SELECT value FROM json_each(?1))`,
}, {
	table: "events",
	count: func(p *models.Pruned) *int { return &p.Events },
	window: `SELECT at, id, seq >= (SELECT max(seq) FROM events WHERE ns = ?1)
		FROM events WHERE ns = ?1 AND at < ?2 AND (at, id) > (?3, ?4) ORDER BY at, id LIMIT ?5`,
	row: func(r scanner, cut time.Time) (int64, string, bool, error) {
		var at int64
		var id string
		var latest bool
		err := r.Scan(&at, &id, &latest)
		return at, id, models.EventAge{At: decTime(at), Latest: latest}.Prunable(cut), err
	},
	del: `DELETE FROM events WHERE ns = ?2 AND id IN (SELECT value FROM json_each(?1))`,
}, {
	table: "decisions",
	count: func(p *models.Pruned) *int { return &p.Decisions },
	window: `SELECT at, turn_id, rewarded, experiment_id
		FROM decisions WHERE ns = ?1 AND at < ?2 AND (at, turn_id) > (?3, ?4) ORDER BY at, turn_id LIMIT ?5`,
	row: func(r scanner, cut time.Time) (int64, string, bool, error) {
		var at int64
		var turn, experiment string
		var rewarded bool
		err := r.Scan(&at, &turn, &rewarded, &experiment)
		return at, turn, models.DecisionAge{At: decTime(at), Rewarded: rewarded, Experiment: experiment}.Prunable(cut), err
	},
	del: `DELETE FROM decisions WHERE ns = ?2 AND turn_id IN (SELECT value FROM json_each(?1))`,
}, {
	table: "conversations",
	count: func(p *models.Pruned) *int { return &p.Conversations },
	// Every row, by id: the cursor's time stays ?3.
	window: `SELECT ?3, id, updated_at FROM conversations WHERE ns = ?1 AND id > ?4 ORDER BY id LIMIT ?5`,
	row: func(r scanner, cut time.Time) (int64, string, bool, error) {
		var at, updated int64
		var id string
		err := r.Scan(&at, &id, &updated)
		return at, id, models.ConversationAge{UpdatedAt: decTime(updated)}.Prunable(cut), err
	},
	del: `DELETE FROM conversations WHERE ns = ?2 AND id IN (SELECT value FROM json_each(?1))`,
}}

// pruneWalk deletes what may go of namespace ns's rows of k before cut, a window a
// transaction, and returns how many went.
func (s *Store) pruneWalk(ctx context.Context, k pruneKind, ns string, cut time.Time) (int, error) {
	total := 0
	at, key := int64(noTime), "" // the cursor: the last row read
	for done := false; !done; {
		var n int
		err := s.write(ctx, "prune "+k.table, func(w *wtx) (func(), error) {
			if k.table == "surfacings" {
				if err := w.foldIfNeeded(ctx); err != nil {
					return nil, err
				}
			}
			var gone []string
			seen := 0
			for r, err := range rowsOf(w.QueryContext(ctx, k.window, ns, filterTime(cut), at, key, pruneBatch)) {
				var goes bool
				if err == nil {
					at, key, goes, err = k.row(r, cut)
				}
				if err != nil {
					return nil, err
				}
				seen++
				if goes {
					gone = append(gone, key)
				}
			}
			done = seen < pruneBatch
			var err error
			n, err = pruneDelete(ctx, w, k.del, gone, ns)
			if k.table == "conversations" && n > 0 {
				return s.convs.Purge, err // a daily job: the cache fills again in a turn each
			}
			return nil, err
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// pruneDelete runs del with the keys as a JSON array (?1, jsonList) and args after them, if
// there are keys, and returns how many rows went.
func pruneDelete(ctx context.Context, w *wtx, del string, keys []string, args ...any) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	n, err := w.ExecContext(ctx, del, append([]any{jsonList(keys)}, args...)...)
	return int(n), err
}

// pruneJobRuns deletes what may go of the job runs before cut, in one transaction (a few
// runs a job a day), and returns how many went.
func (s *Store) pruneJobRuns(ctx context.Context, cut time.Time) (int, error) {
	var n int
	err := s.write(ctx, "prune job runs", func(w *wtx) (func(), error) {
		var gone []string
		for r, err := range rowsOf(w.QueryContext(ctx, `SELECT id, started_at,
			started_at >= (SELECT max(j.started_at) FROM job_runs j WHERE j.job = r.job)
			FROM job_runs r WHERE started_at < ?1`, filterTime(cut))) {
			var id string
			var start int64
			var latest bool
			if err == nil {
				err = r.Scan(&id, &start, &latest)
			}
			if err != nil {
				return nil, err
			}
			if (models.JobRunAge{Start: decTime(start), Latest: latest}).Prunable(cut) {
				gone = append(gone, id)
			}
		}
		var err error
		n, err = pruneDelete(ctx, w, `DELETE FROM job_runs WHERE id IN (SELECT value FROM json_each(?1))`, gone)
		return nil, err
	})
	return n, err
}

// pruneNamespaces lists the namespaces with rows in table, one index seek each.
func (s *Store) pruneNamespaces(ctx context.Context, table string) ([]string, error) {
	var out []string
	last := ""
	for {
		var ns string // "" when no namespace is left
		if err := s.rdb.QueryRowContext(ctx, `SELECT coalesce(min(ns), '') FROM `+table+` WHERE ns > ?`, last).Scan(&ns); err != nil {
			return nil, wrap(err, "prune "+table)
		}
		if ns == "" {
			return out, nil
		}
		last = ns
		out = append(out, ns)
	}
}
