package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/salience-ai/salience/models"
)

const edgeColumns = `ns, src, dst, type, weight, co_occurrences, last_co_occurred, last_decayed, predicate, fact`

func edgeArgs(e *models.Edge) []any {
	return []any{e.Namespace, e.From, e.To, string(e.Type), e.Weight, e.CoOccurrences,
		encTime(e.LastCoOccurred), encTime(e.LastDecayed), e.Predicate, e.Fact}
}

// packedEdgeColumns reads an edge in five columns instead of ten for the rebuild, which
// reads every edge: the text columns come joined by the unit separator 0x1f. Namespaces,
// ends, types and facts never contain it (validateEdge), and the predicate, free text,
// comes last, so a separator inside it stays in it. The driver's cost is per column and per
// allocated string; this halves both, and the rebuild of 100k memories with it.
const packedEdgeColumns = `ns || char(31) || src || char(31) || dst || char(31) || type || char(31) || fact || char(31) || predicate,
	weight, co_occurrences, last_co_occurred, last_decayed`

// scanPackedEdge reads a row of packedEdgeColumns; the strings share the one row string.
func scanPackedEdge(sc scanner) (*models.Edge, error) {
	var e models.Edge
	var text string
	var co, dec int64
	if err := sc.Scan(&text, &e.Weight, &e.CoOccurrences, &co, &dec); err != nil {
		return nil, err
	}
	var parts [6]string
	for i := 0; i < 5; i++ {
		var ok bool
		parts[i], text, ok = strings.Cut(text, "\x1f")
		if !ok {
			return nil, fmt.Errorf("packed edge row has %d fields, want 6", i+1)
		}
	}
	parts[5] = text
	e.Namespace, e.From, e.To = parts[0], parts[1], parts[2]
	e.Type, e.Fact, e.Predicate = models.EdgeType(parts[3]), parts[4], parts[5]
	e.LastCoOccurred, e.LastDecayed = decTime(co), decTime(dec)
	return &e, nil
}

func scanEdge(sc scanner) (*models.Edge, error) {
	var e models.Edge
	var typ string
	var co, dec int64
	if err := sc.Scan(&e.Namespace, &e.From, &e.To, &typ, &e.Weight, &e.CoOccurrences, &co, &dec, &e.Predicate, &e.Fact); err != nil {
		return nil, err
	}
	e.Type = models.EdgeType(typ)
	e.LastCoOccurred, e.LastDecayed = decTime(co), decTime(dec)
	return &e, nil
}

const conceptColumns = `ns, name, kind, aliases, mentions, first_seen, last_seen`

func scanConcept(sc scanner) (*models.Concept, error) {
	var c models.Concept
	var kind, aliases string
	var first, last int64
	if err := sc.Scan(&c.Namespace, &c.Name, &kind, &aliases, &c.Mentions, &first, &last); err != nil {
		return nil, err
	}
	c.Kind = models.ConceptKind(kind)
	c.FirstSeen, c.LastSeen = decTime(first), decTime(last)
	var err error
	if c.Aliases, err = decStrings(aliases, "aliases"); err != nil {
		return nil, err
	}
	return &c, nil
}

func cloneConcept(c *models.Concept) *models.Concept {
	n := *c
	n.Aliases = slices.Clone(c.Aliases)
	return &n
}

// conceptUpserter merges written concepts into stored ones inside a write transaction.
type conceptUpserter struct{ sel, ins, upd *sql.Stmt }

