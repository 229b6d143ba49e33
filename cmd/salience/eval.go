package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// runEval runs `salience eval locomo [--data DIR]`: it ingests each conversation into a fresh
// embedded store through the real ingest path, asks every question through the real recall
// pipeline, and prints evidence recall@5/10/25 and hit@10 per category, the last line JSON.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "locomo" {
		return errors.New("usage: salience eval locomo [--data DIR] [--dims N]")
	}
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", defaultLocomo(), "directory of LoCoMo-format conversation files (*.json)")
	dims := fs.Int("dims", 0, "local embedder dimensions (0 = default)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	convs, err := eval.LoadDir(*data)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "salience-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "eval.db"), sqlite.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Rebuild(ctx); err != nil {
		return err
	}
	emb := embed.NewLocal(*dims)
	rep, err := eval.Run(ctx, ingest.New(st, emb), recall.New(st, emb, recall.Options{}), convs, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "LoCoMo evidence recall, %d conversations from %s\n", len(convs), *data)
	rep.Print(stdout)
	return nil
}

// defaultLocomo is the shared dev split beside the project, when it is there.
func defaultLocomo() string {
	return filepath.Join("..", "shared", "data", "locomo-dev")
}
