package sqlite

import (
	"context"
	"strconv"
	"strings"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
)

// A memory's surfacing counters — SurfaceCount and LastSurfaced — live in the surfaced table
// (migrations/0012_surfaced.sql), one compact row a surfaced memory (about 75 a page),
// written with the turn that surfaces it: bumping them in the memories rows cost every turn
// ten random pages of the largest table (a row holds the embedding).

// countSurfaced adds one surfacing to its memory's counters, when the memory exists.
const countSurfaced = `INSERT INTO surfaced (ns, id, n, last)
	SELECT ?1, ?2, 1, ?3 WHERE EXISTS (SELECT 1 FROM memories WHERE ns = ?1 AND id = ?2)
	ON CONFLICT (ns, id) DO UPDATE SET n = n + 1, last = max(last, excluded.last)`

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

// putSurfaced sets m's counters in surfaced, as PutMemory and CreateMemories write them.
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
	rows, err := q.query(ctx, `SELECT ns, id, n, last FROM surfaced`+where, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var sns, id string
		var n int
		var last int64
		if err := rows.Scan(&sns, &id, &n, &last); err != nil {
			return err
		}
		if sp := spaces[sns]; sp != nil {
			sp.SetCounters(id, n, decTime(last))
		}
	}
	return rows.Err()
}
