package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// runReembed runs `salience reembed --ns NS`: it re-embeds every memory of the namespaces
// with the configured embedder and records it (name and vector size) as theirs. On the
// embedded store it works on the database directly and refuses to run while a server holds
// it: a server's in-memory vector index would silently go stale (serve takes a shared lock on
// the data directory, reembed an exclusive one). On Neo4j (--store neo4j) it cannot see the
// servers on the database: the namespace takes the new embedder first, so a server still
// running with the old one is refused its writes, and the operator stops them first
// (neo4j.Store.Reembed).
func runReembed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("salience reembed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nsList string
	fs.StringVar(&nsList, "ns", "", "namespaces to re-embed, comma-separated (required)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory; the database is <data>/salience.db")
	embedderFlags(fs, &c)
	batch := fs.Int("batch", embed.DefaultBatchSize, "memories embedded and written per step")
	sc := StoreFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := ApplyEnv(fs, getenv); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
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
	if err := c.Validate(); err != nil {
		return err
	}
	if sc.Kind == StoreNeo4j {
		return reembedNeo4j(ctx, sc, &c, namespaces, *batch, stdout, stderr)
	}
	dbPath := filepath.Join(c.DataDir, DatabaseFile)
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("reembed: no database at %s: %w", dbPath, err)
	}
	unlock, err := lockData(c.DataDir)
	if errors.Is(err, errDataLocked) {
		return fmt.Errorf("reembed: a server is running on %s (it holds %s); stop it, re-embed, then start it with the new embedder", c.DataDir, lockPath(c.DataDir))
	}
	if err != nil {
		return err
	}
	defer unlock()
	emb, err := NewEmbedder(&c)
	if err != nil {
		return err
	}
	st, err := sqlite.Open(dbPath, sqlite.Options{Logger: Quiet()})
	if err != nil {
		return err
	}
	defer st.Close()
	return reembedAll(ctx, st, st.Reembed, emb, namespaces, *batch, stdout, stderr)
}

// reembedNeo4j is runReembed on a Neo4j store.
func reembedNeo4j(ctx context.Context, sc *StoreConfig, c *Config, namespaces []string, batch int, stdout, stderr io.Writer) error {
	emb, err := NewEmbedder(c)
	if err != nil {
		return err
	}
	st, err := neo4j.Open(ctx, neo4j.Options{URI: sc.Neo4jURI, User: sc.Neo4jUser, Password: sc.Neo4jPassword,
		Database: sc.Neo4jDatabase, Logger: Quiet()})
	if err != nil {
		return fmt.Errorf("reembed: opening Neo4j at %s: %w", sc.Neo4jURI, err)
	}
	defer st.Close()
	return reembedAll(ctx, st, st.Reembed, emb, namespaces, batch, stdout, stderr)
}

// reembedAll re-embeds each namespace through reembed (a store's Reembed) and reports it.
func reembedAll(ctx context.Context, st embedderStore,
	reembed func(ctx context.Context, ns string, to models.EmbedderIdentity, batch int, embed models.EmbedFunc, progress func(done, total int)) (int, error),
	emb embed.Embedder, namespaces []string, batch int, stdout, stderr io.Writer) error {
	before, err := st.Embedders(ctx)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		start := time.Now()
		last := time.Now()
		n, err := reembed(ctx, ns, embed.Identity(emb), batch, emb.Embed, func(done, total int) {
			if time.Since(last) >= 5*time.Second {
				fmt.Fprintf(stderr, "%s: %d/%d\n", ns, done, total)
				last = time.Now()
			}
		})
		if err != nil {
			return fmt.Errorf("reembed %s: after %d memories: %w", ns, n, err)
		}
		from := "no vectors"
		if b, ok := before[ns]; ok && b.Name != "" {
			from = fmt.Sprintf("%s, %d dims", b.Name, b.Dims)
		} else if ok {
			from = fmt.Sprintf("%d dims, embedder not recorded", b.Dims)
		}
		fmt.Fprintf(stdout, "re-embedded %d memories of %s with %s in %.1fs (%s → %s, %d dims)\n",
			n, ns, emb.Name(), time.Since(start).Seconds(), from, emb.Name(), emb.Dims())
	}
	return nil
}
