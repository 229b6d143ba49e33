package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/batch"
	"github.com/salience-ai/salience/store/memindex"
)

// The writes of memories: CreateMemories (with their chunks, concepts and edges) and
// DeleteMemory. Validation is store/batch's, the row codec in memory_row.go.

// CreateMemories writes the batch in one transaction: memories, chunks, concepts (upserted:
// Mentions grows by the written concept's Mentions, at least 1; FirstSeen, Kind and existing
// aliases are kept; LastSeen moves forward) and edges (inserted when missing). The in-memory
// indexes are updated after the commit. ECONFLICT when a memory id exists (also within the
// batch); EINVALID when an embedding's dimension or embedder differs from the namespace's.
func (s *Store) CreateMemories(ctx context.Context, writes []*models.MemoryWrite) error {
	if len(writes) == 0 {
		return nil
	}
	prep, dims, err := batch.Prepare(writes)
	if err != nil {
		return err
	}
	units := indexUnits(prep)
	return s.write(ctx, "create memories", func(tx *wtx) (func(), error) {
		nsDims, err := fixDims(ctx, tx, dims)
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			if _, err := tx.ExecContext(ctx, insertMemory.sql, insertMemory.bind(&memoryRow{m: *u.M})...); err != nil {
				if isConstraintUnique(err) {
					return nil, models.Errorf(models.ECONFLICT, "memory %s exists", u.M.ID)
				}
				return nil, fmt.Errorf("insert memory %s: %w", u.M.ID, err)
			}
			if u.M.SurfaceCount != 0 || !u.M.LastSurfaced.IsZero() {
				if err := putSurfaced(ctx, tx, u.M); err != nil {
					return nil, fmt.Errorf("insert memory %s: %w", u.M.ID, err)
				}
			}
		}
		var merged []*models.Concept
		for _, p := range prep {
			for _, c := range p.Concepts {
				m, err := upsertConcept(ctx, tx, c)
				if err != nil {
					return nil, err
				}
				merged = append(merged, m)
			}
		}
		var created []*models.Edge
		for _, p := range prep {
			for _, e := range p.Edges {
				n, err := tx.ExecContext(ctx, insertEdge.sql, insertEdge.bind(e)...)
				if err != nil {
					return nil, fmt.Errorf("insert edge: %w", err)
				}
				if n == 1 {
					created = append(created, e)
				}
			}
		}
		return func() { s.mem.Create(units, nsDims, merged, created) }, nil
	})
}

// indexUnits is what the in-memory indexes take of a prepared batch: every memory and chunk,
// with the terms of those searched, found before the write lock is taken.
func indexUnits(prep []batch.Write) []memindex.Unit {
	var units []memindex.Unit
	for _, w := range prep {
		for _, m := range w.Units {
			u := memindex.Unit{M: m}
			if m.Indexed() {
				u.Terms = nlp.Terms(m.Content)
			}
			units = append(units, u)
		}
	}
	return units
}

// fixDims admits the batch's vectors to each namespace (models.EmbedderIdentity.Admit) and
// records what changes; it returns the dimension of every namespace of the batch.
func fixDims(ctx context.Context, tx *wtx, batch map[string]models.EmbedderIdentity) (map[string]int, error) {
	out := make(map[string]int, len(batch))
	for ns, b := range batch {
		var cur models.EmbedderIdentity
		err := tx.QueryRowContext(ctx, `SELECT dims, embedder FROM namespaces WHERE ns = ?`, ns).Scan(&cur.Dims, &cur.Name)
		switch {
		case errors.Is(err, errNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO namespaces (ns, dims, embedder) VALUES (?, ?, ?)`, ns, b.Dims, b.Name); err != nil {
				return nil, err
			}
			cur = b
		case err != nil:
			return nil, err
		default:
			next, err := cur.Admit(ns, b)
			if err != nil {
				return nil, err
			}
			if next != cur {
				if _, err := tx.ExecContext(ctx, `UPDATE namespaces SET dims = ?, embedder = ? WHERE ns = ?`, next.Dims, next.Name, ns); err != nil {
					return nil, err
				}
				cur = next
			}
		}
		out[ns] = cur.Dims
	}
	return out, nil
}

// DeleteMemory removes a memory with its chunks, their vectors and index entries, every edge
// touching any of them, and their resurfacing queue items. Surfacings and events stay: they
// are the engagement history. ENOTFOUND when missing; EINVALID for a chunk's id (delete the
// parent).
func (s *Store) DeleteMemory(ctx context.Context, ns, id string) error {
	if err := models.ValidateKey(ns, id, "id"); err != nil {
		return err
	}
	return s.write(ctx, "delete memory", func(tx *wtx) (func(), error) {
		var parent string
		err := tx.QueryRowContext(ctx, `SELECT parent_id FROM memories WHERE ns = ? AND id = ?`, ns, id).Scan(&parent)
		if errors.Is(err, errNoRows) {
			return nil, notFound("memory %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		if parent != "" {
			return nil, models.Invalid("id", "%s is a chunk of %s; delete the parent", id, parent)
		}
		chunks, err := queryAll(ctx, tx, "delete memory", `SELECT id FROM memories WHERE ns = ? AND parent_id = ?`,
			[]any{ns, id}, func(r scanner) (c string, err error) { return c, r.Scan(&c) })
		if err != nil {
			return nil, err
		}
		ids := append([]string{id}, chunks...)
		list := jsonList(ids)
		keys, err := queryAll(ctx, tx, "delete memory", `DELETE FROM edges WHERE ns = ?1
			AND (src IN (SELECT value FROM json_each(?2)) OR dst IN (SELECT value FROM json_each(?2))) RETURNING src, dst, type`,
			[]any{ns, list}, func(r scanner) (k models.EdgeKey, err error) { return k, r.Scan(&k.From, &k.To, (*string)(&k.Type)) })
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE ns = ? AND memory_id IN `+inList, ns, list); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE ns = ? AND id IN `+inList, ns, list); err != nil {
			return nil, err
		}
		// Its surfacings stay, so they are folded first: none is counted later for a new
		// memory given the same id.
		if err := tx.fold(ctx); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM surfaced WHERE ns = ? AND id IN `+inList, ns, list); err != nil {
			return nil, err
		}
		return func() { s.mem.Delete(ns, ids, keys) }, nil
	})
}
