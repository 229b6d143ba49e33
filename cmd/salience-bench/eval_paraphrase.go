package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/store/sqlite"
)

// runEvalParaphrase runs `salience-bench eval paraphrase`: the built-in paraphrase benchmark (facts
// and questions that share no content word, among small-talk turns) through the real ingest
// and recall pipeline on a fresh embedded store, with the embedder chosen as for serve. It
// prints how many facts came back in the top K for their question.
func runEvalParaphrase(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval paraphrase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	k := fs.Int("k", 3, "a fact counts as found when it is among the first K results")
	verbose := fs.Bool("v", false, "list the pairs whose fact was missed")
	c := app.DefaultConfig()
	fs.StringVar(&c.Embedder, "embedder", c.Embedder, "embedder: static, local or openai (as for serve)")
	fs.StringVar(&c.EmbedURL, "embed-url", c.EmbedURL, "openai embedder: API base URL including /v1 (empty: OpenAI)")
	fs.StringVar(&c.EmbedModel, "embed-model", c.EmbedModel, "openai embedder: model name")
	fs.IntVar(&c.EmbedDims, "embed-dims", c.EmbedDims, "vector size: the model's for openai (required); 0 means 256 for local")
	fs.StringVar(&c.EmbedKey, "embed-key", c.EmbedKey, "openai embedder: API key (env SALIENCE_EMBED_KEY or OPENAI_API_KEY)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := app.ApplyEnv(fs, getenv); err != nil {
		return err
	}
	if *k < 1 {
		return errors.New("eval paraphrase: --k must be at least 1")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	emb, err := app.NewEmbedder(&c)
	if err != nil {
		return err
	}
	set, err := eval.Paraphrases()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "salience-paraphrase-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "paraphrase.db"), sqlite.Options{Logger: app.Quiet()})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Rebuild(ctx); err != nil {
		return err
	}
	e := evalEngine(st, emb, nil)
	res, err := eval.Paraphrase(ctx, e.Ingest, e.Recall, set, *k)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "paraphrase recall, embedder %s: %d of %d facts in the top %d (%d turns)\n", emb.Name(), res.Found, res.Total, res.K, res.Turns)
	if *verbose {
		for _, p := range res.Missed {
			fmt.Fprintf(stdout, "  missed: %q for %q\n", p.Fact, p.Question)
		}
	}
	return nil
}
