package app

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/neo4j"
)

// runMain runs one command of the binary and returns its error and output.
func runMain(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, &out
	m.Getenv = func(string) string { return "" }
	if err := m.ParseFlags(context.Background(), args); err != nil {
		return out.String(), err
	}
	err := m.Run(context.Background())
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	return out.String(), err
}

func TestDimensionMismatchAtStartAndReembed(t *testing.T) {
	dir := t.TempDir()
	// The lexical embedder at two sizes: the static default has one size only.
	s := startServer(t, dir, "--embedder", "local", "--embed-dims", "64")
	s.ingest("bees", `{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."}`, "")
	s.ingest("other", `{"kind":"fact","content":"The lighthouse lamp needs a new mantle."}`, "")

	// While the server runs, reembed refuses: the server's vector index would go stale.
	if _, err := runMain(t, "reembed", "--ns", "bees", "--data", dir); err == nil || !strings.Contains(err.Error(), "a server is running on "+dir) {
		t.Fatalf("reembed beside a server: %v, want a refusal", err)
	}
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}

	// Started with another vector size, the server stops with an error naming both sizes
	// and the command.
	_, err := runMain(t, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--embedder", "local")
	if err == nil {
		t.Fatal("serve started over 64-dimension vectors with a 256-dimension embedder")
	}
	for _, want := range []string{
		`namespace "bees" holds vectors of local-hash-v1-64 (64 dimensions) but the configured embedder is local-hash-v1-256 (256 dimensions)`,
		"(and 1 more namespaces: other)",
		"salience reembed --ns bees --data " + dir,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("start-up error %q lacks %q", err, want)
		}
	}

	out, err := runMain(t, "reembed", "--ns", "bees, other", "--data", dir, "--embedder", "local")
	if err != nil {
		t.Fatalf("reembed: %v\n%s", err, out)
	}
	for _, want := range []string{"re-embedded 1 memories of bees with local-hash-v1-256", "(local-hash-v1-64, 64 dims → local-hash-v1-256, 256 dims)", "re-embedded 1 memories of other"} {
		if !strings.Contains(out, want) {
			t.Errorf("reembed output %q lacks %q", out, want)
		}
	}

	// Now the 256-dimension lexical embedder serves, and vector search finds the memory again.
	s2 := startServer(t, dir, "--embedder", "local")
	resp := s2.recall("bees", api.RecallRequest{Mode: "search", Query: "where does Nadia keep her bees", Explain: true}, "")
	if len(resp.Results) != 1 || resp.Results[0].Components == nil || resp.Results[0].Components.Vector <= 0 {
		t.Fatalf("after reembed: %+v, want the memory found by its new vector", resp.Results)
	}
}

func TestServeRefusesDuringReembed(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockData(dir) // what reembed holds while it runs
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := runMain(t, "serve", "--addr", "127.0.0.1:0", "--data", dir); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("serve during reembed: %v, want a refusal", err)
	}
}

func TestReembedUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reembed", "--data", dir}, "--ns is required"},
		{[]string{"reembed", "--ns", "a", "--data", dir}, "no database at"},
		{[]string{"reembed", "--ns", "a", "--data", dir, "--embedder", "openai"}, "--embedder openai needs --embed-model"},
		{[]string{"reembed", "--ns", "a", "--data", dir, "--batch", "0"}, "--batch must be positive"},
		{[]string{"reembed", "--ns", "a", "--store", "neo4j"}, "--store neo4j needs --neo4j-uri"},
		{[]string{"reembed", "--ns", "a", "--store", "neo4j", "--neo4j-uri", "bolt://127.0.0.1:1"}, "reembed: opening Neo4j at bolt://127.0.0.1:1"},
	} {
		if _, err := runMain(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestDimensionMismatchMessage checks that the start-up error tells each store what works:
// salience reembed with the embedded store's data directory, or with the Neo4j store's
// flags (never a reembed command that would open SQLite for a Neo4j store).
func TestDimensionMismatchMessage(t *testing.T) {
	l64 := embed.Identity(embed.NewLocal(64))
	have := map[string]models.EmbedderIdentity{"bees": l64, "other": l64, "fine": embed.Identity(embed.NewLocal(0))}
	emb := embed.NewLocal(0) // 256 dimensions
	for _, tc := range []struct {
		name      string
		sc        StoreConfig
		want, not []string
	}{
		{"sqlite", StoreConfig{Kind: StoreSQLite}, []string{"salience reembed --ns bees --data ./data"}, []string{"Neo4j"}},
		{"neo4j", StoreConfig{Kind: StoreNeo4j, Neo4jURI: "neo4j://db:7687"}, []string{
			"stop every server on this database first",
			"salience reembed --ns bees --store neo4j --neo4j-uri neo4j://db:7687",
			"start with the embedder that made them (lexical vectors: --embedder local --embed-dims 64)",
		}, []string{"--data"}},
	} {
		_, err := resolveEmbedder(context.Background(), &fakeEmbedderStore{have: have}, emb, &Config{Store: tc.sc, DataDir: "./data"}, true, Quiet())
		if err == nil {
			t.Fatalf("%s: no error for 64-dimension vectors and a 256-dimension embedder", tc.name)
		}
		msg := err.Error()
		for _, w := range append([]string{`namespace "bees" holds vectors of local-hash-v1-64 (64 dimensions) but the configured embedder is local-hash-v1-256 (256 dimensions)`, "(and 1 more namespaces: other)"}, tc.want...) {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(msg, n) {
				t.Errorf("%s: %q has %q", tc.name, msg, n)
			}
		}
	}
}

// TestNeo4jReembed: `salience reembed --store neo4j` re-embeds a Neo4j namespace written
// with a 64-dimension embedder with the 256-dimension lexical one, reports it as for the
// embedded store, records the new size (so a server with the new embedder starts) and the
// vector search finds the memories by their new vectors; another namespace keeps its own.
// It needs SALIENCE_NEO4J_URI (make test-neo4j) and deletes everything in that database.
func TestNeo4jReembed(t *testing.T) {
	uri := os.Getenv("SALIENCE_NEO4J_URI")
	if uri == "" {
		t.Skip("Neo4j reembed test skipped: SALIENCE_NEO4J_URI is not set; run `make test-neo4j`")
	}
	wipeNeo4j(t, uri)
	ctx := context.Background()
	st, err := neo4j.Open(ctx, neo4j.Options{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := embed.NewLocal(64)
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ing := ingest.New(st, old, ingest.Options{Now: func() time.Time { return now }})
	for ns, contents := range map[string][]string{
		"bees":  {"Nadia keeps her bees on the roof of the old cannery.", "The lighthouse lamp needs a new mantle."},
		"other": {"Marta bakes rye bread with caraway every Sunday."},
	} {
		var ms []*models.Memory
		for _, c := range contents {
			ms = append(ms, &models.Memory{Kind: models.KindFact, Content: c})
		}
		if _, err := ing.Ingest(ctx, ns, ms); err != nil {
			t.Fatal(err)
		}
	}
	neo4jConfig := &Config{Store: StoreConfig{Kind: StoreNeo4j, Neo4jURI: uri}}
	if _, err := resolveEmbedder(ctx, st, embed.NewLocal(0), neo4jConfig, true, Quiet()); err == nil ||
		!strings.Contains(err.Error(), "salience reembed --ns bees --store neo4j --neo4j-uri "+uri) {
		t.Fatalf("start-up check: %v, want the reembed command for Neo4j", err)
	}

	out, err := runMain(t, "reembed", "--ns", "bees", "--store", "neo4j", "--neo4j-uri", uri, "--embedder", "local")
	if err != nil {
		t.Fatalf("reembed: %v\n%s", err, out)
	}
	if want := "re-embedded 2 memories of bees with local-hash-v1-256"; !strings.Contains(out, want) || !strings.Contains(out, "(local-hash-v1-64, 64 dims → local-hash-v1-256, 256 dims)") {
		t.Fatalf("reembed output %q lacks %q and the sizes", out, want)
	}
	ids, err := st.Embedders(ctx)
	if err != nil || ids["bees"] != embed.Identity(embed.NewLocal(0)) || ids["other"] != embed.Identity(old) {
		t.Fatalf("Embedders after = %v, %v; want bees local-hash-v1-256, other local-hash-v1-64", ids, err)
	}
	q, err := embed.NewLocal(0).Embed(ctx, []string{"where does Nadia keep her bees"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := st.SearchVector(ctx, "bees", q[0], 2)
	if err != nil || len(hits) == 0 {
		t.Fatalf("SearchVector with the new embedder: %v, %v", hits, err)
	}
	m, err := st.GetMemory(ctx, "bees", hits[0].ID)
	if err != nil || !strings.Contains(m.Content, "Nadia") || len(m.Embedding) != 256 {
		t.Fatalf("best vector hit %+v, %v; want Nadia's memory with a 256-dimension vector", m, err)
	}
}
