package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

var ctx = context.Background()

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openAt opens a store at path and closes it when the test ends.
func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// migrated holds the database file of a store just created (every migration applied, then
// closed), made once per test binary: freshPath copies it, because migrating anew costs an
// open 260 ms under the race detector, and the conformance suites open about a hundred.
var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "salience-migrated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "salience.db")
	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// freshPath returns the path of a new store's database in a temporary directory: a copy of
// a just-created one, as Open leaves it on a new path.
func freshPath(t testing.TB) string {
	t.Helper()
	b, err := migrated()
	if err != nil {
		t.Fatalf("migrated database: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "salience.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openReady opens a fresh store in a temporary directory and loads its indexes.
func openReady(t testing.TB) *Store {
	t.Helper()
	s := openAt(t, freshPath(t))
	if err := s.Rebuild(ctx); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	return s
}

// openBeside opens a ready store on a file another store has open, as a command run beside
// a server does.
func openBeside(t testing.TB) *Store {
	t.Helper()
	path := freshPath(t)
	openAt(t, path)
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel() // the longest tests of the package: with the other three, on both cores
	storetest.Run(t, func(t *testing.T) models.Store { return openReady(t) })
}

// TestConformanceBeside runs the conformance suite on a store that shares its file with
// another.
func TestConformanceBeside(t *testing.T) {
	t.Parallel() // the longest tests of the package: with the other three, on both cores
	storetest.Run(t, func(t *testing.T) models.Store { return openBeside(t) })
}

// TestUnreadyReadsUseSQL checks the reads that fall back to SQLite before Rebuild, and the
// searches that refuse to answer until then.
func TestUnreadyReadsUseSQL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	m := &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindTurn, Content: "cats in the garden",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Confidence: 0.5, Embedding: []float32{3, 4},
		Domains: []string{"pets"}, Triggers: []string{"cat"}}
	w := &models.MemoryWrite{Memory: m,
		Concepts: []*models.Concept{{Name: "Cat", Kind: models.ConceptTopic, FirstSeen: m.CreatedAt, LastSeen: m.CreatedAt}},
		Edges:    []*models.Edge{{From: "m1", To: "c:cat", Type: models.EdgeMentions, Weight: 0.3}}}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
		t.Fatal(err)
	}
	if s.Ready() {
		t.Fatal("Ready before Rebuild")
	}
	for name, err := range map[string]error{
		"SearchText":   second(s.SearchText(ctx, "ns", "cat", 5)),
		"SearchVector": second(s.SearchVector(ctx, "ns", []float32{1, 0}, 5)),
		"Neighbors":    second(s.Neighbors(ctx, "ns", []string{"m1"})),
	} {
		if got := models.ErrorCode(err); got != models.EUNAVAILABLE {
			t.Fatalf("%s before Rebuild: code %q, want %q", name, got, models.EUNAVAILABLE)
		}
	}
	got, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil {
		t.Fatal(err)
	}
	// Stored normalized: (3,4)/5.
	if !slices.Equal(got.Embedding, []float32{0.6, 0.8}) || !got.CreatedAt.Equal(m.CreatedAt) || got.Triggers[0] != "cat" {
		t.Fatalf("memory read from SQL = %+v", got)
	}
	for _, vectors := range []bool{false, true} {
		vs, err := s.ViewMemories(ctx, "ns", []string{"m1", "missing"}, vectors)
		if err != nil || len(vs) != 1 || vs[0].Content != got.Content || (len(vs[0].Embedding) > 0) != vectors {
			t.Fatalf("ViewMemories(vectors %v) from SQL = %+v, %v", vectors, vs, err)
		}
	}
	cs, err := s.GetConcepts(ctx, "ns", []string{"cat"})
	if err != nil || len(cs) != 1 || cs[0].Mentions != 1 {
		t.Fatalf("concepts from SQL = %+v, %v", cs, err)
	}
	nodes, edges, err := s.GraphStats(ctx, "ns")
	if err != nil || nodes != 2 || edges != 1 {
		t.Fatalf("GraphStats from SQL = %d, %d, %v; want 2, 1", nodes, edges, err)
	}
	nss, err := s.Namespaces(ctx)
	if err != nil || !slices.Equal(nss, []string{"ns"}) {
		t.Fatalf("Namespaces from SQL = %v, %v", nss, err)
	}

	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	hits, err := s.SearchText(ctx, "ns", "cat", 5)
	if err != nil || len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("SearchText after Rebuild = %v, %v", hits, err)
	}
	cached, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cached.Embedding, got.Embedding) {
		t.Fatalf("cached embedding %v differs from SQL's %v", cached.Embedding, got.Embedding)
	}
}

