package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/salience-ai/salience/models"
)

// pruneBatch is how many rows one PruneHistory transaction looks at: small enough that a
// recorded turn or an engagement report waits a few milliseconds at most behind it.
var pruneBatch = 500 // a variable: tests walk many windows with a small one

// PruneHistory deletes the turn history older than each namespace's cutoff (pc.For;
// models.Pruned says which rows), a batch a transaction. Surfacings, events and decisions are walked per namespace along
// their time indexes, from the oldest, with a cursor (pruneCursor), so the rows that must
// stay are read once a call, not once a batch. Two more rules are this store's own:
//   - surfacings are folded into their memories' counters (surfaced.go) before any is
//     deleted, so the counters keep them;
//   - the newest surfacing stays whatever its age: a new row's rowid follows the largest,
//     and the fold's watermark is a rowid.
func (s *Store) PruneHistory(ctx context.Context, pc models.PruneCut) (models.Pruned, error) {
	var p models.Pruned
	if pc.None() {
		return p, models.Invalid("before", "the cut deletes nothing: no cutoff is set")
	}
	// The counters first take in every stored surfacing (surfaced.go).
	if err := s.settle(ctx); err != nil {
		return p, err
	}
	for _, t := range []struct {
		table string
		// first and last are the cursor's keys before the first row and after the last: the
		// tables' time indexes end in id (text: no UTF-8 byte is 0xff), or in rowid.
		first, last any
		n           *int
		batch       func(ctx context.Context, w *wtx, ns string, cut int64, cur *pruneCursor) (int, error)
	}{
		{"surfacings", "", "\xff", &p.Surfacings, func(ctx context.Context, w *wtx, ns string, cut int64, cur *pruneCursor) (int, error) {
			if err := w.foldIfNeeded(ctx); err != nil {
				return 0, err
			}
			return cur.step(ctx, w, `SELECT at, id FROM surfacings WHERE ns = ?1 AND at < ?2 AND (at, id) > (?3, ?4)
				ORDER BY at, id LIMIT 1 OFFSET ?5`,
				`DELETE FROM surfacings WHERE ns = ?1 AND (at, id) > (?3, ?4) AND (at, id) <= (?5, ?6)
				AND outcome != '' AND outcome_at < ?2 AND experiment_id = ''
				AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.ns = ?1 AND d.turn_id = surfacings.turn_id AND d.rewarded = 0)
				AND rowid < (SELECT max(rowid) FROM surfacings)`, ns, cut)
		}},
		{"events", "", "\xff", &p.Events, func(ctx context.Context, w *wtx, ns string, cut int64, cur *pruneCursor) (int, error) {
			return cur.step(ctx, w, `SELECT at, id FROM events WHERE ns = ?1 AND at < ?2 AND (at, id) > (?3, ?4)
				ORDER BY at, id LIMIT 1 OFFSET ?5`,
				`DELETE FROM events WHERE ns = ?1 AND (at, id) > (?3, ?4) AND (at, id) <= (?5, ?6)
				AND seq < (SELECT max(seq) FROM events WHERE ns = ?1)`, ns, cut)
		}},
		{"decisions", int64(-1 << 63), int64(1<<63 - 1), &p.Decisions, func(ctx context.Context, w *wtx, ns string, cut int64, cur *pruneCursor) (int, error) {
			return cur.step(ctx, w, `SELECT at, rowid FROM decisions WHERE ns = ?1 AND rewarded = 1 AND at < ?2
				AND (at, rowid) > (?3, ?4) ORDER BY at, rowid LIMIT 1 OFFSET ?5`,
				`DELETE FROM decisions WHERE ns = ?1 AND rewarded = 1 AND (at, rowid) > (?3, ?4)
				AND (at, rowid) <= (?5, ?6) AND experiment_id = ''`, ns, cut)
		}},
	} {
		nss, err := s.pruneNamespaces(ctx, t.table)
		if err != nil {
			return p, err
		}
		for _, ns := range nss {
			before := pc.For(ns)
			if before.IsZero() {
				continue
			}
			cut := filterTime(before)
			cur := &pruneCursor{at: noTime, key: t.first, end: t.last}
			for !cur.done {
				var n int
				err := s.write(ctx, "prune "+t.table, func(w *wtx) (func(), error) {
					var err error
					n, err = t.batch(ctx, w, ns, cut, cur)
					return nil, err
				})
				if err != nil {
					return p, err
				}
				*t.n += n
			}
		}
	}
	// Conversations are walked in key order, a namespace at a time, a window a transaction:
	// an index on their update time would cost every turn an entry, where this costs one pass
	// a run.
	nss, err := s.pruneNamespaces(ctx, "conversations")
	if err != nil {
		return p, err
	}
	for _, ns := range nss {
		before := pc.For(ns)
		if before.IsZero() {
			continue
		}
		n, err := s.pruneConversations(ctx, ns, filterTime(before))
		p.Conversations += n
		if err != nil {
			return p, err
		}
	}
	if pc.Before.IsZero() {
		return p, nil
	}
	err = s.write(ctx, "prune job runs", func(w *wtx) (func(), error) {
		res, err := w.ExecContext(ctx, `DELETE FROM job_runs WHERE started_at < ?1
			AND started_at < (SELECT max(j.started_at) FROM job_runs j WHERE j.job = job_runs.job)`, filterTime(pc.Before))
		if err != nil {
			return nil, err
		}
		n, err := res.RowsAffected()
		p.JobRuns = int(n)
		return nil, err
	})
	return p, err
}