func newConceptUpserter(ctx context.Context, tx *sql.Tx) (*conceptUpserter, error) {
	var u conceptUpserter
	var err error
	if u.sel, err = tx.PrepareContext(ctx, `SELECT `+conceptColumns+` FROM concepts WHERE ns = ? AND name = ?`); err != nil {
		return nil, err
	}
	if u.ins, err = tx.PrepareContext(ctx, `INSERT INTO concepts (`+conceptColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`); err != nil {
		u.close()
		return nil, err
	}
	if u.upd, err = tx.PrepareContext(ctx, `UPDATE concepts SET aliases = ?, mentions = ?, first_seen = ?, last_seen = ? WHERE ns = ? AND name = ?`); err != nil {
		u.close()
		return nil, err
	}
	return &u, nil
}

func (u *conceptUpserter) close() {
	for _, s := range []*sql.Stmt{u.sel, u.ins, u.upd} {
		if s != nil {
			s.Close()
		}
	}
}

// upsert writes c (its name already normalized) and returns the stored result. A written
// concept counts as c.Mentions mentions, at least one.
func (u *conceptUpserter) upsert(ctx context.Context, c *models.Concept) (*models.Concept, error) {
	add := max(c.Mentions, 1)
	old, err := scanConcept(u.sel.QueryRowContext(ctx, c.Namespace, c.Name))
	if errors.Is(err, sql.ErrNoRows) {
		n := cloneConcept(c)
		n.Mentions = add
		if n.FirstSeen.IsZero() {
			n.FirstSeen = n.LastSeen
		}
		if n.LastSeen.IsZero() {
			n.LastSeen = n.FirstSeen
		}
		_, err := u.ins.ExecContext(ctx, n.Namespace, n.Name, string(n.Kind), encStrings(n.Aliases), n.Mentions, encTime(n.FirstSeen), encTime(n.LastSeen))
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
	_, err = u.upd.ExecContext(ctx, encStrings(n.Aliases), n.Mentions, encTime(n.FirstSeen), encTime(n.LastSeen), n.Namespace, n.Name)
	return n, err
}

// GetConcepts returns the concepts with these names (normalized with
// models.NormalizeConcept) that exist, in the order asked, each once.
func (s *Store) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	norm := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n = models.NormalizeConcept(n); n != "" && !seen[n] {
			seen[n] = true
			norm = append(norm, n)
		}
	}
	if len(norm) == 0 {
		return nil, nil
	}
	if s.ready.Load() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		sp := s.spaces[ns]
		if sp == nil {
			return nil, nil
		}
		var out []*models.Concept
		for _, n := range norm {
			if c, ok := sp.concepts[n]; ok {
				out = append(out, cloneConcept(c))
			}
		}
		return out, nil
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+conceptColumns+` FROM concepts WHERE ns = ? AND name IN (`+placeholders(len(norm))+`)`,
		append([]any{ns}, anys(norm)...)...)
	if err != nil {
		return nil, wrap(err, "get concepts")
	}
	defer rows.Close()
	byName := map[string]*models.Concept{}
	for rows.Next() {
		c, err := scanConcept(rows)
		if err != nil {
			return nil, wrap(err, "get concepts")
		}
		byName[c.Name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err, "get concepts")
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
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, models.Invalid("limit", "limit must be at least 1")
	}
	return queryAll(ctx, s.rdb, "scan edges", `SELECT `+edgeColumns+` FROM edges WHERE ns = ? AND (src, dst, type) > (?, ?, ?)
		ORDER BY src, dst, type LIMIT ?`, []any{ns, after.From, after.To, string(after.Type), limit}, scanEdge)
}

// GraphStats returns the namespace's node count — memories (not chunks) plus concepts — and
// its edge count.
func (s *Store) GraphStats(ctx context.Context, ns string) (nodes, edges int, err error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, 0, err
	}
	if s.ready.Load() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		sp := s.spaces[ns]
		if sp == nil {
			return 0, 0, nil
		}
		return sp.parents + len(sp.concepts), sp.graph.Len(), nil
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
	if s.ready.Load() {
		s.mu.RLock()
		defer s.mu.RUnlock()
		var out []string
		for ns, sp := range s.spaces {
			if len(sp.mems) > 0 {
				out = append(out, ns)
			}
		}
		sort.Strings(out)
		return out, nil
	}
	return queryAll(ctx, s.rdb, "list namespaces", `SELECT DISTINCT ns FROM memories ORDER BY ns`, nil,
		func(sc scanner) (ns string, err error) { return ns, sc.Scan(&ns) })
}
