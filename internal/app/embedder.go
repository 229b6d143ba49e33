package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
)

// The embedder a command runs with: serve resolves it against what the store's namespaces
// were embedded with (embed.Resolve); eval and bench take the same flags as serve.

// embedderStore is what resolving the embedder needs of a store (both stores have it).
type embedderStore interface {
	Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error)
	RecordEmbedder(ctx context.Context, ns string, id models.EmbedderIdentity) error
}

// resolveEmbedder returns the embedder that serves st: emb (built from c) when every
// namespace with vectors was embedded by it, or the lexical embedder when emb is the default
// (chosen false: neither --embedder nor SALIENCE_EMBEDDER given) and every namespace holds
// lexical vectors. It records the embedder of the namespaces written before embedders were
// recorded, and refuses a namespace of another embedder naming both and what fixes it.
func resolveEmbedder(ctx context.Context, st embedderStore, emb embed.Embedder, c *Config, chosen bool, logger *slog.Logger) (embed.Embedder, error) {
	stored, err := st.Embedders(ctx)
	if err != nil {
		return nil, err
	}
	lex := embed.NewLocal(c.EmbedDims)
	res, err := embed.Resolve(stored, embed.Identity(emb), chosen, embed.Identity(lex))
	if me := (*embed.MismatchError)(nil); errors.As(err, &me) {
		return nil, mismatchError(me, &c.Store, c.DataDir)
	}
	if err != nil {
		return nil, err
	}
	if res.Lexical {
		logger.Warn(fmt.Sprintf("serving with the lexical embedder %s, not the default %s: every namespace holds lexical vectors. "+
			"Pass --embedder local to keep it, or stop the server and run salience reembed to move the namespaces to %s",
			lex.Name(), emb.Name(), emb.Name()), "embedder", lex.Name(), "default", emb.Name())
		emb = lex
	}
	for _, ns := range slices.Sorted(maps.Keys(res.Record)) {
		if err := st.RecordEmbedder(ctx, ns, res.Record[ns]); err != nil {
			return nil, fmt.Errorf("recording the embedder of namespace %s: %w", ns, err)
		}
		logger.Info("recorded the embedder of a namespace embedded before embedders were recorded", "namespace", ns, "embedder", res.Record[ns].Name)
	}
	return emb, nil
}

// mismatchError adds to a refusal what fixes it: `salience reembed`, with the store's own
// flags for Neo4j (never a command that would open SQLite for a Neo4j store), or starting
// with the embedder that made the vectors.
func mismatchError(me *embed.MismatchError, sc *StoreConfig, dataDir string) error {
	ns := me.Namespaces[0]
	made := "the embedder that made them"
	if have := me.Stored[ns]; have.Name == "" || embed.IsLexical(have.Name) {
		made = fmt.Sprintf("the embedder that made them (lexical vectors: --embedder local --embed-dims %d)", have.Dims)
	}
	if sc.Kind == StoreNeo4j {
		return fmt.Errorf("%w; re-embed with the configured embedder (stop every server on this database first): "+
			"salience reembed --ns %s --store neo4j --neo4j-uri %s [the same --embedder/--embed-* flags], "+
			"or start with %s", me, ns, sc.Neo4jURI, made)
	}
	return fmt.Errorf("%w; re-embed with the configured embedder (stop the server first): salience reembed --ns %s --data %s [the same --embedder/--embed-* flags], "+
		"or start with %s", me, ns, dataDir, made)
}

// embedFlagNames are serve's embedder flags, which eval, bench and reembed take too.
var embedFlagNames = []string{"embedder", "embed-url", "embed-model", "embed-dims", "embed-key"}

// embedderFlags declares serve's embedder flags on fs — the same names, defaults and help,
// taken from Config.flagSet — bound to c's fields, so every command measures and writes with
// the embedder serve would use.
func embedderFlags(fs *flag.FlagSet, c *Config) {
	all := flag.NewFlagSet("", flag.ContinueOnError)
	c.flagSet(all)
	for _, name := range embedFlagNames {
		f := all.Lookup(name)
		fs.Var(f.Value, f.Name, f.Usage)
	}
}

// MeasureEmbedderFlags declares serve's embedder flags (embedderFlags) on an eval or bench
// command, and --dims, their older name for --embed-dims.
func MeasureEmbedderFlags(fs *flag.FlagSet) *Config {
	c := DefaultConfig()
	embedderFlags(fs, &c)
	fs.Var(fs.Lookup("embed-dims").Value, "dims", "the same as --embed-dims (its older name)")
	return &c
}

// CheckCorpusEmbedder refuses to measure a kept corpus (bench --data, or a Neo4j database)
// whose vectors another embedder made: queries of emb would be compared with them.
func CheckCorpusEmbedder(ctx context.Context, st embedderStore, emb embed.Embedder, where string) error {
	stored, err := st.Embedders(ctx)
	if err != nil {
		return err
	}
	if _, err := embed.Resolve(stored, embed.Identity(emb), true, embed.Identity(emb)); err != nil {
		return fmt.Errorf("the corpus in %s: %w; measure it with that embedder, or keep this one's corpus elsewhere", where, err)
	}
	return nil
}

// FinishEmbedderFlags applies the environment (SALIENCE_EMBEDDER…, OPENAI_API_KEY for the
// key) to the embedder flags not given, checks them as serve does and builds the embedder.
func FinishEmbedderFlags(fs *flag.FlagSet, c *Config, getenv func(string) string) (embed.Embedder, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, name := range embedFlagNames {
		if given[name] {
			continue
		}
		env, v := envName(name), getenv(envName(name))
		if v == "" && name == "embed-key" {
			env, v = "OPENAI_API_KEY", getenv("OPENAI_API_KEY")
		}
		if v == "" {
			continue
		}
		if err := fs.Set(name, v); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", env, v, err)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return NewEmbedder(c)
}

// flagGiven reports whether the flag was given on the command line or, after ApplyEnv, by
// its environment variable.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