// pruneConversations deletes namespace ns's conversation states last updated before cut,
// walking them by id, a window a transaction, and returns how many went.
func (s *Store) pruneConversations(ctx context.Context, ns string, cut int64) (int, error) {
	total := 0
	after := ""
	for done := false; !done; {
		var n int
		err := s.write(ctx, "prune conversations", func(w *wtx) (func(), error) {
			last := after
			err := w.QueryRowContext(ctx, `SELECT id FROM conversations WHERE ns = ?1 AND id > ?2
				ORDER BY id LIMIT 1 OFFSET ?3`, ns, after, pruneBatch-1).Scan(&last)
			window := ` AND id <= ?4`
			if errors.Is(err, sql.ErrNoRows) {
				done, window = true, ""
			} else if err != nil {
				return nil, err
			}
			rows, err := w.QueryContext(ctx, `DELETE FROM conversations WHERE ns = ?1 AND id > ?2`+window+`
				AND updated_at < ?3 AND updated_at != `+strconv.FormatInt(noTime, 10)+` RETURNING ns, id`,
				ns, after, cut, last)
			if err != nil {
				return nil, err
			}
			var gone [][2]string
			for rows.Next() {
				var k [2]string
				if err := rows.Scan(&k[0], &k[1]); err != nil {
					rows.Close()
					return nil, err
				}
				gone = append(gone, k)
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return nil, err
			}
			n, after = len(gone), last
			return func() { s.convs.drop(gone) }, nil
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// pruneCursor walks one namespace's rows of a table by (at, key) — key is the column that
// follows at in the table's time index (id, or the implicit rowid), so that the window's
// bounds are ranges of the index — a window at a time.
type pruneCursor struct {
	at   int64
	key  any
	end  any // a key above every row's
	done bool
}

// step deletes what may go of the next window of rows (at most pruneBatch) and moves the
// cursor past it. last finds the window's last row: args ns, cut, the cursor, the offset;
// del deletes within the window: ns, cut, the cursor and the window's last row.
func (c *pruneCursor) step(ctx context.Context, w *wtx, last, del, ns string, cut int64) (int, error) {
	var at int64
	var key any // the driver's value: a string id or an int64 rowid, as the cursor's
	err := w.QueryRowContext(ctx, last, ns, cut, c.at, c.key, pruneBatch-1).Scan(&at, &key)
	if errors.Is(err, sql.ErrNoRows) {
		// Fewer than a window's rows are left: the last window runs to the cut. Its bounds,
		// like every window's, are the index's range (a bound on at alone would be taken
		// instead, and each window would read every row to the cut).
		at, key, c.done = cut-1, c.end, true
	} else if err != nil {
		return 0, err
	}
	res, err := w.ExecContext(ctx, del, ns, cut, c.at, c.key, at, key)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	c.at, c.key = at, key
	return int(n), err
}

// pruneNamespaces lists the namespaces with rows in table, one index seek each.
func (s *Store) pruneNamespaces(ctx context.Context, table string) ([]string, error) {
	var out []string
	last := ""
	for {
		var ns sql.NullString
		if err := s.rdb.QueryRowContext(ctx, `SELECT min(ns) FROM `+table+` WHERE ns > ?`, last).Scan(&ns); err != nil {
			return nil, wrap(err, "prune "+table)
		}
		if !ns.Valid {
			return out, nil
		}
		out = append(out, ns.String)
		last = ns.String
	}
}
