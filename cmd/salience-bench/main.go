// Command salience-bench holds Salience's developer tools, kept out of the server binary:
// benchmarks (recall, engagement, ann, report, namespaces), the soak test, and the retrieval
// evaluations (eval locomo, bandit, predict, paraphrase). It builds its stores, embedders and
// servers through package internal/app, so what it measures is what `salience serve` runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: salience-bench <command> [flags]

benchmarks (salience-bench <name> -h for each one's flags):
  recall      recall latency on a synthetic corpus in an embedded (or Neo4j) store
  engagement  engagement ingest over HTTP against an in-process server
  ann         approximate vs exact vector search: recall@k and latency
  report      an experiment report's tally, statistics and HTML page over synthetic outcomes
  namespaces  many namespaces through an index budget vs all loaded
soak          mixed ingest, recall and engagement against a spawned salience serve
eval          retrieval evaluations: eval locomo, eval bandit, eval predict, eval paraphrase

Store and embedder flags are serve's (--store, --neo4j-*, --embedder, --embed-*), read from
the same SALIENCE_* environment; the LoCoMo directory is --locomo (SALIENCE_LOCOMO).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintln(os.Stderr, "salience-bench:", err)
		os.Exit(1)
	}
}

// run dispatches a command; tests call it as the binary does.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("which tool? (salience-bench recall, salience-bench eval locomo, salience-bench soak, …)")
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	case "eval":
		return runEval(ctx, args[1:], getenv, stdout, stderr)
	case "soak":
		return runSoak(ctx, args[1:], stdout, stderr)
	case "bench": // `salience-bench bench recall` reads as `salience-bench recall` did
		args = args[1:]
	}
	return runBench(ctx, args, stdout, stderr)
}
