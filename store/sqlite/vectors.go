package sqlite

import (
	"context"
	"fmt"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

// Embedders returns the embedder of every namespace that holds vectors: its recorded name
// ("" when the vectors predate recorded names) and size. It reads the database, so serve
// resolves its embedder before loading anything.
func (s *Store) Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error) {
	out := map[string]models.EmbedderIdentity{}
	_, err := queryAll(ctx, s.rdb, "embedders", `SELECT ns, dims, embedder FROM namespaces WHERE dims > 0 ORDER BY ns`, nil,
		func(sc scanner) (struct{}, error) {
			var ns string
			var id models.EmbedderIdentity
			err := sc.Scan(&ns, &id.Dims, &id.Name)
			out[ns] = id
			return struct{}{}, err
		})
	return out, err
}

// RecordEmbedder records id as the embedder of ns when ns holds vectors of id's size with no
// recorded name (written before names were recorded); any other namespace is left as it is.
func (s *Store) RecordEmbedder(ctx context.Context, ns string, id models.EmbedderIdentity) error {
	if id.Name == "" || id.Dims <= 0 {
		return models.Invalid("embedder", "an embedder needs a name and a size")
	}
	return s.write(ctx, "record embedder", func(tx *wtx) (func(), error) {
		_, err := tx.ExecContext(ctx, `UPDATE namespaces SET embedder = ? WHERE ns = ? AND dims = ? AND embedder = ''`, id.Name, ns, id.Dims)
		return nil, err
	})
}

// Reembed replaces the vector of every indexed unit of ns — each memory that is not chunked,
// and each chunk — with embedFn's, batch units at a time, and records to (the embedder's
// name and size) as the namespace's once all are written. It returns how many units it re-embedded;
// progress (may be nil) hears after each batch.
//
// It is an offline operation: it refuses a store whose indexes are loaded (a serving
// store), whose vector index would go stale. Batches commit one by one, so an interrupted
// run leaves some new vectors under the old size; Rebuild skips vectors of the wrong size
// and the next run writes them all again.
func (s *Store) Reembed(ctx context.Context, ns string, to models.EmbedderIdentity, batch int, embedFn models.EmbedFunc, progress func(done, total int)) (int, error) {
	if err := models.ValidateReembed(ns, to, batch); err != nil {
		return 0, err
	}
	if s.ready.Load() {
		return 0, models.Errorf(models.ECONFLICT, "re-embedding needs a store that is not serving (indexes loaded)")
	}
	var total int
	err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE ns = ? AND (parent_id != '' OR chunk_count = 0)`, ns).Scan(&total)
	if err != nil {
		return 0, wrap(err, "reembed: count")
	}
	done, after := 0, ""
	for {
		type unit struct{ id, content string }
		units, err := queryAll(ctx, s.rdb, "reembed: read",
			`SELECT id, content FROM memories WHERE ns = ? AND (parent_id != '' OR chunk_count = 0) AND id > ? ORDER BY id LIMIT ?`,
			[]any{ns, after, batch}, func(sc scanner) (unit, error) {
				var u unit
				err := sc.Scan(&u.id, &u.content)
				return u, err
			})
		if err != nil {
			return done, err
		}
		if len(units) == 0 {
			break
		}
		texts := make([]string, len(units))
		for i, u := range units {
			texts[i] = u.content
		}
		vecs, err := embedFn(ctx, texts)
		if err != nil {
			return done, fmt.Errorf("reembed: %w", err)
		}
		ids := make([]string, len(units))
		for i, u := range units {
			ids[i] = u.id
		}
		if err := index.CheckVectors(vecs, ids, to.Dims); err != nil {
			return done, fmt.Errorf("reembed: %w", err)
		}
		err = s.write(ctx, "reembed: write", func(tx *wtx) (func(), error) {
			for i, u := range units {
				if _, err := tx.ExecContext(ctx, `UPDATE memories SET embedding = ? WHERE ns = ? AND id = ?`, encVector(vecs[i]), ns, u.id); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		if err != nil {
			return done, err
		}
		done += len(units)
		after = units[len(units)-1].id
		if progress != nil {
			progress(done, total)
		}
	}
	err = s.write(ctx, "reembed: embedder", func(tx *wtx) (func(), error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO namespaces (ns, dims, embedder) VALUES (?, ?, ?)
			ON CONFLICT (ns) DO UPDATE SET dims = excluded.dims, embedder = excluded.embedder`, ns, to.Dims, to.Name)
		return nil, err
	})
	return done, err
}
