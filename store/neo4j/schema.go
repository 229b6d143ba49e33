package neo4j

import (
	"context"
	"strconv"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Index names the queries refer to.
const (
	textIndex   = "salience_unit_ixterms"
	vectorIndex = "salience_unit_embedding"
	// nsVectorIndex is vectorIndex with the namespace as a filter property, for servers that
	// filter inside the vector search (Neo4j 2026.02 and later): it replaces vectorIndex there.
	nsVectorIndex = "salience_unit_embedding_ns"
)

// schema is created at every start; IF NOT EXISTS makes each statement idempotent, so
// replicas starting together do no harm. Uniqueness constraints carry the ids (and back the
// lookups by id); range indexes serve the filters the store runs.
var schema = []string{
	`CREATE CONSTRAINT salience_node_key IF NOT EXISTS FOR (n:Node) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_memory_key IF NOT EXISTS FOR (n:Memory) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_surfacing_key IF NOT EXISTS FOR (n:Surfacing) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_event_key IF NOT EXISTS FOR (n:Event) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_conversation_key IF NOT EXISTS FOR (n:Conversation) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_queue_key IF NOT EXISTS FOR (n:QueueItem) REQUIRE (n.ns, n.memory) IS UNIQUE`,
	`CREATE CONSTRAINT salience_space_key IF NOT EXISTS FOR (n:Space) REQUIRE n.ns IS UNIQUE`,
	`CREATE CONSTRAINT salience_lock_key IF NOT EXISTS FOR (n:UpdateLock) REQUIRE n.ns IS UNIQUE`,
	`CREATE CONSTRAINT salience_lease_key IF NOT EXISTS FOR (n:Lease) REQUIRE n.name IS UNIQUE`,
	`CREATE CONSTRAINT salience_jobrun_key IF NOT EXISTS FOR (n:JobRun) REQUIRE n.id IS UNIQUE`,
	`CREATE CONSTRAINT salience_state_key IF NOT EXISTS FOR (n:State) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT salience_decision_key IF NOT EXISTS FOR (n:Decision) REQUIRE (n.ns, n.turn) IS UNIQUE`,
	`CREATE CONSTRAINT salience_experiment_key IF NOT EXISTS FOR (n:Experiment) REQUIRE (n.ns, n.id) IS UNIQUE`,
	`CREATE CONSTRAINT salience_term_key IF NOT EXISTS FOR (n:Term) REQUIRE (n.ns, n.t) IS UNIQUE`,
	`CREATE INDEX salience_surfacing_experiment IF NOT EXISTS FOR (n:Surfacing) ON (n.ns, n.experiment)`,
	`CREATE INDEX salience_decision_experiment IF NOT EXISTS FOR (n:Decision) ON (n.ns, n.experiment)`,
	`CREATE INDEX salience_decision_at IF NOT EXISTS FOR (n:Decision) ON (n.ns, n.at)`,
	`CREATE INDEX salience_memory_parent IF NOT EXISTS FOR (n:Memory) ON (n.ns, n.parent)`,
	`CREATE INDEX salience_memory_conv IF NOT EXISTS FOR (n:Memory) ON (n.ns, n.conv)`,
	`CREATE INDEX salience_memory_created IF NOT EXISTS FOR (n:Memory) ON (n.ns, n.created)`,
	`CREATE INDEX salience_unit_ns IF NOT EXISTS FOR (n:Unit) ON (n.ns)`,
	`CREATE INDEX salience_concept_ns IF NOT EXISTS FOR (n:Concept) ON (n.ns)`,
	`CREATE INDEX salience_surfacing_at IF NOT EXISTS FOR (n:Surfacing) ON (n.ns, n.at)`,
	`CREATE INDEX salience_surfacing_turn IF NOT EXISTS FOR (n:Surfacing) ON (n.ns, n.turn)`,
	`CREATE INDEX salience_surfacing_memory IF NOT EXISTS FOR (n:Surfacing) ON (n.ns, n.memory)`,
	`CREATE INDEX salience_surfacing_conv IF NOT EXISTS FOR (n:Surfacing) ON (n.ns, n.conv)`,
	`CREATE INDEX salience_conversation_updated IF NOT EXISTS FOR (n:Conversation) ON (n.updated)`,
	`CREATE INDEX salience_event_at IF NOT EXISTS FOR (n:Event) ON (n.ns, n.at)`,
	`CREATE INDEX salience_event_seq IF NOT EXISTS FOR (n:Event) ON (n.ns, n.seq)`,
	`CREATE INDEX salience_queue_ns IF NOT EXISTS FOR (n:QueueItem) ON (n.ns)`,
	`CREATE INDEX salience_jobrun_job IF NOT EXISTS FOR (n:JobRun) ON (n.job)`,
	// A unit's ixterms are nlp.Terms of its text, each behind the namespace's token, joined by
	// spaces (bm25.go): the whitespace analyzer splits them back and changes nothing else, so
	// a query reads only its namespace's postings. Not eventually consistent: a committed
	// write is searchable.
	`CREATE FULLTEXT INDEX ` + textIndex + ` IF NOT EXISTS FOR (n:Unit) ON EACH [n.ixterms]
		OPTIONS {indexConfig: {` + "`fulltext.analyzer`" + `: 'whitespace', ` + "`fulltext.eventually_consistent`" + `: false}}`,
}

// vectorIndexOptions: no fixed dimension: the embedder decides it, and a namespace's :Space
// node keeps it; the index answers a query only with vectors of the query's dimension.
// Quantization off: quantized scores are off by ~3e-4 and rank near-ties differently from
// the embedded store; re-reading the vectors to score them exactly costs more than the
// search (16 ms for 160 candidates of 256 dimensions).
const vectorIndexOptions = ` OPTIONS {indexConfig: {` + "`vector.similarity_function`" + `: 'cosine', ` + "`vector.quantization.enabled`" + `: false}}`

// The vector index: where the server filters inside a vector search (nsVectors), the
// index carries the namespace as a filter property, so a search reads only its namespace's
// vectors whatever the others hold. Elsewhere (Neo4j 5) the one index is shared and searches
// filter afterwards (search.go).
var vectorSchema = map[bool]string{ // by nsVectors
	false: `CREATE VECTOR INDEX ` + vectorIndex + ` IF NOT EXISTS FOR (n:Unit) ON n.embedding` + vectorIndexOptions,
	true:  `CYPHER 25 CREATE VECTOR INDEX ` + nsVectorIndex + ` IF NOT EXISTS FOR (n:Unit) ON n.embedding WITH [n.ns]` + vectorIndexOptions,
}

// dropSharedVectors drops the shared vector index once the namespace-filtered one is online
// (a database that began on Neo4j 5): a second index on the same vectors would double every
// write's cost, and until then the servers of the earlier version still search it.
const dropSharedVectors = `DROP INDEX ` + vectorIndex + ` IF EXISTS`

// filtersVectors reports whether a Neo4j kernel version filters inside a vector search:
// the SEARCH clause's in-index filters are generally available from 2026.02. Versions are
// "5.26.14" (Neo4j 5) or calendar ones such as "2026.08.1"; anything else reads as no.
func filtersVectors(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	year, err1 := strconv.Atoi(parts[0])
	month, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return year > 2026 || year == 2026 && month >= 2
}

// serverVersion returns the Neo4j kernel's version, "" when the server does not say.
func (s *Store) serverVersion(ctx context.Context) (string, error) {
	var version string
	err := s.read(ctx, "server version", func(tx runner) error {
		recs, err := collect(ctx, tx, `CALL dbms.components() YIELD name, versions WHERE name = 'Neo4j Kernel' RETURN versions[0]`, nil)
		if err == nil && len(recs) > 0 {
			version, _ = recs[0].Values[0].(string)
		}
		return err
	})
	return version, err
}

// ensureSchema creates what is missing and waits for the indexes to be online. Schema
// statements cannot share a transaction with data, so each runs on its own.
func (s *Store) ensureSchema(ctx context.Context) error {
	version, err := s.serverVersion(ctx)
	if err != nil {
		return err
	}
	s.nsVectors = filtersVectors(version)
	for i := range schema {
		if err := s.write(ctx, "create schema", func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, schema[i], nil)
		}); err != nil {
			return err
		}
	}
	if err := s.write(ctx, "create schema", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, vectorSchema[s.nsVectors], nil)
	}); err != nil {
		return err
	}
	if err := s.write(ctx, "await indexes", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, `CALL db.awaitIndexes(300)`, nil)
	}); err != nil {
		return err
	}
	if s.nsVectors {
		if err := s.write(ctx, "drop the shared vector index", func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, dropSharedVectors, nil)
		}); err != nil {
			return err
		}
	}
	if err := s.migrateNoTime(ctx); err != nil {
		return err
	}
	if err := s.migrateTextStats(ctx); err != nil {
		return err
	}
	// Nothing reads the edge keys without a fallback, so a migration that fails (two servers
	// upgrading at once and deadlocking, say) is retried at the next start, not fatal.
	if err := s.migrateEdgeKeys(ctx); err != nil {
		s.log.Warn("neo4j: the edge keys are not all stored yet; the next start tries again", "err", err)
	}
	return nil
}

