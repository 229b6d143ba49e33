package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/salience-ai/salience/engagement"
)

// runRelearn runs `salience relearn`: it rebuilds a namespace's relevance model from the
// engagement log, replayed in sequence order from the prior, stores it, and prints how far
// the online model was from it. It opens the database of a data directory like `salience
// metrics`; that is safe while a server uses the same database: the rebuilt model is stored
// in one transaction only when no event was applied after the last one replayed
// (engagement.Service.Relearn), else the new events are replayed first.
func runRelearn(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("salience relearn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := declareDataFlags(fs)
	ns := fs.String("ns", "", "namespace (required)")
	fromKept := fs.Bool("from-kept", false, "rebuild even when prune-history deleted the oldest events: from the kept ones only, forgetting what the deleted ones taught")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salience relearn --ns NS [--data DIR | --store neo4j --neo4j-uri URI] [--from-kept]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("relearn: unexpected arguments %q", fs.Args())
	}
	if *ns == "" {
		fs.Usage()
		return errors.New("relearn: --ns is required")
	}
	st, err := data.open(ctx, fs, getenv)
	if err != nil {
		return fmt.Errorf("relearn: %w", err)
	}
	defer st.Close()
	r, err := engagement.NewService(st, engagement.ServiceOptions{}).Relearn(ctx, *ns, *fromKept)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "namespace %s: relevance model rebuilt from %d events (%d without their surfacing), version %d; largest weight difference from the online model %.3g\n",
		*ns, r.Events, r.Skipped, r.Version, r.MaxDiff)
	return err
}
