package app

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// fakeEmbedderStore holds namespaces' embedders in memory.
type fakeEmbedderStore struct {
	have     map[string]models.EmbedderIdentity
	recorded []string
}

func (f *fakeEmbedderStore) Embedders(context.Context) (map[string]models.EmbedderIdentity, error) {
	return maps.Clone(f.have), nil
}

func (f *fakeEmbedderStore) RecordEmbedder(_ context.Context, ns string, id models.EmbedderIdentity) error {
	f.recorded = append(f.recorded, ns)
	f.have[ns] = id
	return nil
}

// renamed is the lexical embedder under another name: another model of the same size, as
// the static table is (both 256 dimensions), without needing the table.
type renamed struct {
	*embed.Local
	name string
}

func (r renamed) Name() string { return r.name }

var fakeStatic = renamed{embed.NewLocal(0), "static-fake-256-v1"}

// defaultEmbedder is the embedder serve builds with no embedder flags, whichever it is.
func defaultEmbedder(t *testing.T) embed.Embedder {
	t.Helper()
	c := DefaultConfig()
	e, err := NewEmbedder(&c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// seedStore writes one memory per namespace into the embedded store at dir with emb, as a
// server with that embedder would.
func seedStore(t *testing.T, dir string, emb embed.Embedder, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(dir, DatabaseFile), sqlite.Options{Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ing := ingest.New(st, emb, ingest.Options{Now: func() time.Time { return time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) }})
	for _, ns := range namespaces {
		if _, err := ing.Ingest(ctx, ns, []*models.Memory{{Kind: models.KindFact, Content: "Nadia keeps her bees on the roof of the old cannery."}}); err != nil {
			t.Fatal(err)
		}
	}
}

func storeEmbedders(t *testing.T, dir string) map[string]models.EmbedderIdentity {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(dir, DatabaseFile), sqlite.Options{Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Embedders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestStartRefusesAnotherEmbedderOfTheSameSize: a namespace embedded by another model of the
// same size is refused at start, with the default and with an explicit --embedder, naming
// both; `salience reembed` moves it to the configured embedder and records it, and the
// server then starts and finds the memory by its new vector. (Checking sizes alone, as
// before, started this server over vectors it cannot compare with.)
func TestStartRefusesAnotherEmbedderOfTheSameSize(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, fakeStatic, "bees")
	def := defaultEmbedder(t)
	for _, tc := range []struct {
		flags []string
		emb   embed.Embedder
	}{{nil, def}, {[]string{"--embedder", "local"}, embed.NewLocal(0)}} {
		_, err := runMain(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, tc.flags...)...)
		want := fmt.Sprintf(`namespace "bees" holds vectors of static-fake-256-v1 (256 dimensions) but the configured embedder is %s (%d dimensions)`, tc.emb.Name(), tc.emb.Dims())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "salience reembed --ns bees --data "+dir) {
			t.Errorf("serve %q: %v, want a refusal %q with the reembed command", tc.flags, err, want)
		}
	}

	out, err := runMain(t, "reembed", "--ns", "bees", "--data", dir)
	if want := fmt.Sprintf("(static-fake-256-v1, 256 dims → %s, %d dims)", def.Name(), def.Dims()); err != nil || !strings.Contains(out, want) {
		t.Fatalf("reembed: %v, want %q in\n%s", err, want, out)
	}
	if got := storeEmbedders(t, dir); got["bees"] != embed.Identity(def) {
		t.Fatalf("embedder after reembed %v, want %v", got["bees"], embed.Identity(def))
	}
	s := startServer(t, dir)
	resp := s.recall("bees", api.RecallRequest{Mode: "search", Query: "where does Nadia keep her bees", Explain: true}, "")
	if len(resp.Results) != 1 || resp.Results[0].Components == nil || resp.Results[0].Components.Vector <= 0 {
		t.Fatalf("after reembed: %+v, want the memory found by its new vector", resp.Results)
	}
}

// TestLexicalDataDirectoryUpgrade: a data directory written before embedders were recorded
// (today's schema: the migration undone) opens with the default embedder, its namespaces are
// recorded as the lexical embedder that serves them, the namespace list shows it, and recall returns exactly what
// the same directory with nothing undone returns (same memories, order, relevance, text and
// vector scores; freshness and novelty move with the clock).
func TestLexicalDataDirectoryUpgrade(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--embedder", "local") // what the previous release's default was
	s.ingest("bees", `{"memories":[{"kind":"fact","content":"Nadia keeps her bees on the roof of the old cannery."},
		{"kind":"fact","content":"The cannery roof leaks when it rains hard."},
		{"kind":"fact","content":"Nadia prefers heather honey to clover honey."}]}`, "")
	s.ingest("light", `{"kind":"fact","content":"The lighthouse lamp needs a new mantle."}`, "")
	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}
	control := t.TempDir()
	copyFile(t, filepath.Join(dir, DatabaseFile), filepath.Join(control, DatabaseFile))

	// Undo the migration: the database as the previous release left it.
	db, err := sql.Open("sqlite", filepath.Join(dir, DatabaseFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE namespaces DROP COLUMN embedder`, `DELETE FROM migrations WHERE name = 'migrations/0013_namespace_embedder.sql'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := storeEmbedders(t, dir); got["bees"] != (models.EmbedderIdentity{Dims: 256}) {
		t.Fatalf("after the migration: %v, want bees unrecorded at 256 dims", got)
	}

	queries := []struct{ ns, q string }{{"bees", "where are the bees kept"}, {"bees", "which honey does Nadia like"}, {"light", "lamp mantle"}}
	recallAll := func(s *testServer) []string {
		var out []string
		for _, q := range queries {
			resp := s.recall(q.ns, api.RecallRequest{Mode: "search", Query: q.q, Explain: true}, "")
			for _, r := range resp.Results {
				c := r.Components
				out = append(out, fmt.Sprintf("%s/%s relevance %g bm25 %g vector %g", q.ns, r.ID, c.Relevance, c.BM25, c.Vector))
			}
		}
		return out
	}
	want := recallAll(startServer(t, control, "--embedder", "local"))
	s2 := startServer(t, dir) // the default, whichever it is: the lexical data decides
	if got := recallAll(s2); len(want) < 4 || !slices.Equal(got, want) {
		t.Errorf("recall after the upgrade:\n%q\nwant as the control:\n%q", got, want)
	}
	var nss api.NamespacesResponse
	s2.must("GET", "/v1/admin/namespaces", "", "", 200, &nss)
	lex := api.Embedder{Name: "local-hash-v1-256", Dims: 256}
	if !maps.Equal(nss.Embedders, map[string]api.Embedder{"bees": lex, "light": lex}) || nss.Embedder == nil || *nss.Embedder != lex {
		t.Errorf("namespaces %+v, want both recorded as %v and the server's %v", nss, lex, lex)
	}
	var m api.MetricsResponse
	s2.must("GET", "/v1/namespaces/bees/metrics", "", "", 200, &m)
	if m.Embedder == nil || *m.Embedder != lex {
		t.Errorf("metrics embedder %v, want %v", m.Embedder, lex)
	}
	if !strings.Contains(s2.logs.String(), "recorded the embedder of a namespace embedded before embedders were recorded") {
		t.Errorf("no log of the recorded embedders:\n%s", s2.logs)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultFollowsLexicalData: with a new default of another model (the static table) and
// no --embedder, a store of lexical namespaces — recorded or written before names were —
// is served by the lexical embedder, with a warning saying how to keep or leave it; named
// explicitly, the new embedder is refused naming both.
func TestDefaultFollowsLexicalData(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, embed.NewLocal(0), "bees")
	seedStore(t, dir, nil, "notes") // no vectors: no embedder to follow
	st, err := sqlite.Open(filepath.Join(dir, DatabaseFile), sqlite.Options{Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A namespace written before embedders were recorded.
	err = st.CreateMemories(context.Background(), []*models.MemoryWrite{{Memory: &models.Memory{ID: "o1", Namespace: "old", Kind: models.KindFact,
		Content: "x", CreatedAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), Embedding: make256()}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Store: StoreConfig{Kind: StoreSQLite}, DataDir: dir}

	_, err = resolveEmbedder(context.Background(), st, fakeStatic, c, true, Quiet())
	if want := `namespace "bees" holds vectors of local-hash-v1-256 (256 dimensions) but the configured embedder is static-fake-256-v1 (256 dimensions) (and 1 more namespaces: old)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("explicit static over lexical data: %v, want %q", err, want)
	}

	var logs bytes.Buffer
	emb, err := resolveEmbedder(context.Background(), st, fakeStatic, c, false, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || emb.Name() != "local-hash-v1-256" {
		t.Fatalf("default static over lexical data: %v, %v; want the lexical embedder", emb, err)
	}
	if !strings.Contains(logs.String(), "serving with the lexical embedder local-hash-v1-256, not the default static-fake-256-v1") {
		t.Errorf("no warning of the lexical embedder:\n%s", logs.String())
	}
	got, err := st.Embedders(context.Background())
	lex := embed.Identity(embed.NewLocal(0))
	if err != nil || !maps.Equal(got, map[string]models.EmbedderIdentity{"bees": lex, "old": lex}) {
		t.Errorf("Embedders after = %v, %v; want bees and old recorded lexical", got, err)
	}
}

// TestEmbedderFlagsFollowServe: eval and bench declare serve's embedder flags with serve's
// defaults, and read the environment like serve.
func TestEmbedderFlagsFollowServe(t *testing.T) {
	serve := DefaultConfig()
	sfs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serve.flagSet(sfs)
	c := DefaultConfig()
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	embedderFlags(fs, &c)
	for _, name := range embedFlagNames {
		f, sf := fs.Lookup(name), sfs.Lookup(name)
		if f == nil || f.DefValue != sf.DefValue || f.Usage != sf.Usage {
			t.Errorf("--%s: %+v, want serve's %+v", name, f, sf)
		}
	}
	if err := fs.Parse([]string{"--embed-dims", "64"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SALIENCE_EMBED_DIMS": "128", "SALIENCE_EMBEDDER": "local"}
	emb, err := FinishEmbedderFlags(fs, &c, func(k string) string { return env[k] })
	if err != nil || emb.Name() != "local-hash-v1-64" {
		t.Errorf("embedder %v, %v; want the flag's 64 dims over the environment's", emb, err)
	}
	c, fs = DefaultConfig(), flag.NewFlagSet("eval", flag.ContinueOnError)
	embedderFlags(fs, &c)
	env = map[string]string{"SALIENCE_EMBEDDER": "openai", "SALIENCE_EMBED_MODEL": "m", "SALIENCE_EMBED_DIMS": "8", "OPENAI_API_KEY": "k", "SALIENCE_EMBED_URL": "http://127.0.0.1:1/v1"}
	emb, err = FinishEmbedderFlags(fs, &c, func(k string) string { return env[k] })
	if err != nil || emb.Name() != "openai:m:8" || c.EmbedKey != "k" {
		t.Errorf("embedder %v, %v (key %q); want openai:m:8 from the environment", emb, err, c.EmbedKey)
	}
}

func make256() []float32 {
	v := make([]float32, 256)
	v[0] = 1
	return v
}