// noTimeProps are the optional time properties that stored the zero time as 0 before
// noTime; required ones (at, created of a surfacing or event) could only hold the epoch.
var noTimeProps = []string{
	`MATCH (n:Node) WHERE n.created = 0 SET n.created = $none`,
	`MATCH (n:Node) WHERE n.valid = 0 SET n.valid = $none`,
	`MATCH (n:Node) WHERE n.invalid = 0 SET n.invalid = $none`,
	`MATCH (n:Node) WHERE n.last_used = 0 SET n.last_used = $none`,
	`MATCH (n:Node) WHERE n.last_surfaced = 0 SET n.last_surfaced = $none`,
	`MATCH (n:Node) WHERE n.first = 0 SET n.first = $none`,
	`MATCH (n:Node) WHERE n.last = 0 SET n.last = $none`,
	`MATCH ()-[r]->() WHERE r.last_co = 0 SET r.last_co = $none`,
	`MATCH ()-[r]->() WHERE r.last_decayed = 0 SET r.last_decayed = $none`,
	`MATCH (n:Surfacing) WHERE n.outcome_at = 0 SET n.outcome_at = $none`,
	`MATCH (n:Conversation) WHERE n.updated = 0 SET n.updated = $none`,
	`MATCH (n:QueueItem) WHERE n.due = 0 SET n.due = $none`,
	`MATCH (n:QueueItem) WHERE n.queued = 0 SET n.queued = $none`,
	`MATCH (n:JobRun) WHERE n.start = 0 SET n.start = $none`,
	`MATCH (n:JobRun) WHERE n.end = 0 SET n.end = $none`,
	`MATCH (n:Decision) WHERE n.rewarded_at = 0 SET n.rewarded_at = $none`,
	`MATCH (n:Experiment) WHERE n.stopped_at = 0 SET n.stopped_at = $none`,
}

