package neo4j

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

const (
	// reembedClaim takes the namespace's write lock and sets its dimension and embedder to
	// the new ones first: from then on a writer with the old embedder is refused (its
	// vectors' embedder differs from the namespace's), and when the sizes differ a search
	// with either embedder sees only vectors of its own size — the re-embedded ones for the
	// new embedder. (Of one size, an old server's searches mix both models: stop it first.)
	reembedClaim = `MERGE (sp:Space {ns: $ns}) ON CREATE SET sp.dims = 0, sp.mems = 0, sp.concepts = 0, sp.edges = 0
		SET sp.lk = NOT coalesce(sp.lk, false), sp.dims = $dims, sp.embedder = $embedder`
	// reembedCount counts the units (unchunked memories and chunks: what carries a vector).
	reembedCount = `MATCH (u:Node {ns: $ns}) WHERE u:Unit RETURN count(u) AS n`
	// reembedRead reads the next units by id after $after, on the (ns, id) key's index.
	reembedRead = `MATCH (u:Node {ns: $ns}) WHERE u:Unit AND u.id > $after
		RETURN u.id AS id, coalesce(u.content, '') AS content ORDER BY u.id LIMIT $n`
	// reembedWrite stores the batch's vectors, under the namespace's write lock.
	reembedWrite = `MATCH (sp:Space {ns: $ns}) SET sp.lk = NOT coalesce(sp.lk, false)
		WITH sp UNWIND $rows AS r
		MATCH (u:Node {ns: $ns, id: r.id}) WHERE u:Unit
		SET u.embedding = r.v`
)

// Reembed replaces the vector of every unit of ns (unchunked memories and chunks) with
// embedFn's vector of its content, batch units a transaction, in id order, and records to
// (the embedder's name and size) as the namespace's first (reembedClaim says what that does to servers still
// running with the old embedder; stop them first). It returns how many units it
// re-embedded; progress, when not nil, hears after each batch. Interrupted, it can be run
// again: every unit is embedded afresh.
func (s *Store) Reembed(ctx context.Context, ns string, to models.EmbedderIdentity, batch int, embedFn models.EmbedFunc, progress func(done, total int)) (int, error) {
	if err := models.ValidateReembed(ns, to, batch); err != nil {
		return 0, err
	}
	var total int
	err := s.write(ctx, "reembed: claim", func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, reembedClaim, map[string]any{"ns": ns, "dims": int64(to.Dims), "embedder": to.Name}); err != nil {
			return err
		}
		recs, err := collect(ctx, tx, reembedCount, map[string]any{"ns": ns})
		if err != nil {
			return err
		}
		n, _ := recs[0].Values[0].(int64)
		total = int(n)
		return nil
	})
	if err != nil {
		return 0, err
	}
	done, after := 0, ""
	for {
		var ids, texts []string
		err := s.read(ctx, "reembed: read", func(tx runner) error {
			recs, err := collect(ctx, tx, reembedRead, map[string]any{"ns": ns, "after": after, "n": int64(batch)})
			if err != nil {
				return err
			}
			ids, texts = ids[:0], texts[:0]
			for _, r := range recs {
				id, _ := r.Values[0].(string)
				text, _ := r.Values[1].(string)
				ids, texts = append(ids, id), append(texts, text)
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		if len(ids) == 0 {
			return done, nil
		}
		vecs, err := embedFn(ctx, texts)
		if err != nil {
			return done, fmt.Errorf("reembed: %w", err)
		}
		if err := index.CheckVectors(vecs, ids, to.Dims); err != nil {
			return done, fmt.Errorf("reembed: %w", err)
		}
		rows := make([]any, len(ids))
		for i, v := range vecs {
			rows[i] = map[string]any{"id": ids[i], "v": encVector(v)}
		}
		if err := s.write(ctx, "reembed: write", func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, reembedWrite, map[string]any{"ns": ns, "rows": rows})
		}); err != nil {
			return done, err
		}
		done += len(ids)
		after = ids[len(ids)-1]
		if progress != nil {
			progress(done, total)
		}
	}
}
