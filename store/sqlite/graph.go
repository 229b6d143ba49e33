package sqlite

import (
	"context"
	"errors"
	"slices"

	"github.com/salience-ai/salience/models"
)

func cloneConcept(c *models.Concept) *models.Concept {
	n := *c
	n.Aliases = slices.Clone(c.Aliases)
	return &n
}

// upsertConcept writes c (its name already normalized) in tx and returns the stored result.
// A written concept counts as c.Mentions mentions, at least one.
func upsertConcept(ctx context.Context, tx *wtx, c *models.Concept) (*models.Concept, error) {
	add := max(c.Mentions, 1)
	old, err := scanConcept(tx.QueryRowContext(ctx, selectConcept, c.Namespace, c.Name))
	if errors.Is(err, errNoRows) {
		n := cloneConcept(c)
		n.Mentions = add
		if n.FirstSeen.IsZero() {
			n.FirstSeen = n.LastSeen
		}
		if n.LastSeen.IsZero() {
			n.LastSeen = n.FirstSeen
		}
		_, err := tx.ExecContext(ctx, insertConcept.sql, insertConcept.bind(n)...)
		return n, err
	}
	if err != nil {
		return nil, err
	}
	n := old
	n.Mentions += add
	for _, a := range c.Aliases {
		if !slices.Contains(n.Aliases, a) {
			n.Aliases = append(n.Aliases, a)
		}
	}
	if n.FirstSeen.IsZero() {
		n.FirstSeen = c.FirstSeen
	}
	if c.LastSeen.After(n.LastSeen) {
		n.LastSeen = c.LastSeen
	}
	_, err = tx.ExecContext(ctx, updateConcept.sql, updateConcept.bind(n)...)
	return n, err
}

// GetConcepts returns the concepts with these names (normalized with
// models.NormalizeConcept) that exist, in the order asked, each once.
func (s *Store) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	norm := models.ConceptNames(names)
	if len(norm) == 0 {
		return nil, nil
	}
	if s.ready.Load() {
		sp, err := s.space(ctx, ns)
		if sp == nil || err != nil {
			return nil, err
		}
		return sp.Concepts(norm), nil
	}
	byName := map[string]*models.Concept{}
	for r, err := range rowsOf(s.rdb.QueryContext(ctx, conceptRows.sel+` WHERE ns = ? AND name IN `+inList, ns, jsonList(norm))) {
		var c *models.Concept
		if err == nil {
			c, err = scanConcept(r)
		}
		if err != nil {
			return nil, wrap(err, "get concepts")
		}
		byName[c.Name] = c
	}
	var out []*models.Concept
	for _, n := range norm {
		if c, ok := byName[n]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// ScanEdges returns up to limit edges of the namespace ordered by (From, To, Type) byte-wise,
// after the key given; EINVALID when limit < 1.
func (s *Store) ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error) {
	if err := models.ValidateEdgeScan(ns, limit); err != nil {
		return nil, err
	}
	return queryAll(ctx, s.rdb, "scan edges", edgeRows.sel+` WHERE ns = ? AND (src, dst, type) > (?, ?, ?)
		ORDER BY src, dst, type LIMIT ?`, []any{ns, after.From, after.To, string(after.Type), limit}, scanEdge)
}

// GraphStats returns the namespace's node count — memories (not chunks) plus concepts — and
// its edge count.
func (s *Store) GraphStats(ctx context.Context, ns string) (nodes, edges int, err error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, 0, err
	}
	if s.ready.Load() {
		sp, err := s.space(ctx, ns)
		if sp == nil || err != nil {
			return 0, 0, err
		}
		nodes, edges = sp.GraphStats()
		return nodes, edges, nil
	}
	var mems, concepts int
	err = s.rdb.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM memories WHERE ns = ?1 AND parent_id = ''),
		(SELECT COUNT(*) FROM concepts WHERE ns = ?1),
		(SELECT COUNT(*) FROM edges WHERE ns = ?1)`, ns).Scan(&mems, &concepts, &edges)
	if err != nil {
		return 0, 0, wrap(err, "graph stats")
	}
	return mems + concepts, edges, nil
}

// Namespaces lists the namespaces that hold any memory, sorted.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	if s.ready.Load() && s.mem.Budget() == 0 { // in budget mode the loaded ones are not all
		return s.mem.Namespaces(), nil
	}
	return queryAll(ctx, s.rdb, "list namespaces", `SELECT DISTINCT ns FROM memories ORDER BY ns`, nil,
		func(sc scanner) (ns string, err error) { return ns, sc.Scan(&ns) })
}
