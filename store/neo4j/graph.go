package neo4j

import (
	"context"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

const neighbors = `UNWIND range(0, size($ids) - 1) AS i
	MATCH (n:Node {ns: $ns, id: $ids[i]})-[r]-()
	RETURN DISTINCT i, startNode(r).id AS from, endNode(r).id AS to, r {.*} AS r`

// Neighbors returns every edge touching any of ids, each once: the edges of ids[0] in key
// order, then those of ids[1] not yet returned, and so on (the embedded store's order).
func (s *Store) Neighbors(ctx context.Context, ns string, ids []string) ([]*models.Edge, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var out []*models.Edge
	err := s.read(ctx, "neighbors", func(tx runner) error {
		recs, err := collect(ctx, tx, neighbors, map[string]any{"ns": ns, "ids": ids})
		if err != nil {
			return err
		}
		out, err = perNodeEdges(ns, len(ids), recs, func(es []*models.Edge) {
			slices.SortFunc(es, func(a, b *models.Edge) int { return a.Key().Compare(b.Key()) })
		})
		return err
	})
	return out, err
}

// perNodeEdges groups records of (i, from, to, r) by i, orders each group with order, and
// concatenates the groups in i's order, each edge once.
func perNodeEdges(ns string, n int, recs []*neo4j.Record, order func([]*models.Edge)) ([]*models.Edge, error) {
	groups, err := edgeGroups(ns, n, recs, order)
	return eachOnce(groups), err
}

// eachOnce concatenates groups, keeping an edge in two of them only where it comes first.
func eachOnce(groups [][]*models.Edge) []*models.Edge {
	var out []*models.Edge
	seen := map[models.EdgeKey]bool{}
	for _, g := range groups {
		for _, e := range g {
			if !seen[e.Key()] {
				seen[e.Key()] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// edgeGroups groups records of (i, from, to, r) by i, each group ordered with order.
func edgeGroups(ns string, n int, recs []*neo4j.Record, order func([]*models.Edge)) ([][]*models.Edge, error) {
	groups := make([][]*models.Edge, n)
	for _, r := range recs {
		i, _ := r.Values[0].(int64)
		es, err := edgeRows(ns, []*neo4j.Record{r})
		if err != nil {
			return nil, err
		}
		if i >= 0 && int(i) < n {
			groups[i] = append(groups[i], es[0])
		}
	}
	for _, g := range groups {
		order(g)
	}
	return groups, nil
}

// strongestNeighbors reads, for each id, its perNode heaviest edges of any type, heaviest
// first and then in key order. The database sorts a hub's edges; only perNode of them per
// node come back. The order reads each edge's weight and stored key (edgeProps), and the
// ends' ids only of the edges kept; an edge written before keys were stored (by an older
// replica, or before the edge_keys migration reached it) is ordered by its ends' ids.
const strongestNeighbors = `UNWIND range(0, size($ids) - 1) AS i
	CALL (i) {
		MATCH (n:Node {ns: $ns, id: $ids[i]})-[r]-()
		WITH DISTINCT r
		ORDER BY r.weight DESC, ` + edgeKeyOf + `
		LIMIT $per
		RETURN startNode(r).id AS from, endNode(r).id AS to, r {.*, key: null} AS props
	}
	RETURN i, from, to, props AS r`

// edgeKeyOf is the edge r's key as a list, stored or read from its ends.
const edgeKeyOf = `coalesce(r.key, [startNode(r).id, endNode(r).id, r.type])`

// strongestTyped is strongestNeighbors for the edges of some types: it walks only the
// relationships of those types ($rts), not a memory's many mentions, and keeps those whose
// type as written is one asked ($types).
const strongestTyped = `UNWIND range(0, size($ids) - 1) AS i
	CALL (i) {
		MATCH (n:Node {ns: $ns, id: $ids[i]})-[r:$any($rts)]-()
		WHERE r.type IN $types
		WITH DISTINCT r
		ORDER BY r.weight DESC, ` + edgeKeyOf + `
		LIMIT $per
		RETURN startNode(r).id AS from, endNode(r).id AS to, r {.*, key: null} AS props
	}
	RETURN i, from, to, props AS r`

// StrongestNeighbors returns, for each node id, at most perNode of the edges touching it
// whose type is in types (empty = every type), the strongest first, equal weights in key
// order. An edge touching two of the ids is returned once (and counts for both).
func (s *Store) StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([]*models.Edge, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if len(ids) == 0 || perNode <= 0 {
		return nil, nil
	}
	groups, err := s.strongestGroups(ctx, ns, ids, perNode, types)
	if err != nil {
		return nil, err
	}
	return eachOnce(groups), nil
}

// strongestGroups is StrongestNeighbors by node: for each of ids, its perNode strongest
// edges of types, strongest first, equal weights in key order (an edge between two of ids
// is in both groups).
func (s *Store) strongestGroups(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([][]*models.Edge, error) {
	params := map[string]any{"ns": ns, "ids": ids, "per": int64(perNode)}
	if len(types) > 0 {
		ts, rts := make([]string, len(types)), make([]string, len(types))
		for i, t := range types {
			ts[i], rts[i] = string(t), relType(t)
		}
		params["types"], params["rts"] = ts, rts
	}
	var groups [][]*models.Edge
	err := s.read(ctx, "strongest neighbors", func(tx runner) error {
		var recs []*neo4j.Record
		var err error
		if len(types) > 0 {
			recs, err = collect(ctx, tx, strongestTyped, params)
		} else {
			recs, err = collect(ctx, tx, strongestNeighbors, params)
		}
		if err != nil {
			return err
		}
		groups, err = edgeGroups(ns, len(ids), recs, func(es []*models.Edge) {
			slices.SortStableFunc(es, models.CompareStrongest)
		})
		return err
	})
	return groups, err
}

const getConcepts = `UNWIND $ids AS id MATCH (c:Node {ns: $ns, id: id}) WHERE c:Concept
	RETURN c.id AS id, c {.name, .kind, .aliases, .mentions, .first, .last} AS c`

// GetConcepts returns the concepts with these names (normalized with
// models.NormalizeConcept) that exist, in the order asked, each once.
func (s *Store) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	ids := models.ConceptNames(names)
	if len(ids) == 0 {
		return nil, nil
	}
	for i, n := range ids {
		ids[i] = models.ConceptPrefix + n
	}
	byID := map[string]*models.Concept{}
	err := s.read(ctx, "get concepts", func(tx runner) error {
		clear(byID)
		var recs []*neo4j.Record
		// In slices: ingest asks about every phrase of a batch, tens of thousands of names,
		// and Neo4j 5.26 plans one huge UNWIND list badly (40,000 names took minutes).
		for part := range slices.Chunk(ids, maxListParam) {
			rs, err := collect(ctx, tx, getConcepts, map[string]any{"ns": ns, "ids": part})
			if err != nil {
				return err
			}
			recs = append(recs, rs...)
		}
		for _, r := range recs {
			id, _ := r.Values[0].(string)
			p := asProps(r.Values[1])
			c := &models.Concept{
				Namespace: ns, Name: p.str("name"), Kind: models.ConceptKind(p.str("kind")), Aliases: p.strs("aliases"),
				Mentions: p.int("mentions"), FirstSeen: p.time("first"), LastSeen: p.time("last"),
			}
			if p.err != nil {
				return p.err
			}
			byID[id] = c
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*models.Concept
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// scanEdges pages through a namespace's edges in key order. The first condition lets the
// (ns, id) index seek to the page's first start node.
const scanEdges = `MATCH (a:Node {ns: $ns})-[r]->(b)
	WHERE a.id >= $from AND (a.id > $from OR b.id > $to OR (b.id = $to AND r.type > $type))
	RETURN a.id AS from, b.id AS to, r {.*} AS r
	ORDER BY from, to, r.type LIMIT $limit`

// ScanEdges returns up to limit edges of the namespace ordered by (From, To, Type), after
// the key given; EINVALID when limit < 1.
func (s *Store) ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error) {
	if err := models.ValidateEdgeScan(ns, limit); err != nil {
		return nil, err
	}
	var out []*models.Edge
	err := s.read(ctx, "scan edges", func(tx runner) error {
		recs, err := collect(ctx, tx, scanEdges, map[string]any{"ns": ns, "from": after.From, "to": after.To,
			"type": string(after.Type), "limit": int64(limit)})
		if err != nil {
			return err
		}
		out, err = edgeRows(ns, recs)
		return err
	})
	return out, err
}

// graphStats reads the counts CreateMemories, DeleteMemory and Tx.PutEdge keep on the
// namespace's :Space: recall asks on every turn, and counting a large graph is a scan.
const graphStats = `OPTIONAL MATCH (sp:Space {ns: $ns})
	RETURN coalesce(sp.mems, 0) + coalesce(sp.concepts, 0) AS nodes, coalesce(sp.edges, 0) AS edges`

// GraphStats returns the namespace's node count — memories (not chunks) plus concepts —
// and its edge count.
func (s *Store) GraphStats(ctx context.Context, ns string) (nodes, edges int, err error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, 0, err
	}
	err = s.read(ctx, "graph stats", func(tx runner) error {
		recs, err := collect(ctx, tx, graphStats, map[string]any{"ns": ns})
		if err != nil {
			return err
		}
		n, _ := recs[0].Values[0].(int64)
		e, _ := recs[0].Values[1].(int64)
		nodes, edges = int(n), int(e)
		return nil
	})
	return nodes, edges, err
}

const namespaces = `MATCH (sp:Space) WHERE sp.mems > 0 RETURN sp.ns AS ns ORDER BY ns`

// Namespaces lists the namespaces that hold any memory, sorted.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	var out []string
	err := s.read(ctx, "list namespaces", func(tx runner) error {
		recs, err := collect(ctx, tx, namespaces, nil)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, r := range recs {
			ns, _ := r.Values[0].(string)
			out = append(out, ns)
		}
		return nil
	})
	return out, err
}

// GraphVersion: the Neo4j store keeps no version of a namespace's edges (any replica may
// write them), so it reports none and callers recompute.
func (s *Store) GraphVersion(ctx context.Context, ns string) (uint64, bool, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return 0, false, err
	}
	return 0, false, nil
}
