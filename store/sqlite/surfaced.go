package sqlite

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
)

// A memory's surfacing counters — SurfaceCount and LastSurfaced — live in the surfaced table
// (migrations/0012_surfaced.sql), one compact row a surfaced memory, and are folded there
// from the surfacings table rather than bumped as each turn is written:
//
//   - Writing a turn stores its surfacings only. The caches count them at once, as before.
//   - A fold adds up the surfacings stored after the watermark (state key surfacedThroughKey,
//     a surfacings rowid; rowids only grow, as surfacings are never deleted) per memory into
//     surfaced, and moves the watermark, in one transaction: exact whichever process wrote
//     them, and idempotent across a crash.
//   - Anything that reads memory rows from SQL, or writes counters, folds first: the reads
//     (settle), every Update transaction, loading a namespace, deleting a memory. Recording
//     a turn starts a fold in the background once foldRows surfacings wait.
//
// Bumping the memories rows instead cost every turn ten random pages of the largest table (a
// row holds the embedding, so two or three rows share a page): at 100,000 memories about a
// third of the background write's CPU. A fold of a few thousand turns writes each page of
// the surfaced table (about 75 memories a page) at most once.

// surfacedThroughKey is the state key of the fold's watermark.
const surfacedThroughKey = "sqlite.surfaced_through"

const (
	// foldChunk is how many surfacing rowids one statement of a fold covers.
	foldChunk = 1024
	// foldRows is how many stored surfacings may wait before a fold starts in the background.
	foldRows = 50_000
)

// settle folds the stored surfacings into the memories' counters, so that a read sees every
// recorded turn: a no-op when nothing waits.
func (s *Store) settle(ctx context.Context) error {
	if s.unfolded.Load() == 0 {
		return nil
	}
	return s.write(ctx, "fold surfacings", func(tx *wtx) (func(), error) {
		return nil, tx.foldIfNeeded(ctx)
	})
}

// settleRead is settle for a read. When the fold cannot be written (a full disk, say) the
// read answers from what is folded, as every read does on a full disk, instead of failing;
// logged at most every ten seconds.
func (s *Store) settleRead(ctx context.Context) error {
	err := s.settle(ctx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	now := time.Now().UnixNano()
	if last := s.readWarned.Load(); now-last >= int64(10*time.Second) && s.readWarned.CompareAndSwap(last, now) {
		s.log.Warn("sqlite: a read could not fold the newest surfacings into the counters and answers without them", "err", err)
	}
	return nil
}

// foldLocked is settle for a caller holding wmu.
func (s *Store) foldLocked(ctx context.Context) error {
	if s.unfolded.Load() == 0 {
		return nil
	}
	return s.writeLocked(ctx, "fold surfacings", func(tx *wtx) (func(), error) {
		return nil, tx.fold(ctx)
	})
}

// foldInBackground starts a fold once foldRows surfacings wait and none is running.
func (s *Store) foldInBackground() {
	if s.unfolded.Load() < foldRows || !s.folding.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.folding.Store(false)
		if err := s.settle(context.Background()); err != nil {
			s.log.Warn("sqlite: fold surfacings", "err", err)
		}
	}()
}

// memorySelect is memoryRows.sel with the counters read from surfaced: the SELECT of every
// read of memory rows but the bulk load.
var memorySelect = memorySelectWith(
	`coalesce((SELECT s.n FROM surfaced s WHERE s.ns = memories.ns AND s.id = memories.id), 0)`,
	`coalesce((SELECT s.last FROM surfaced s WHERE s.ns = memories.ns AND s.id = memories.id), `+strconv.FormatInt(noTime, 10)+`)`)

// memoryLoadSelect is memoryRows.sel for the bulk load: the counters read as unset, and
// loadSurfaced sets them from surfaced afterwards (one scan of it, not a lookup a row).
var memoryLoadSelect = memorySelectWith(`0`, strconv.FormatInt(noTime, 10))

// selectMemory reads one memory row.
var selectMemory = memorySelect + ` WHERE ns = ? AND id = ?`

// memorySelectWith is memoryRows.sel with these expressions for the two counters.
func memorySelectWith(count, last string) string {
	cols := make([]string, len(memoryRows.cols))
	for i, c := range memoryRows.cols {
		switch c.name {
		case "surface_count":
			cols[i] = count
		case "last_surfaced":
			cols[i] = last
		default:
			cols[i] = c.name
		}
	}
	return `SELECT ` + strings.Join(cols, ", ") + ` FROM memories`
}