// migrateNoTime rewrites the zero times stored as 0 to noTime, once per database (a
// Migration node records it; rerunning is harmless, only a scan).
func (s *Store) migrateNoTime(ctx context.Context) error {
	if done, err := s.migrated(ctx, "no_time"); err != nil || done {
		return err
	}
	for i := range noTimeProps {
		if err := s.write(ctx, "migrate no_time", func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, noTimeProps[i], map[string]any{"none": int64(noTime)})
		}); err != nil {
			return err
		}
	}
	return s.write(ctx, "migrate no_time", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, `MERGE (:Migration {name: 'no_time'})`, nil)
	})
}

// The text statistics migration (bm25.go): a database written before them has units without
// ixterms, no :Term counts and no unit counts on its :Space nodes.
const (
	textMigrated  = `MATCH (m:Migration {name: 'text_stats'}) RETURN m.name`
	textMigrate   = `MERGE (:Migration {name: 'text_stats'})`
	allSpaces     = `MATCH (sp:Space) RETURN sp.ns AS ns ORDER BY ns`
	lockSpace     = `MATCH (sp:Space {ns: $ns}) SET sp.lk = NOT coalesce(sp.lk, false), sp.units = 0, sp.tlen = 0`
	clearTerms    = `MATCH (t:Term {ns: $ns}) DETACH DELETE t`
	readUnitTerms = `MATCH (u:Unit {ns: $ns}) WHERE u.id > $after
		RETURN u.id AS id, coalesce(u.terms, '') AS terms ORDER BY id LIMIT $batch`
	setIxTerms  = `UNWIND $rows AS r MATCH (u:Memory {ns: $ns, id: r.id}) SET u.ixterms = r.ix`
	dropOldText = `DROP INDEX salience_unit_terms IF EXISTS`
)

