package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/neo4j"
	"github.com/salience-ai/salience/store/sqlite"
)

// errDataLocked is what lockData returns when another process holds the data directory.
var errDataLocked = errors.New("the data directory is in use")

func lockPath(dir string) string { return filepath.Join(dir, DatabaseFile+".lock") }

// checkDims compares the embedder's vector size with what each namespace in the store
// already holds, before anything is served: vectors of two sizes cannot be compared, and
// a mismatch would otherwise surface as every vector search failing. The error names both
// sizes and what fixes it: `salience reembed`, with the store's own flags for Neo4j, or the
// embedder that made the vectors.
func checkDims(have map[string]int, emb embed.Embedder, sc *StoreConfig, dataDir string) error {
	var bad []string
	for ns, d := range have {
		if d != emb.Dims() {
			bad = append(bad, ns)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	ns := bad[0]
	more := ""
	if len(bad) > 1 {
		more = fmt.Sprintf(" (and %d more namespaces: %s)", len(bad)-1, strings.Join(bad[1:], ", "))
	}
	mismatch := fmt.Sprintf("embedding size mismatch: namespace %q holds %d-dimension vectors but the embedder %s makes %d-dimension ones%s",
		ns, have[ns], emb.Name(), emb.Dims(), more)
	if sc.Kind == StoreNeo4j {
		return fmt.Errorf("%s; re-embed with the new embedder (stop every server on this database first): "+
			"salience reembed --ns %s --store neo4j --neo4j-uri %s [the same --embedder/--embed-* flags], "+
			"or start with the embedder that made them", mismatch, ns, sc.Neo4jURI)
	}
	return fmt.Errorf("%s; re-embed with the new embedder (stop the server first): salience reembed --ns %s --data %s [the same --embedder/--embed-* flags], "+
		"or start with the embedder that made them", mismatch, ns, dataDir)
}

// runReembed runs `salience reembed --ns NS`: it re-embeds every memory of the namespaces
// with the configured embedder and records the new vector size. On the embedded store it
// works on the database directly and refuses to run while a server holds it: a server's
// in-memory vector index would silently go stale (serve takes a shared lock on the data
// directory, reembed an exclusive one). On Neo4j (--store neo4j) it cannot see the servers
// on the database: the namespace takes the new size first, so a server still running with
// the old embedder is refused its writes and finds no vectors, and the operator stops them
// first (neo4j.Store.Reembed).
func runReembed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("salience reembed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nsList string
	fs.StringVar(&nsList, "ns", "", "namespaces to re-embed, comma-separated (required)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory; the database is <data>/salience.db")
	fs.StringVar(&c.Embedder, "embedder", c.Embedder, "embedder: static, local or openai (as for serve)")
	fs.StringVar(&c.EmbedURL, "embed-url", c.EmbedURL, "openai embedder: API base URL including /v1 (empty: OpenAI)")
	fs.StringVar(&c.EmbedModel, "embed-model", c.EmbedModel, "openai embedder: model name")
	fs.IntVar(&c.EmbedDims, "embed-dims", c.EmbedDims, "vector size: the model's for openai (required); 0 means 256 for local")
	fs.StringVar(&c.EmbedKey, "embed-key", c.EmbedKey, "openai embedder: API key (env SALIENCE_EMBED_KEY or OPENAI_API_KEY)")
	batch := fs.Int("batch", embed.DefaultBatchSize, "memories embedded and written per step")
	sc := storeFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := applyEnv(fs, getenv); err != nil {
		return err
	}
	if err := sc.validate(); err != nil {
		return err
	}
	var namespaces []string
	for _, ns := range strings.Split(nsList, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			namespaces = append(namespaces, ns)
		}
	}
	if len(namespaces) == 0 {
		return errors.New("reembed: --ns is required (comma-separated namespaces)")
	}
	if *batch < 1 {
		return fmt.Errorf("reembed: --batch must be positive, got %d", *batch)
	}
	if err := c.validate(); err != nil {
		return err
	}
	if sc.Kind == StoreNeo4j {
		return reembedNeo4j(ctx, sc, &c, namespaces, *batch, stdout, stderr)
	}
	dbPath := filepath.Join(c.DataDir, DatabaseFile)
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("reembed: no database at %s: %w", dbPath, err)
	}
	unlock, err := lockData(c.DataDir, true)
	if errors.Is(err, errDataLocked) {
		return fmt.Errorf("reembed: a server is running on %s (it holds %s); stop it, re-embed, then start it with the new embedder", c.DataDir, lockPath(c.DataDir))
	}
	if err != nil {
		return err
	}
	defer unlock()
	emb, err := newEmbedder(&c)
	if err != nil {
		return err
	}
	st, err := sqlite.Open(dbPath, sqlite.Options{Logger: quiet()})
	if err != nil {
		return err
	}
	defer st.Close()
	return reembedAll(ctx, st, st.Reembed, emb, namespaces, *batch, stdout, stderr)
}

// reembedNeo4j is runReembed on a Neo4j store.
func reembedNeo4j(ctx context.Context, sc *StoreConfig, c *Config, namespaces []string, batch int, stdout, stderr io.Writer) error {
	emb, err := newEmbedder(c)
	if err != nil {
		return err
	}
	st, err := neo4j.Open(ctx, neo4j.Options{URI: sc.Neo4jURI, User: sc.Neo4jUser, Password: sc.Neo4jPassword,
		Database: sc.Neo4jDatabase, Logger: quiet()})
	if err != nil {
		return fmt.Errorf("reembed: opening Neo4j at %s: %w", sc.Neo4jURI, err)
	}
	defer st.Close()
	return reembedAll(ctx, st, st.Reembed, emb, namespaces, batch, stdout, stderr)
}

// reembedAll re-embeds each namespace through reembed (a store's Reembed) and reports it.
func reembedAll(ctx context.Context, st interface {
	VectorDims(context.Context) (map[string]int, error)
}, reembed func(ctx context.Context, ns string, dims, batch int, embed models.EmbedFunc, progress func(done, total int)) (int, error),
	emb embed.Embedder, namespaces []string, batch int, stdout, stderr io.Writer) error {
	before, err := st.VectorDims(ctx)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		start := time.Now()
		last := time.Now()
		n, err := reembed(ctx, ns, emb.Dims(), batch, emb.Embed, func(done, total int) {
			if time.Since(last) >= 5*time.Second {
				fmt.Fprintf(stderr, "%s: %d/%d\n", ns, done, total)
				last = time.Now()
			}
		})
		if err != nil {
			return fmt.Errorf("reembed %s: after %d memories: %w", ns, n, err)
		}
		from := "no vectors"
		if d := before[ns]; d > 0 {
			from = fmt.Sprintf("%d dims", d)
		}
		fmt.Fprintf(stdout, "re-embedded %d memories of %s with %s in %.1fs (%s → %d dims)\n",
			n, ns, emb.Name(), time.Since(start).Seconds(), from, emb.Dims())
	}
	return nil
}