func second[T any](_ T, err error) error { return err }

func TestEmbeddingDimensionsFixedPerNamespace(t *testing.T) {
	s := openReady(t)
	mk := func(ns, id string, v ...float32) *models.MemoryWrite {
		return &models.MemoryWrite{Memory: &models.Memory{ID: id, Namespace: ns, Kind: models.KindTurn, Content: "x " + id,
			CreatedAt: time.Unix(100, 0), Embedding: v}}
	}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{mk("a", "m0"), mk("a", "m1", 1, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	err := s.CreateMemories(ctx, []*models.MemoryWrite{mk("a", "m2", 1, 0)})
	if models.ErrorCode(err) != models.EINVALID {
		t.Fatalf("3-dim namespace accepted a 2-dim vector: %v", err)
	}
	err = s.CreateMemories(ctx, []*models.MemoryWrite{mk("b", "m3", 1, 0), mk("b", "m4", 1, 0, 0)})
	if models.ErrorCode(err) != models.EINVALID {
		t.Fatalf("a batch with mixed dimensions was accepted: %v", err)
	}
	// Another namespace picks its own dimension.
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{mk("b", "m5", 0, 1)}); err != nil {
		t.Fatal(err)
	}
	_, err = s.SearchVector(ctx, "a", []float32{1, 0}, 3)
	if models.ErrorCode(err) != models.EINVALID {
		t.Fatalf("query of the wrong dimension: %v", err)
	}
	hits, err := s.SearchVector(ctx, "b", []float32{0, 1}, 3)
	if err != nil || len(hits) != 1 || hits[0].ID != "m5" {
		t.Fatalf("SearchVector(b) = %v, %v", hits, err)
	}
}

// TestReopenRestoresEverything writes through every kind of record, reopens the file, and
// checks that the rebuilt indexes answer exactly like the written-through ones.
func TestReopenRestoresEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	ws := corpus(300, 8)
	for b := range slices.Chunk(ws, 100) {
		if err := s.CreateMemories(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteMemory(ctx, "ns", ws[7].Memory.ID); err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx models.Tx) error {
		m, err := tx.GetMemory("ns", ws[3].Memory.ID)
		if err != nil {
			return err
		}
		m.UsageCount, m.Confidence = 9, 0.9
		if err := tx.PutMemory(m); err != nil {
			return err
		}
		if err := tx.PutEdge(&models.Edge{Namespace: "ns", From: ws[3].Memory.ID, To: "c:t1", Type: models.EdgeConcept, Weight: 0.8, CoOccurrences: 4,
			LastCoOccurred: time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC), LastDecayed: time.Date(1969, 12, 31, 23, 0, 0, 1, time.UTC)}); err != nil {
			return err
		}
		// The rebuild packs an edge's text and integer fields with 0x1f; a predicate may hold one.
		return tx.PutEdge(&models.Edge{Namespace: "ns", From: "c:t1", To: "c:t2", Type: models.EdgeRelation, Weight: 0.6,
			Predicate: "likes\x1fa lot", Fact: ws[2].Memory.ID, CoOccurrences: 1234567, LastDecayed: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetState(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	sf := &models.Surfacing{ID: "s1", Namespace: "ns", ConversationID: "c", MemoryID: ws[0].Memory.ID, Mode: models.ModeAmbient, At: at}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, &models.ConversationState{Namespace: "ns", ConversationID: "c", Turns: 1, UpdatedAt: at, RecentSurfaced: [][]string{{ws[0].Memory.ID}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx models.Tx) error {
		return tx.InsertEvent(&models.Event{ID: "e1", Namespace: "ns", SurfacingID: "s1", Type: models.EventUsed, At: at})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(ctx, []*models.ResurfaceItem{{Namespace: "ns", MemoryID: ws[1].Memory.ID, Score: 1, DueAt: at}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordJobRun(ctx, &models.JobRun{ID: "r1", Job: "decay-scan", Start: at}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AcquireLease(ctx, "decay-scan", "host-a", time.Hour, at); err != nil || !ok {
		t.Fatal(ok, err)
	}
	queries := []string{word(0) + " " + word(1), word(3) + " " + word(17) + " " + word(40), word(5), word(8) + " " + word(9) + " " + word(100)}
	vq := [][]float32{ws[0].Memory.Embedding, ws[1].Memory.Embedding, ws[2].Memory.Embedding}
	nodes := []string{ws[3].Memory.ID, "c:t1", "c:t2"}
	before := snapshot(t, s, queries, vq, nodes)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := openAt(t, path)
	if err := s2.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, s2, queries, vq, nodes)
	if d := diffSnapshots(before, after); d != "" {
		t.Fatalf("rebuilt indexes differ from the written-through ones in %s", d)
	}
	if len(before.text[0]) == 0 || len(before.vec[0]) == 0 || len(before.edges) == 0 {
		t.Fatalf("snapshot too empty to prove anything: %d text hits, %d vector hits, %d edges",
			len(before.text[0]), len(before.vec[0]), len(before.edges))
	}
	if v, err := s2.GetState(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("state after reopen = %q, %v", v, err)
	}
	if got, err := s2.GetSurfacing(ctx, "ns", "s1"); err != nil || got.MemoryID != sf.MemoryID || !got.At.Equal(at) {
		t.Fatalf("surfacing after reopen = %+v, %v", got, err)
	}
	if c, err := s2.GetConversation(ctx, "ns", "c"); err != nil || c.Turns != 1 || len(c.RecentSurfaced) != 1 || c.RecentSurfaced[0][0] != ws[0].Memory.ID {
		t.Fatalf("conversation after reopen = %+v, %v", c, err)
	}
	if evs, err := s2.FindEvents(ctx, models.EventFilter{Namespace: "ns"}); err != nil || len(evs) != 1 || evs[0].ID != "e1" {
		t.Fatalf("events after reopen = %+v, %v", evs, err)
	}
	if q, err := s2.Queue(ctx, "ns", 0); err != nil || len(q) != 1 || q[0].MemoryID != ws[1].Memory.ID {
		t.Fatalf("queue after reopen = %+v, %v", q, err)
	}
	if runs, err := s2.FindJobRuns(ctx, "", 0); err != nil || len(runs) != 1 || runs[0].ID != "r1" {
		t.Fatalf("job runs after reopen = %+v, %v", runs, err)
	}
	if ok, err := s2.AcquireLease(ctx, "decay-scan", "host-b", time.Hour, at.Add(time.Minute)); err != nil || ok {
		t.Fatalf("lease after reopen: another holder got it (%v, %v)", ok, err)
	}
	m, err := s2.GetMemory(ctx, "ns", ws[3].Memory.ID)
	if err != nil || m.UsageCount != 9 || m.Confidence != 0.9 {
		t.Fatalf("updated memory after reopen = %+v, %v", m, err)
	}
	if _, err := s2.GetMemory(ctx, "ns", ws[7].Memory.ID); models.ErrorCode(err) != models.ENOTFOUND {
		t.Fatalf("deleted memory after reopen: %v", err)
	}
}

type snap struct {
	text, vec [][]models.Hit
	edges     []models.Edge
	mems      []models.Memory
	nodes     int
	nEdges    int
}

func snapshot(t *testing.T, s *Store, queries []string, vq [][]float32, nodes []string) snap {
	t.Helper()
	var out snap
	for _, q := range queries {
		hs, err := s.SearchText(ctx, "ns", q, 20)
		if err != nil {
			t.Fatal(err)
		}
		out.text = append(out.text, hs)
	}
	for _, v := range vq {
		hs, err := s.SearchVector(ctx, "ns", v, 20)
		if err != nil {
			t.Fatal(err)
		}
		out.vec = append(out.vec, hs)
	}
	es, err := s.Neighbors(ctx, "ns", nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		out.edges = append(out.edges, *e)
	}
	ids := []string{}
	for _, hs := range out.text {
		for _, h := range hs {
			ids = append(ids, h.ID)
		}
	}
	ms, err := s.GetMemories(ctx, "ns", ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		out.mems = append(out.mems, *m)
	}
	if out.nodes, out.nEdges, err = s.GraphStats(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSnapshots names the first part in which a and b differ, "" when they agree.
func diffSnapshots(a, b snap) string {
	eqHits := func(x, y [][]models.Hit) bool {
		return slices.EqualFunc(x, y, func(p, q []models.Hit) bool { return slices.Equal(p, q) })
	}
	switch {
	case !eqHits(a.text, b.text):
		return fmt.Sprintf("text hits\n%v\n%v", a.text, b.text)
	case !eqHits(a.vec, b.vec):
		return fmt.Sprintf("vector hits\n%v\n%v", a.vec, b.vec)
	case a.nodes != b.nodes || a.nEdges != b.nEdges:
		return fmt.Sprintf("graph stats %d/%d vs %d/%d", a.nodes, a.nEdges, b.nodes, b.nEdges)
	case !slices.EqualFunc(a.edges, b.edges, func(x, y models.Edge) bool {
		return x.Key() == y.Key() && x.Weight == y.Weight && x.CoOccurrences == y.CoOccurrences && x.Namespace == y.Namespace &&
			x.LastCoOccurred.Equal(y.LastCoOccurred) && x.LastDecayed.Equal(y.LastDecayed) && x.Predicate == y.Predicate && x.Fact == y.Fact
	}):
		return fmt.Sprintf("neighbours\n%v\n%v", a.edges, b.edges)
	case len(a.mems) != len(b.mems):
		return fmt.Sprintf("%d vs %d memories", len(a.mems), len(b.mems))
	}
	for i := range a.mems {
		x, y := a.mems[i], b.mems[i]
		if x.ID != y.ID || x.Content != y.Content || x.UsageCount != y.UsageCount || !x.CreatedAt.Equal(y.CreatedAt) ||
			!slices.Equal(x.Embedding, y.Embedding) || !slices.Equal(x.Concepts, y.Concepts) {
			return fmt.Sprintf("memory %d\n%+v\n%+v", i, x, y)
		}
	}
	return ""
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	for range 3 {
		s, err := Open(path, Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Migrations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"migrations/0001_init.sql", "migrations/0002_surfacing_latency.sql", "migrations/0003_conversation_recent.sql", "migrations/0004_learning.sql", "migrations/0005_surfacing_settings_version.sql", "migrations/0006_decisions.sql", "migrations/0007_experiments.sql", "migrations/0009_no_time.sql", "migrations/0010_decision_concepts.sql", "migrations/0011_surfacing_indexes.sql", "migrations/0012_surfaced.sql", "migrations/0013_namespace_embedder.sql", "migrations/0014_source_role.sql", "migrations/0015_experiment_metrics.sql", "migrations/0016_experiment_tallies.sql", "migrations/0017_surfacings_experiment.sql"}) {
			t.Fatalf("migrations = %v", got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWALMode(t *testing.T) {
	s := openReady(t)
	var mode string
	var sync int
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 1 {
		t.Fatalf("journal_mode %q synchronous %d, want wal and 1 (NORMAL)", mode, sync)
	}
}

func TestOpenRejectsBadPath(t *testing.T) {
	if _, err := Open("", Options{}); err == nil {
		t.Fatal("empty path accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x?mode=ro"), Options{}); err == nil {
		t.Fatal("path with '?' accepted")
	}
}

// TestConcurrentReadsAndWrites runs the hot-path reads while memories are created, updated
// and deleted; with -race it checks the locking between SQLite, the caches and the indexes.
func TestConcurrentReadsAndWrites(t *testing.T) {
	s := openReady(t)
	ws := corpus(400, 8)
	if err := s.CreateMemories(ctx, ws[:200]); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 3 {
		readers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch (g + i) % 4 {
				case 0:
					_, err = s.SearchText(ctx, "ns", word(i%50)+" "+word(3), 10)
				case 1:
					_, err = s.SearchVector(ctx, "ns", ws[i%99].Memory.Embedding, 10) // ws[99] is chunked: no embedding
				case 2:
					_, err = s.GetMemories(ctx, "ns", []string{ws[i%400].Memory.ID, ws[(i+7)%400].Memory.ID})
				case 3:
					_, err = s.Neighbors(ctx, "ns", []string{ws[i%400].Memory.ID, "c:t1"})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i, w := range ws[200:] {
		if err := s.CreateMemories(ctx, []*models.MemoryWrite{w}); err != nil {
			t.Fatal(err)
		}
		id := ws[i].Memory.ID
		if i%3 == 0 {
			if err := s.DeleteMemory(ctx, "ns", id); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory("ns", id)
			if err != nil {
				return err
			}
			m.UsageCount++
			return tx.PutMemory(m)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The written-through state equals a fresh rebuild.
	queries := []string{word(0) + " " + word(1), word(2), word(5) + " " + word(8)}
	vq := [][]float32{ws[250].Memory.Embedding}
	nodes := []string{ws[1].Memory.ID, ws[300].Memory.ID, "c:t1"}
	before := snapshot(t, s, queries, vq, nodes)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(before, snapshot(t, s, queries, vq, nodes)); d != "" {
		t.Fatalf("written-through indexes differ from a rebuild in %s", d)
	}
}

// TestFirstVectorWhileSearching searches a namespace while its first embedded memory is
// written: the vector index appears under the readers' feet (a data race under -race if
// the index pointer were read without the lock).
func TestFirstVectorWhileSearching(t *testing.T) {
	s := openReady(t)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.SearchVector(ctx, "fresh", []float32{1, 0}, 3); err != nil {
				t.Error(err)
				return
			}
		}
	})
	m := &models.Memory{ID: "m1", Namespace: "fresh", Kind: models.KindTurn, Content: "x", CreatedAt: time.Unix(1, 0), Embedding: []float32{1, 0}}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}); err != nil {
		t.Fatal(err)
	}
	close(done)
	wg.Wait()
	hits, err := s.SearchVector(ctx, "fresh", []float32{1, 0}, 3)
	if err != nil || len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("hits = %v, %v", hits, err)
	}
}

// TestTxReadsFromCacheEqualSQL checks that the transaction's cached reads (memories from the
// cache, edges from the graph) equal what SQL holds, after every kind of write that moves
// them: creation, surfacing counters, an update, a deletion, and the transaction's own
// writes laid over the cache.
func TestTxReadsFromCacheEqualSQL(t *testing.T) {
	s := openReady(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	mk := func(id string) *models.MemoryWrite {
		return &models.MemoryWrite{
			Memory: &models.Memory{ID: id, Namespace: "ns", Kind: models.KindFact, Content: "memory " + id, CreatedAt: at,
				Confidence: 0.5, Concepts: []string{"bees"}, IrrelevantContexts: [][]string{{"taxes"}}, Embedding: []float32{1, 0}},
			Edges: []*models.Edge{{Namespace: "ns", From: id, To: "c:bees", Type: models.EdgeMentions, Weight: 0.4, CoOccurrences: 2, LastCoOccurred: at}},
		}
	}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{mk("m1"), mk("m2"), mk("m3")}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{{ID: "s1", Namespace: "ns", MemoryID: "m1", TurnID: "t", Mode: models.ModeAmbient, At: at.Add(time.Minute)}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx models.Tx) error {
		m, err := tx.GetMemory("ns", "m2")
		if err != nil {
			return err
		}
		m.Confidence, m.UsageCount, m.LastUsed = 0.6, 1, at.Add(time.Hour)
		return errors.Join(tx.PutMemory(m), tx.PutEdge(&models.Edge{Namespace: "ns", From: "m2", To: "m3", Type: models.EdgeCoRetrieved, Weight: 0.3, CoOccurrences: 1}))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMemory(ctx, "ns", "m3"); err != nil {
		t.Fatal(err)
	}

	keys := []models.EdgeKey{
		{From: "m1", To: "c:bees", Type: models.EdgeMentions}, {From: "m2", To: "c:bees", Type: models.EdgeMentions},
		{From: "m2", To: "m3", Type: models.EdgeCoRetrieved}, {From: "m3", To: "c:bees", Type: models.EdgeMentions},
	}
	compare := func(tx *storeTx, stage string) {
		t.Helper()
		for _, id := range []string{"m1", "m2", "m3", "missing"} {
			cached, cerr := tx.GetMemory("ns", id)
			stored, serr := scanMemory(tx.tx.QueryRowContext(ctx, selectMemory, "ns", id))
			if (cerr == nil) != (serr == nil) {
				t.Fatalf("%s: %s: cached error %v, SQL error %v", stage, id, cerr, serr)
			}
			if cerr == nil && !sameMemory(cached, stored) {
				t.Errorf("%s: %s:\ncached %+v\nSQL    %+v", stage, id, cached, stored)
			}
		}
		for _, k := range keys {
			cached, cerr := tx.GetEdge("ns", k)
			stored, serr := scanEdge(tx.tx.QueryRowContext(ctx, selectEdge,
				"ns", k.From, k.To, string(k.Type)))
			if (cerr == nil) != (serr == nil) {
				t.Fatalf("%s: %v: cached error %v, SQL error %v", stage, k, cerr, serr)
			}
			if cerr == nil && (cached.Weight != stored.Weight || cached.CoOccurrences != stored.CoOccurrences ||
				!cached.LastCoOccurred.Equal(stored.LastCoOccurred) || cached.Namespace != stored.Namespace) {
				t.Errorf("%s: %v: cached %+v, SQL %+v", stage, k, cached, stored)
			}
		}
	}
	if err := s.Update(ctx, func(mtx models.Tx) error {
		tx := mtx.(*storeTx)
		compare(tx, "committed state")
		m, err := tx.GetMemory("ns", "m1")
		if err != nil {
			return err
		}
		m.Confidence, m.RecentDismissals, m.IrrelevantContexts = 0.2, 2, [][]string{{"taxes"}, {"bees"}}
		e, err := tx.GetEdge("ns", keys[0])
		if err != nil {
			return err
		}
		e.Weight, e.CoOccurrences = 0.5, 3
		if err := errors.Join(tx.PutMemory(m), tx.PutEdge(e)); err != nil {
			return err
		}
		compare(tx, "own writes")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// sameMemory compares what a transaction reads and writes back: identity and metadata.
func sameMemory(a, b *models.Memory) bool {
	return a.ID == b.ID && a.Namespace == b.Namespace && a.Content == b.Content && a.CreatedAt.Equal(b.CreatedAt) &&
		a.Confidence == b.Confidence && a.UsageCount == b.UsageCount && a.LastUsed.Equal(b.LastUsed) &&
		a.SurfaceCount == b.SurfaceCount && a.LastSurfaced.Equal(b.LastSurfaced) && a.RecentDismissals == b.RecentDismissals &&
		fmt.Sprint(a.IrrelevantContexts) == fmt.Sprint(b.IrrelevantContexts) && a.Schedule.Due.Equal(b.Schedule.Due) &&
		a.Schedule.Reps == b.Schedule.Reps && slices.Equal(a.Concepts, b.Concepts) && slices.Equal(a.Embedding, b.Embedding)
}

// TestMigrationNoTime: a database written before 0009 kept "unset" as 0; after the
// migration those read back unset still, while a required time of 0 (the epoch) stays the
// epoch.
func TestMigrationNoTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	m := &models.Memory{ID: "m1", Namespace: "ns", Kind: models.KindFact, Content: "old row",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Confidence: 0.5}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}); err != nil {
		t.Fatal(err)
	}
	sf := &models.Surfacing{ID: "s1", Namespace: "ns", MemoryID: "m1", Mode: models.ModeAmbient, At: time.Unix(0, 0).UTC()}
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{sf}, nil); err != nil {
		t.Fatal(err)
	}
	// Rewind the rows and the migration log to what the old codec wrote.
	for _, q := range []string{
		`UPDATE memories SET valid_at = 0, last_used = 0`,
		`UPDATE surfacings SET outcome_at = 0`,
		`DELETE FROM migrations WHERE name = 'migrations/0009_no_time.sql'`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	got, err := s.GetMemory(ctx, "ns", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.ValidAt.IsZero() || !got.LastUsed.IsZero() || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Errorf("after 0009: valid_at %v, last_used %v, created_at %v; want unset, unset, %v", got.ValidAt, got.LastUsed, got.CreatedAt, m.CreatedAt)
	}
	gotSF, err := s.GetSurfacing(ctx, "ns", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !gotSF.OutcomeAt.IsZero() || !gotSF.At.Equal(time.Unix(0, 0)) || gotSF.At.IsZero() {
		t.Errorf("after 0009: outcome_at %v, at %v; want unset and the epoch", gotSF.OutcomeAt, gotSF.At)
	}
}