// migrateTextStats builds the text statistics of every namespace once per database (a
// Migration node records it), each namespace in one transaction under its write lock, so a
// replica writing meanwhile waits and then counts on top; and drops the full-text index of
// before, which read every namespace's postings.
func (s *Store) migrateTextStats(ctx context.Context) error {
	done := false
	var spaces []string
	if err := s.read(ctx, "check migrations", func(tx runner) error {
		recs, err := collect(ctx, tx, textMigrated, nil)
		if done = len(recs) > 0; err != nil || done {
			return err
		}
		recs, err = collect(ctx, tx, allSpaces, nil)
		spaces = spaces[:0]
		for _, r := range recs {
			ns, _ := r.Values[0].(string)
			spaces = append(spaces, ns)
		}
		return err
	}); err != nil || done {
		return err
	}
	for _, ns := range spaces {
		if err := s.write(ctx, "migrate text_stats", func(tx neo4j.ManagedTransaction) error {
			if err := exec(ctx, tx, lockSpace, map[string]any{"ns": ns}); err != nil {
				return err
			}
			if err := exec(ctx, tx, clearTerms, map[string]any{"ns": ns}); err != nil {
				return err
			}
			var c termCounts
			for after := ""; ; {
				recs, err := collect(ctx, tx, readUnitTerms, map[string]any{"ns": ns, "after": after, "batch": int64(maxListParam)})
				if err != nil {
					return err
				}
				rows := make([]map[string]any, 0, len(recs))
				for _, r := range recs {
					id, _ := r.Values[0].(string)
					ts, _ := r.Values[1].(string)
					terms := strings.Fields(ts)
					c.add(terms)
					rows = append(rows, map[string]any{"id": id, "ix": ixTerms(ns, terms)})
					after = id
				}
				if err := exec(ctx, tx, setIxTerms, map[string]any{"ns": ns, "rows": rows}); err != nil {
					return err
				}
				if len(recs) < maxListParam {
					break
				}
			}
			return countTerms(ctx, tx, ns, &c, 1)
		}); err != nil {
			return err
		}
	}
	// Schema and data cannot share a transaction.
	if err := s.write(ctx, "migrate text_stats", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, dropOldText, nil)
	}); err != nil {
		return err
	}
	return s.write(ctx, "migrate text_stats", func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, textMigrate, nil)
	})
}

// The edge keys migration (edgeProps): relationships written before keys were stored get
// theirs, in batches, each its own transaction. Reads never depend on it (graph.go orders
// an edge without a key by its ends' ids); it makes the strongest edges of old databases
// as cheap to read as new ones.
const (
	edgeKeysMigrate = `MERGE (:Migration {name: 'edge_keys'})`
	setEdgeKeys     = `MATCH (a:Node)-[r]->(b:Node) WHERE r.key IS NULL
		CALL (a, r, b) { SET r.key = [a.id, b.id, r.type] } IN TRANSACTIONS OF 10000 ROWS`
)

// migrateEdgeKeys stores the key of every edge without one, once per database (a Migration
// node records it; rerunning is harmless, only a scan).
func (s *Store) migrateEdgeKeys(ctx context.Context) error {
	if done, err := s.migrated(ctx, "edge_keys"); err != nil || done {
		return err
	}
	// CALL { } IN TRANSACTIONS runs only in an auto-commit transaction.
	if err := s.writeOne(ctx, "migrate edge_keys", setEdgeKeys, nil); err != nil {
		return err
	}
	return s.writeOne(ctx, "migrate edge_keys", edgeKeysMigrate, nil)
}

// migrated reports whether the migration of this name has run (its :Migration node).
func (s *Store) migrated(ctx context.Context, name string) (bool, error) {
	done := false
	err := s.read(ctx, "check migrations", func(tx runner) error {
		recs, err := collect(ctx, tx, `MATCH (m:Migration {name: $name}) RETURN m.name`, map[string]any{"name": name})
		done = len(recs) > 0
		return err
	})
	return done, err
}
