package neo4j

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/storetest"
)

// uriEnv names the Neo4j the integration tests run against; `make test-neo4j` starts a
// throw-away Neo4j 5 Community and sets it.
const uriEnv = "SALIENCE_NEO4J_URI"

// openTestStore connects to the test Neo4j, or skips with the one line that says how to
// run these tests. The database is wiped: the tests own it.
func openTestStore(t *testing.T) *Store {
	t.Helper()
	uri := os.Getenv(uriEnv)
	if uri == "" {
		t.Skip("Neo4j store tests skipped: " + uriEnv + " is not set; run `make test-neo4j` (starts Neo4j 5 through Maven, needs Java 17)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := Open(ctx, Options{URI: uri, User: os.Getenv("SALIENCE_NEO4J_USER"), Password: os.Getenv("SALIENCE_NEO4J_PASSWORD")})
	if err != nil {
		t.Fatalf("Open(%s): %v", uri, err)
	}
	t.Cleanup(func() { s.Close() })
	wipe(t, s)
	return s
}

const wipeAll = `MATCH (n) DETACH DELETE n`

// nodesOfNamespace counts a namespace's nodes under any label: its :Space, its :Term nodes
// (the text statistics), and the others.
const nodesOfNamespace = `MATCH (n) WHERE n.ns = $ns
	RETURN CASE WHEN n:Space THEN 'space' WHEN n:Term THEN 'term' ELSE 'other' END AS kind, count(*) AS n`

func wipe(t *testing.T, s *Store) {
	t.Helper()
	err := s.write(context.Background(), "wipe", func(tx neo4j.ManagedTransaction) error {
		return exec(context.Background(), tx, wipeAll, nil)
	})
	if err != nil {
		t.Fatalf("wipe: %v", err)
	}
}

// TestNeo4j holds every test that needs a running Neo4j, so that without one a plain
// `go test` reports a single skip.
func TestNeo4j(t *testing.T) {
	s := openTestStore(t)
	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) models.Store {
			wipe(t, s)
			return s
		})
	})
	t.Run("PruneSmallBatches", func(t *testing.T) {
		// Windows of two nodes: every cursor moves through several, ties of time included.
		defer func(n int) { pruneBatch = n }(pruneBatch)
		pruneBatch = 2
		storetest.PruneHistory(t, func(t *testing.T) models.Store {
			wipe(t, s)
			return s
		})
	})
	t.Run("SchemaIdempotent", func(t *testing.T) {
		// Every replica creates the schema at start; again is a no-op, not an error.
		if err := s.ensureSchema(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("VectorDimensions", func(t *testing.T) { testVectorDimensions(t, s) })
	t.Run("VectorSmallNamespace", func(t *testing.T) { testVectorSmallNamespace(t, s) })
	t.Run("VectorIndexes", func(t *testing.T) { testVectorIndexes(t, s) })
	t.Run("DropNamespace", func(t *testing.T) { testDropNamespace(t, s) })
	t.Run("DeleteNamespaceSmallBatches", func(t *testing.T) {
		// Batches of two nodes, and then no node of the deleted namespace under any label.
		defer func(n int) { pruneBatch = n }(pruneBatch)
		pruneBatch = 2
		storetest.DeleteNamespace(t, func(t *testing.T) models.Store {
			wipe(t, s)
			return s
		})
		var left []*neo4j.Record
		err := s.read(context.Background(), "left", func(tx runner) error {
			var err error
			left, err = collect(context.Background(), tx, nodesOfNamespace, map[string]any{"ns": "suite"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The suite made the namespace anew with one memory: its node, its :Space, and a :Term
		// for each of its terms.
		got := map[string]int64{}
		for _, r := range left {
			got[r.Values[0].(string)] += r.Values[1].(int64)
		}
		terms := map[string]bool{}
		for _, t := range nlp.Terms("a fresh start") { // the content storetest gives it
			terms[t] = true
		}
		if want := map[string]int64{"space": 1, "other": 1, "term": int64(len(terms))}; !maps.Equal(got, want) {
			t.Fatalf("nodes of the deleted and recreated namespace: %v; want %v", got, want)
		}
	})
	t.Run("Reembed", func(t *testing.T) { testReembed(t, s) })
	t.Run("ServerCPU", func(t *testing.T) { testServerCPU(t, s) })
	t.Run("EdgeKeys", func(t *testing.T) { testEdgeKeys(t, s) })
	t.Run("FollowerReads", func(t *testing.T) {
		// Reads through ExecuteRead (followers in a cluster) see the writes of this process.
		wipe(t, s)
		ctx := context.Background()
		f, err := Open(ctx, Options{URI: os.Getenv(uriEnv), User: os.Getenv("SALIENCE_NEO4J_USER"),
			Password: os.Getenv("SALIENCE_NEO4J_PASSWORD"), FollowerReads: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("fr", "m1", 1, 0)}); err != nil {
			t.Fatal(err)
		}
		m, err := f.GetMemory(ctx, "fr", "m1")
		if err != nil || m.Content != "vector m1" {
			t.Fatalf("GetMemory = %+v, %v", m, err)
		}
		hits, err := f.SearchText(ctx, "fr", "vector", 5)
		if err != nil || len(hits) != 1 || hits[0].ID != "m1" {
			t.Fatalf("SearchText = %v, %v", hits, err)
		}
	})
}

func vecMemory(ns, id string, v ...float32) *models.MemoryWrite {
	return &models.MemoryWrite{Memory: &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn,
		Content: "vector " + id, CreatedAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Embedding: v}}
}

// testVectorDimensions: a namespace keeps the dimension of its first embedding; other
// sizes are EINVALID on write and on search, while another namespace may use its own.
func testVectorDimensions(t *testing.T, s *Store) {
	wipe(t, s)
	ctx := context.Background()
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("d3", "a", 1, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	err := s.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("d3", "b", 1, 0, 0, 0)})
	if models.ErrorCode(err) != models.EINVALID {
		t.Fatalf("a 4-dim embedding in a 3-dim namespace: %v, want EINVALID", err)
	}
	if _, err := s.SearchVector(ctx, "d3", []float32{1, 0, 0, 0}, 3); models.ErrorCode(err) != models.EINVALID {
		t.Fatalf("a 4-dim query in a 3-dim namespace: %v, want EINVALID", err)
	}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{vecMemory("d4", "b", 0, 1, 0, 0)}); err != nil {
		t.Fatalf("another namespace with another size: %v", err)
	}
	if ids, err := s.Embedders(ctx); err != nil || len(ids) != 2 || ids["d3"].Dims != 3 || ids["d4"].Dims != 4 {
		t.Fatalf("Embedders = %v, %v; want d3: 3, d4: 4 dimensions", ids, err)
	}
	for ns, q := range map[string][]float32{"d3": {1, 0, 0}, "d4": {0, 1, 0, 0}} {
		hits, err := s.SearchVector(ctx, ns, q, 3)
		if err != nil || len(hits) != 1 || hits[0].Score < 0.9999 {
			t.Fatalf("SearchVector(%s) = %v, %v", ns, hits, err)
		}
	}
}

// testVectorSmallNamespace: when the index's nearest candidates all belong to other
// namespaces, the search widens and at last scores the namespace exactly.
func testVectorSmallNamespace(t *testing.T, s *Store) {
	wipe(t, s)
	ctx := context.Background()
	var big []*models.MemoryWrite
	for i := range 120 {
		big = append(big, vecMemory("big", fmt.Sprintf("b%03d", i), 1, float32(i)/1000, 0))
	}
	small := []*models.MemoryWrite{vecMemory("small", "far", 0, 0, 1), vecMemory("small", "farther", -1, 0, 0.1)}
	if err := s.CreateMemories(ctx, append(big, small...)); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { maxCandidates = n }(maxCandidates)
	for _, limit := range []int{20000, 60} { // widening finds them; so does the exact scan
		maxCandidates = limit
		trips := s.RoundTrips()
		hits, err := s.SearchVector(ctx, "small", []float32{1, 0, 0}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].ID != "far" || hits[1].ID != "farther" ||
			math.Abs(hits[0].Score) > 1e-6 || math.Abs(hits[1].Score-(-1/math.Sqrt(1.01))) > 1e-4 {
			t.Fatalf("maxCandidates %d: hits %v, want far (cos 0) then farther (cos −0.995)", limit, hits)
		}
		// Where the index filters by namespace, the others' 120 vectors cost nothing: one
		// query answers. On Neo4j 5 the shared index is asked again, wider, then scanned.
		switch n := s.RoundTrips() - trips; {
		case s.nsVectors && n != 1:
			t.Fatalf("maxCandidates %d: %d round trips with the namespace-filtered index, want 1", limit, n)
		case !s.nsVectors && n < 2:
			t.Fatalf("maxCandidates %d: %d round trips with the shared index, want the widening's 2 or more", limit, n)
		}
	}
}

// testVectorIndexes: the server's vector indexes are the one its version calls for: the
// namespace-filtered index where the server filters inside a vector search (replacing the
// shared one a database begun on Neo4j 5 has), the shared one elsewhere, never both.
func testVectorIndexes(t *testing.T, s *Store) {
	ctx := context.Background()
	if s.nsVectors {
		// A database begun on Neo4j 5 has the shared index: the next start replaces it.
		if err := s.write(ctx, "shared index", func(tx neo4j.ManagedTransaction) error {
			return exec(ctx, tx, vectorSchema[false], nil)
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.ensureSchema(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := s.read(ctx, "vector indexes", func(tx runner) error {
		recs, err := collect(ctx, tx, `SHOW VECTOR INDEXES YIELD name, properties RETURN name, properties ORDER BY name`, nil)
		for _, r := range recs {
			got = append(got, fmt.Sprintln(r.Values...))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{vectorIndex + " [embedding]\n"}
	if s.nsVectors {
		want = []string{nsVectorIndex + " [embedding ns]\n"}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("vector indexes %q, want %q", got, want)
	}
	t.Logf("server filters vector searches by namespace: %v", s.nsVectors)
}

func TestFiltersVectors(t *testing.T) {
	for v, want := range map[string]bool{
		"5.26.14": false, "5.27.0-aura": false, "2025.12.1": false, "2026.01.4": false,
		"2026.02.0": true, "2026.08.1": true, "2027.01.0": true, "2026.10-aura": true,
		"": false, "dev": false, "2026": false, "x.y.z": false,
	} {
		if got := filtersVectors(v); got != want {
			t.Errorf("filtersVectors(%q) = %v, want %v", v, got, want)
		}
	}
}

// testDropNamespace: everything of the namespace goes, nothing of another.
func testDropNamespace(t *testing.T, s *Store) {
	wipe(t, s)
	ctx := context.Background()
	for _, ns := range []string{"gone", "kept"} {
		w := vecMemory(ns, "m1", 1, 0)
		w.Concepts = []*models.Concept{{Name: "cat", Kind: models.ConceptTopic}}
		w.Edges = []*models.Edge{{From: "m1", To: "c:cat", Type: models.EdgeMentions, Weight: 0.3}}
		if err := s.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
			t.Fatal(err)
		}
		sf := &models.Surfacing{ID: "s1", Namespace: ns, ConversationID: "c", MemoryID: "m1", Mode: models.ModeSearch, At: time.Now()}
		if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, &models.ConversationState{Namespace: ns, ConversationID: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteNamespace(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]int{"gone": 0, "kept": 1} {
		nodes, edges, err := s.GraphStats(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		_, convErr := s.GetConversation(ctx, ns, "c")
		if nodes != 2*want || edges != want || len(ss) != want || (want == 0) != (models.ErrorCode(convErr) == models.ENOTFOUND) {
			t.Fatalf("%s after dropping gone: %d nodes, %d edges, %d surfacings, conversation %v", ns, nodes, edges, len(ss), convErr)
		}
	}
	if got, _ := s.Namespaces(ctx); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("Namespaces = %v, want [kept]", got)
	}
}

// testServerCPU: the server's CPU time grows by about what a query costs it. A query
// that keeps the server busy for a while (counting through ten million numbers) shows in
// it, and a wrong unit or field (milliseconds, the system's load) would not fit.
func testServerCPU(t *testing.T, s *Store) {
	ctx := context.Background()
	before, err := s.ServerCPU(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.read(ctx, "busy", func(tx runner) error {
		_, err := collect(ctx, tx, `UNWIND range(1, 10000000) AS i RETURN sum(i % 7) AS n`, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	after, err := s.ServerCPU(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The query runs on one server thread: it cannot cost less than a fifth of its wall time
	// (a busy machine) nor more than the whole machine for that long, plus a second of the
	// server's background work.
	used := after - before
	if lo, hi := wall/5, time.Duration(runtime.NumCPU())*wall+time.Second; used < lo || used > hi {
		t.Fatalf("ServerCPU grew by %v over a query of %v; want within [%v, %v]", used, wall, lo, hi)
	}
	t.Logf("a query of %v cost the server %v of CPU", wall, used)
}

// testEdgeKeys: every edge stores its key, whether a batch or an update wrote it; an edge
// without one (an older replica's) still sorts in key order, and the edge_keys migration
// gives it its key.
func testEdgeKeys(t *testing.T, s *Store) {
	ctx := context.Background()
	wipe(t, s)
	w := &models.MemoryWrite{Memory: &models.Memory{ID: "m1", Namespace: "ek", Kind: models.KindTurn, Content: "one",
		CreatedAt: time.Unix(1, 0).UTC(), Importance: 0.5, Confidence: models.DefaultConfidence}}
	// Written out of key order, all of one weight: only the key decides which are kept.
	w.Edges = []*models.Edge{
		{From: "m9", To: "c:a", Type: models.EdgeMentions, Weight: 0.5},
		{From: "c:a", To: "m3", Type: models.EdgeRelation, Weight: 0.5},
		{From: "m5", To: "c:a", Type: models.EdgeMentions, Weight: 0.5},
		{From: "c:a", To: "m1", Type: models.EdgeRelation, Weight: 0.5},
	}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"m7", "m1"} {
		if err := s.Update(ctx, func(tx models.Tx) error {
			return tx.PutEdge(&models.Edge{Namespace: "ek", From: from, To: "c:a", Type: models.EdgeMentions, Weight: 0.5})
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"c:a-relation->m1", "c:a-relation->m3", "m1-mentions->c:a", "m5-mentions->c:a", "m7-mentions->c:a", "m9-mentions->c:a"}
	keys := func() []string {
		var out []string
		err := s.read(ctx, "keys", func(tx runner) error {
			recs, err := collect(ctx, tx, `MATCH (a:Node {ns: 'ek'})-[r]->(b)
				RETURN a.id + '-' + r.type + '->' + b.id AS edge, CASE WHEN r.key IS NULL THEN 'none' WHEN r.key = [a.id, b.id, r.type] THEN 'ok' ELSE 'wrong' END AS key
				ORDER BY edge`, nil)
			for _, r := range recs {
				out = append(out, fmt.Sprintf("%s %s", r.Values[0], r.Values[1]))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	strongest := func(what string) {
		t.Helper()
		for per := 1; per < len(want); per++ {
			es, err := s.StrongestNeighbors(ctx, "ek", []string{"c:a"}, per, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(es))
			for i, e := range es {
				got[i] = fmt.Sprintf("%s-%s->%s", e.From, e.Type, e.To)
			}
			if !slices.Equal(got, want[:per]) {
				t.Fatalf("%s: the %d strongest of c:a %v, want %v", what, per, got, want[:per])
			}
		}
	}
	keyed := make([]string, len(want))
	unkeyed := make([]string, len(want))
	for i, e := range want {
		keyed[i], unkeyed[i] = e+" ok", e+" none"
	}
	if got := keys(); !slices.Equal(got, keyed) {
		t.Fatalf("stored keys: %v, want %v", got, keyed)
	}
	strongest("stored keys")
	// As an older replica leaves them: no keys, and no migration recorded.
	err := s.write(ctx, "unkey", func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, `MATCH (:Node {ns: 'ek'})-[r]->() REMOVE r.key`, nil); err != nil {
			return err
		}
		return exec(ctx, tx, `MATCH (m:Migration {name: 'edge_keys'}) DELETE m`, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(); !slices.Equal(got, unkeyed) {
		t.Fatalf("keys removed: %v, want %v", got, unkeyed)
	}
	strongest("no keys")
	if err := s.migrateEdgeKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if got := keys(); !slices.Equal(got, keyed) {
		t.Fatalf("keys after the migration: %v, want %v", got, keyed)
	}
	strongest("migrated")
}