// fold adds the surfacings stored after the watermark to their memories' counters in
// surfaced and moves the watermark past them. Only surfacings of memories that exist count,
// as the bump in the memories rows counted them.
func (w *wtx) fold(ctx context.Context) error {
	var through, top int64
	var v string
	err := w.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, surfacedThroughKey).Scan(&v)
	switch {
	case errors.Is(err, errNoRows):
	case err != nil:
		return wrap(err, "fold surfacings")
	default:
		if through, err = strconv.ParseInt(v, 10, 64); err != nil {
			return models.Errorf(models.EINTERNAL, "fold surfacings: watermark %q: %v", v, err)
		}
	}
	if err := w.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM surfacings`).Scan(&top); err != nil {
		return wrap(err, "fold surfacings")
	}
	if top > through {
		// foldChunk rows a statement, yielding between. Counts and maxima add up across
		// chunks as over the whole range.
		for lo := through; lo < top; lo += foldChunk {
			runtime.Gosched() // a batch write: a recall woken on this processor runs first
			if _, err := w.ExecContext(ctx, `INSERT INTO surfaced (ns, id, n, last)
			SELECT ns, memory_id, count(*), max(at) FROM surfacings
			WHERE rowid > ? AND rowid <= ?
				AND EXISTS (SELECT 1 FROM memories m WHERE m.ns = surfacings.ns AND m.id = surfacings.memory_id)
			GROUP BY ns, memory_id
			ON CONFLICT (ns, id) DO UPDATE SET n = n + excluded.n, last = max(last, excluded.last)`, lo, min(lo+foldChunk, top)); err != nil {
				return wrap(err, "fold surfacings")
			}
		}
		if err := w.putState(ctx, surfacedThroughKey, strconv.FormatInt(top, 10)); err != nil {
			return wrap(err, "fold surfacings")
		}
	}
	w.folded, w.surfaced = true, 0
	return nil
}

// foldIfNeeded folds when surfacings may wait: stored by this process since its last fold,
// or by this transaction, or not known (unfolded starts at 1: a process folds what an
// earlier one left before it first reads).
func (w *wtx) foldIfNeeded(ctx context.Context) error {
	if w.surfaced == 0 && (w.folded || w.s.unfolded.Load() == 0) {
		return nil
	}
	return w.fold(ctx)
}

// countFolded updates the count of waiting surfacings once w has committed: the caller
// holds wmu.
func (w *wtx) countFolded() {
	if w.folded {
		w.s.unfolded.Store(int64(w.surfaced))
	} else if w.surfaced > 0 {
		w.s.unfolded.Add(int64(w.surfaced))
	}
}

// putSurfaced sets m's counters in surfaced, as PutMemory and CreateMemories write them:
// the caller has folded, so m's counters (the cache's, which count every stored turn) are
// the whole count.
func putSurfaced(ctx context.Context, w *wtx, m *models.Memory) error {
	if m.SurfaceCount == 0 && m.LastSurfaced.IsZero() {
		_, err := w.ExecContext(ctx, `DELETE FROM surfaced WHERE ns = ? AND id = ?`, m.Namespace, m.ID)
		return err
	}
	_, err := w.ExecContext(ctx, `INSERT INTO surfaced (ns, id, n, last) VALUES (?, ?, ?, ?)
		ON CONFLICT (ns, id) DO UPDATE SET n = excluded.n, last = excluded.last WHERE n != excluded.n OR last != excluded.last`,
		m.Namespace, m.ID, m.SurfaceCount, encTime(m.LastSurfaced))
	return err
}

// loadSurfaced sets the counters of the loaded memories of spaces (ns's, or all for "")
// from surfaced: the bulk load reads the memories rows without them.
func (s *Store) loadSurfaced(ctx context.Context, q *conn, ns string, spaces map[string]*memindex.Space) error {
	where, args := nsFilter(ns)
	for r, err := range rowsOf(q.query(ctx, `SELECT ns, id, n, last FROM surfaced`+where, args...)) {
		var sns, id string
		var n int
		var last int64
		if err == nil {
			err = r.Scan(&sns, &id, &n, &last)
		}
		if err != nil {
			return err
		}
		if sp := spaces[sns]; sp != nil {
			sp.SetCounters(id, n, decTime(last))
		}
	}
	return nil
}
